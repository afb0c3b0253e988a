// FaultInjector's faults of the replicated topology (etcd-cluster): the
// lock-service leader paused past its session TTL with a commit in flight,
// kill -9 and SIGSTOP of etcd members, the loss of etcd's quorum, and the
// partitions (see fault_injector.h, schedule.h).
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "fencegate/client/lock_client.h"
#include "tests/torture/fault_injector.h"

namespace fencegate::torture {
namespace {

// How long a paused leader's successor has to appear: its session TTL, an
// election, and room for a busy machine.
constexpr absl::Duration kSuccessorTimeout = absl::Seconds(30);
// How long the successor has to grant the probe resource to the harness.
constexpr absl::Duration kSuccessorGrantTimeout = absl::Seconds(30);
// Past the rest of the pause, how long the paused leader has to answer the
// probe's Acquire once it resumes.
constexpr absl::Duration kPausedAnswerTimeout = absl::Seconds(30);
// How long the resumed leader has to log how its in-flight commit ended.
constexpr absl::Duration kVerdictTimeout = absl::Seconds(15);
// The longest a cut of the fence feed is held for the streams to end: the
// gateways' keep-alive (10 s, 5 s to answer) notices a silent lock service
// within 15 s.
constexpr absl::Duration kStreamEndTimeout = absl::Seconds(40);
// After the streams ended, before the probe and the heal.
constexpr absl::Duration kAfterStreamsEnd = absl::Milliseconds(500);
// What a gateway logs when its WatchFences stream ends (gateway/fence_follower.cc).
constexpr char kStreamEnded[] = "grant-time fencing: stream from ";
// What an etcd lock store logs when etcd refused a commit of an ended term.
constexpr char kCommitRefused[] = "the commit was refused: this instance no longer leads";

// The resource whose fence only the fence feed raises (no worker uses it).
constexpr char kFenceProbeResource[] = "torture-fence-probe";
// The resources of the paused leader's probes, one per pause (no worker
// uses them, and no gateway sees them).
constexpr char kPauseProbePrefix[] = "torture-pause-probe-";
// The harness's holder name in the history.
constexpr char kHarnessHolder[] = "torture-harness";

template <typename Condition>
bool PollFor(Condition condition, absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  return true;
}

int Occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

int IndexOf(const std::vector<ServerNode*>& nodes, const ServerNode* node) {
  auto it = std::find(nodes.begin(), nodes.end(), node);
  return it == nodes.end() ? -1 : static_cast<int>(it - nodes.begin());
}

}  // namespace

std::string FenceProbeResource() { return kFenceProbeResource; }

absl::StatusOr<FaultInjector::HarnessLease> FaultInjector::HarnessAcquire(
    const std::string& target, const std::string& resource, absl::Duration ttl,
    const client::ClientOptions& options) {
  absl::StatusOr<std::unique_ptr<client::LockClient>> lock =
      client::LockClient::Connect(target, options);
  if (!lock.ok()) return lock.status();
  client::AcquireOptions acquire;
  acquire.ttl = ttl;
  acquire.wait = absl::Seconds(5);
  const uint64_t op = history_->Invoke(
      "acquire", {{"resource", resource},
                  {"holder", kHarnessHolder},
                  {"ttl_ms", absl::StrCat(absl::ToInt64Milliseconds(ttl))}});
  absl::StatusOr<client::AcquireOutcome> got =
      (*lock)->Acquire(resource, kHarnessHolder, acquire);
  if (!got.ok() || !got->acquired) {
    history_->Complete(op, "acquire", got.ok() ? Outcome::kRefused : Outcome::kUnknown,
                       {{"error", got.ok() ? "not acquired" : got.status().ToString()}});
    return got.ok() ? absl::FailedPreconditionError("not acquired") : got.status();
  }
  history_->Complete(op, "acquire", Outcome::kOk, {{"token", absl::StrCat(got->token)}});
  return HarnessLease{*std::move(lock), resource, got->token, got->signature};
}

void FaultInjector::HarnessRelease(const HarnessLease& lease) {
  const uint64_t op = history_->Invoke(
      "release", {{"resource", lease.resource}, {"token", absl::StrCat(lease.token)}});
  absl::StatusOr<uint32_t> released =
      lease.client->Release(lease.resource, lease.token, "", lease.signature);
  history_->Complete(op, "release", released.ok() ? Outcome::kOk : Outcome::kUnknown, {});
}

std::string FaultInjector::PauseLeaderPastTtl(const Fault& fault, ServerNode& resolved) {
  (void)fault;
  const std::vector<ServerNode*> instances = cluster_->lockservices();
  const int pause = ++pause_probes_;
  // The commit in flight is the one that grants the probe resource, and
  // whose answer the harness waits for: a worker's grant in a stalled
  // commit may reach nobody (a standby re-sends a forwarded Acquire to the
  // next leader). Straight to the leader, in one attempt that outlasts the
  // pause: its answer is what the paused leader's commit came to.
  client::ClientOptions paused_options;
  paused_options.retry.max_attempts = 1;
  paused_options.rpc_timeout =
      reach_timeout_ + kSuccessorTimeout + kSuccessorGrantTimeout + kPausedAnswerTimeout;
  std::string probe;
  absl::StatusOr<HarnessLease> paused_grant = absl::UnknownError("not sent");
  std::atomic<bool> answered{false};
  std::thread paused_probe;
  ServerNode* stalled = nullptr;
  int probes_refused = 0;
  std::string first_refusal;
  // Other faults may leave no leader for a while, or end the probe's
  // attempt before its commit: each new attempt goes to the leader of the
  // moment, on a resource of its own (a second grant of one resource to
  // the harness would be reentrant, with no new token and so no stall).
  const absl::Time give_up = absl::Now() + reach_timeout_;
  for (int attempt = 1; stalled == nullptr; ++attempt) {
    int leader = -1;
    if (!PollFor(
            [&] {
              leader = cluster_->LockServiceLeaderNow();
              return leader >= 0;
            },
            give_up - absl::Now())) {
      break;
    }
    probe = absl::StrCat(kPauseProbePrefix, pause, "-", attempt);
    // The leader may change before the probe reaches it: every instance is
    // armed, and only the one that leads commits.
    for (ServerNode* s : instances) s->Arm("stall", "lock.before_token_commit", probe);
    answered = false;
    paused_probe = std::thread([&, target = instances[leader]->address(), probe] {
      paused_grant = HarnessAcquire(target, probe, absl::Seconds(10), paused_options);
      answered = true;
    });
    PollFor(
        [&] {
          for (ServerNode* s : instances) {
            if (s->FailpointReached()) stalled = s;
          }
          return stalled != nullptr || answered.load();
        },
        give_up - absl::Now());
    if (stalled != nullptr || absl::Now() >= give_up) break;
    paused_probe.join();
    if (paused_grant.ok()) break;  // granted without stalling: see below
    if (probes_refused++ == 0) first_refusal = paused_grant.status().ToString();
    absl::SleepFor(absl::Milliseconds(100));  // paces the attempts, under give_up
  }
  if (probes_refused > 0) {
    Log(absl::StrCat(probes_refused, " pause probe(s) not granted before ", probe,
                     "; the first: ", first_refusal));
  }
  for (ServerNode* s : instances) {
    if (s != stalled) s->Disarm();
  }
  if (stalled == nullptr) {
    if (paused_probe.joinable()) paused_probe.join();
    return absl::StrCat("no pause probe's grant reached the failpoint (the last: ",
                        paused_grant.ok() ? "granted" : paused_grant.status().ToString(),
                        ")");
  }
  if (stalled != &resolved)
    Log(absl::StrCat("the leader is ", stalled->name(), " by now"));
  ServerNode& leader = *stalled;
  const int index = IndexOf(instances, &leader);
  const size_t log_before = leader.ReadLog().size();
  absl::Status stopped = leader.Stop();
  if (!stopped.ok()) {
    leader.Disarm();
    paused_probe.join();
    return stopped.ToString();
  }
  int successor = -1;
  PollFor(
      [&] {
        successor = cluster_->LockServiceLeaderNow();
        return successor >= 0 && successor != index;
      },
      kSuccessorTimeout);
  const bool succeeded = successor >= 0 && successor != index;
  // The successor grants the same resource, knowing nothing of the paused
  // commit: if that commit went through, two leases overlap.
  std::string successor_grant = "no other instance took over";
  if (succeeded) {
    client::ClientOptions options;
    options.call_timeout = kSuccessorGrantTimeout;
    absl::StatusOr<HarnessLease> grant =
        HarnessAcquire(instances[successor]->address(), probe, absl::Seconds(1), options);
    successor_grant = absl::StrCat(
        "lockservice-", successor, " leads now and ",
        grant.ok()
            ? absl::StrCat("granted ", probe, " token ", grant->token)
            : absl::StrCat("did not grant ", probe, ": ", grant.status().ToString()));
    if (grant.ok()) HarnessRelease(*grant);
  }
  Log(absl::StrCat("paused leader ", leader.name(), " with the commit of ", probe,
                   "'s grant in flight; ", successor_grant, "; resuming it"));
  leader.Disarm();
  leader.Continue();
  paused_probe.join();
  Log(absl::StrCat(leader.name(), " answered the probe: ",
                   paused_grant.ok() ? absl::StrCat("granted token ", paused_grant->token)
                                     : paused_grant.status().ToString()));
  if (!succeeded) return "no other instance led while the leader was paused";
  Count(&FaultTally::leader_pauses_past_ttl);
  // The verdict on its in-flight commit, as it logged it: refused by the
  // term guard is what must happen; the checker judges what clients saw.
  const bool refused = PollFor(
      [&] {
        return absl::StrContains(leader.ReadLog().substr(log_before), kCommitRefused);
      },
      kVerdictTimeout);
  if (refused) Count(&FaultTally::leader_commits_refused);
  Log(absl::StrCat(
      leader.name(), "'s in-flight commit ",
      refused ? "was refused by the term guard" : "was not seen refused (see its log)"));
  return "";
}

absl::StatusOr<int> FaultInjector::EtcdMember(Role role) {
  testing::EtcdCluster* etcd = cluster_->etcd();
  absl::StatusOr<int> leader = etcd->Leader(reach_timeout_);
  if (!leader.ok()) return leader.status();
  return role == Role::kLeader ? *leader : (*leader + 1) % etcd->size();
}

std::string FaultInjector::EtcdFault(const Fault& fault) {
  testing::EtcdCluster* etcd = cluster_->etcd();
  absl::StatusOr<int> member = EtcdMember(fault.role);
  if (!member.ok()) return member.status().ToString();
  Log(absl::StrCat("etcd member ", *member,
                   fault.role == Role::kLeader ? " (the leader)" : ""));
  const bool leader = fault.role == Role::kLeader;
  if (fault.kind == FaultKind::kKillRestart) {
    absl::Status killed = etcd->Kill(*member);
    if (!killed.ok()) return killed.ToString();
    absl::SleepFor(fault.duration);
    absl::Status restarted = etcd->Restart(*member);
    if (!restarted.ok()) Error(absl::StrCat("restarting etcd: ", restarted.ToString()));
    Count(&FaultTally::etcd_kills);
    if (leader) Count(&FaultTally::etcd_leader_kills);
    return "";
  }
  if (fault.kind == FaultKind::kStopServer) {
    absl::Status paused = etcd->Pause(*member);
    if (!paused.ok()) return paused.ToString();
    absl::SleepFor(fault.duration);
    etcd->Resume(*member).IgnoreError();
    Count(&FaultTally::etcd_stops);
    if (leader) Count(&FaultTally::etcd_leader_stops);
    return "";
  }
  return "not a fault of an etcd member";
}

std::string FaultInjector::QuorumLoss(const Fault& fault) {
  testing::EtcdCluster* etcd = cluster_->etcd();
  absl::StatusOr<int> leader = EtcdMember(Role::kLeader);
  if (!leader.ok()) return leader.status().ToString();
  const int follower = (*leader + 1) % etcd->size();
  for (int member : {*leader, follower}) {
    absl::Status killed = etcd->Kill(member);
    if (!killed.ok()) return killed.ToString();
  }
  Log(absl::StrCat("etcd members ", *leader, " (the leader) and ", follower,
                   " killed: no quorum"));
  absl::SleepFor(fault.duration);
  absl::Status restarted = etcd->RestartMembers({*leader, follower});
  if (!restarted.ok()) Error(absl::StrCat("restarting etcd: ", restarted.ToString()));
  Count(&FaultTally::quorum_losses);
  return "";
}

absl::Status FaultInjector::PartitionSides(const Fault& fault, ServerNode* server,
                                           std::vector<std::string>* a,
                                           std::vector<std::string>* b,
                                           std::string* what) {
  const Topology& topology = schedule_.profile.topology;
  std::vector<std::string> etcd_hosts, lock_hosts;
  for (int i = 0; i < topology.etcd_members; ++i) etcd_hosts.push_back(EtcdHost(i));
  for (int i = 0; i < topology.lockservices; ++i)
    lock_hosts.push_back(LockServiceHost(i));
  switch (fault.partition) {
    case Partition::kLeaderFromEtcd: {
      const int leader = IndexOf(cluster_->lockservices(), server);
      if (leader < 0) return absl::InternalError("no lock-service leader resolved");
      *a = {LockServiceHost(leader)};
      *b = etcd_hosts;
      break;
    }
    case Partition::kIsolateEtcdMember: {
      absl::StatusOr<int> member = EtcdMember(fault.role);
      if (!member.ok()) return member.status();
      *a = {EtcdHost(*member)};
      for (const std::string& host :
           NetworkHostNames(topology, schedule_.profile.workers)) {
        if (host != (*a)[0]) b->push_back(host);
      }
      break;
    }
    case Partition::kEtcdSplitLeaderMinority: {
      absl::StatusOr<int> etcd_leader = EtcdMember(Role::kLeader);
      if (!etcd_leader.ok()) return etcd_leader.status();
      absl::StatusOr<int> lock_leader = cluster_->LockServiceLeader(reach_timeout_);
      if (!lock_leader.ok()) return lock_leader.status();
      *a = {EtcdHost(*etcd_leader), LockServiceHost(*lock_leader)};
      for (const std::vector<std::string>* hosts : {&etcd_hosts, &lock_hosts}) {
        for (const std::string& host : *hosts) {
          if (std::find(a->begin(), a->end(), host) == a->end()) b->push_back(host);
        }
      }
      break;
    }
    default:
      return absl::InternalError("not a partition between servers");
  }
  *what = absl::StrCat("{", absl::StrJoin(*a, ","), "} | {", absl::StrJoin(*b, ","), "}");
  return absl::OkStatus();
}

std::string FaultInjector::Cut(const Fault& fault, ServerNode* server) {
  if (fault.partition == Partition::kWorkerFromLockService) return WorkerCut(fault);
  if (fault.partition == Partition::kGatewaysFromLockService) return FenceFeedCut(fault);
  std::vector<std::string> a, b;
  std::string what;
  absl::Status sides = PartitionSides(fault, server, &a, &b, &what);
  if (!sides.ok()) return sides.ToString();
  const Links links = Between(a, b);
  absl::Status cut = cluster_->cuts()->Hold(links);
  if (!cut.ok()) return cut.ToString();
  Log(absl::StrCat("cut ", what));
  absl::SleepFor(fault.duration);
  absl::Status healed = cluster_->cuts()->Release(links);
  if (!healed.ok()) Error(absl::StrCat("healing ", what, ": ", healed.ToString()));
  Count(&FaultTally::partitions);
  switch (fault.partition) {
    case Partition::kLeaderFromEtcd:
      Count(&FaultTally::leader_cuts);
      break;
    case Partition::kIsolateEtcdMember:
      Count(&FaultTally::etcd_isolations);
      break;
    case Partition::kEtcdSplitLeaderMinority:
      Count(&FaultTally::etcd_splits);
      break;
    default:
      break;
  }
  return "";
}

std::string FaultInjector::WorkerCut(const Fault& fault) {
  WorkerProcess& worker = *workers_[fault.worker];
  absl::MutexLock episode(&worker.episode_mu);
  WorkerControl& control = worker.control();
  if (!PollFor([&] { return control.holding.load() == 1; }, reach_timeout_)) {
    return "the worker held no lease all that time";
  }
  const absl::Duration ttl = absl::Milliseconds(control.ttl_ms.load());
  std::vector<std::string> lock_hosts;
  for (int i = 0; i < schedule_.profile.topology.lockservices; ++i) {
    lock_hosts.push_back(LockServiceHost(i));
  }
  const Links links = Between({WorkerHost(fault.worker)}, lock_hosts);
  absl::Status cut = cluster_->cuts()->Hold(links);
  if (!cut.ok()) return cut.ToString();
  const absl::Duration hold = ttl * fault.ttl_factor;
  Log(absl::StrCat("cut ", worker.name(), " (holding token ", control.token.load(),
                   ", TTL ", absl::FormatDuration(ttl), ") from the lock service for ",
                   absl::FormatDuration(hold)));
  absl::SleepFor(hold);
  absl::Status healed = cluster_->cuts()->Release(links);
  if (!healed.ok()) Error(absl::StrCat("healing the worker's cut: ", healed.ToString()));
  Count(&FaultTally::partitions);
  Count(&FaultTally::worker_cuts);
  return "";
}

std::string FaultInjector::FenceFeedCut(const Fault& fault) {
  std::vector<std::string> gateway_hosts, lock_hosts;
  for (size_t i = 0; i < gateways_.size(); ++i) gateway_hosts.push_back(GatewayHost(i));
  for (int i = 0; i < schedule_.profile.topology.lockservices; ++i) {
    lock_hosts.push_back(LockServiceHost(i));
  }
  // Held until the streams end only where there are streams to end.
  const bool until_streams_end =
      fault.duration == absl::ZeroDuration() && schedule_.secure;
  std::vector<int> ended_before;
  for (ServerNode* gateway : gateways_) {
    ended_before.push_back(Occurrences(gateway->ReadLog(), kStreamEnded));
  }
  const Links links = Between(gateway_hosts, lock_hosts);
  absl::Status cut = cluster_->cuts()->Hold(links);
  if (!cut.ok()) return cut.ToString();
  Log("cut every gateway from every lockservice instance");
  std::string missed;
  if (until_streams_end) {
    const bool ended = PollFor(
        [&] {
          for (size_t i = 0; i < gateways_.size(); ++i) {
            if (Occurrences(gateways_[i]->ReadLog(), kStreamEnded) <= ended_before[i]) {
              return false;
            }
          }
          return true;
        },
        kStreamEndTimeout);
    if (!ended)
      missed = "the gateways' fence streams did not end while they were cut off";
    absl::SleepFor(kAfterStreamsEnd);
  } else {
    absl::SleepFor(fault.duration == absl::ZeroDuration() ? absl::Seconds(3)
                                                          : fault.duration / 2);
  }
  // A grant only the fence feed tells the gateways about: nobody writes
  // this resource. Its fence must reach the probe's token once they have
  // caught up (the checker's grant-time-fence-reaches-gateways).
  client::ClientOptions options;
  options.call_timeout = absl::Seconds(30);
  absl::StatusOr<HarnessLease> grant = HarnessAcquire(
      cluster_->lockservice_target(), kFenceProbeResource, absl::Seconds(10), options);
  if (grant.ok()) {
    Log(absl::StrCat("fence probe: granted token ", grant->token, " on ",
                     kFenceProbeResource));
    HarnessRelease(*grant);
  } else {
    Log(absl::StrCat("fence probe: not granted: ", grant.status().ToString()));
  }
  if (!until_streams_end && fault.duration > absl::ZeroDuration()) {
    absl::SleepFor(fault.duration / 2);
  }
  absl::Status healed = cluster_->cuts()->Release(links);
  if (!healed.ok())
    Error(absl::StrCat("healing the fence feed's cut: ", healed.ToString()));
  if (!missed.empty()) return missed;
  Count(&FaultTally::partitions);
  Count(&FaultTally::fence_feed_cuts);
  if (until_streams_end) Count(&FaultTally::fence_feed_cuts_past_streams);
  return "";
}

}  // namespace fencegate::torture
