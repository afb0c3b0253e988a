#include "tests/torture/schedule.h"

#include <algorithm>
#include <functional>
#include <random>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fencegate::torture {
namespace {

absl::Duration Between(std::mt19937_64& random, absl::Duration low, absl::Duration high) {
  return absl::Milliseconds(absl::Uniform<int64_t>(
      absl::IntervalClosed, random, absl::ToInt64Milliseconds(low),
      absl::ToInt64Milliseconds(high)));
}

std::string TargetName(const Schedule& schedule, const Fault& fault) {
  const char* role = fault.role == Role::kLeader ? " leader"
                     : fault.role == Role::kStandby
                         ? (fault.target == Target::kEtcd ? " follower" : " standby")
                         : "";
  switch (fault.target) {
    case Target::kLockService:
      return absl::StrCat("lockservice", role);
    case Target::kGateway:
      return GatewayName(schedule.profile.topology, fault.gateway);
    case Target::kWorker:
      return "worker";
    case Target::kEtcd:
      return absl::StrCat("etcd", role);
  }
  return "?";
}

std::string DescribePartition(const Schedule& schedule, const Fault& fault) {
  const std::string worker = absl::StrCat("w", fault.worker);
  switch (fault.partition) {
    case Partition::kNone:
      break;
    case Partition::kLeaderFromEtcd:
      return "cut the lockservice leader from every etcd member (not from its clients)";
    case Partition::kIsolateEtcdMember:
      return absl::StrCat("isolate the ", TargetName(schedule, fault),
                          " from every host");
    case Partition::kEtcdSplitLeaderMinority:
      return "split etcd 2/1, the etcd leader and the lockservice leader on the minority "
             "side";
    case Partition::kGatewaysFromLockService:
      return "cut every gateway from every lockservice instance (the fence feed)";
    case Partition::kWorkerFromLockService:
      return absl::StrCat(
          "cut ", worker,
          " while it holds a lease from every lockservice instance, not from "
          "its gateway");
  }
  return "?";
}

// Adds the faults of a replicated topology (ReplicatedFaults).
void AddReplicatedFaults(const ScheduleProfile& profile, std::mt19937_64& random,
                         const std::function<Fault&(FaultKind, Target)>& add) {
  const ReplicatedFaults& r = profile.replicated;
  for (int i = 0; i < r.leader_pauses_past_ttl; ++i) {
    add(FaultKind::kPauseLeaderPastTtl, Target::kLockService).role = Role::kLeader;
  }
  for (int i = 0; i < r.etcd_kill_restarts; ++i) {
    Fault& fault = add(FaultKind::kKillRestart, Target::kEtcd);
    fault.role = i % 2 == 0 ? Role::kLeader : Role::kStandby;
    fault.duration = Between(random, absl::ZeroDuration(), absl::Seconds(3));
  }
  for (int i = 0; i < r.etcd_stops; ++i) {
    Fault& fault = add(FaultKind::kStopServer, Target::kEtcd);
    fault.role = i % 2 == 0 ? Role::kLeader : Role::kStandby;
    fault.duration = Between(random, absl::Milliseconds(500), absl::Seconds(3));
  }
  for (int i = 0; i < r.etcd_quorum_losses; ++i) {
    add(FaultKind::kQuorumLoss, Target::kEtcd).duration =
        Between(random, absl::Seconds(1), absl::Seconds(4));
  }
  auto partition = [&](Partition which, Target target, absl::Duration low,
                       absl::Duration high) -> Fault& {
    Fault& fault = add(FaultKind::kPartition, target);
    fault.partition = which;
    fault.duration = Between(random, low, high);
    return fault;
  };
  for (int i = 0; i < r.leader_from_etcd; ++i) {
    partition(Partition::kLeaderFromEtcd, Target::kLockService, r.min_leader_cut,
              std::max(r.min_leader_cut, absl::Seconds(6)))
        .role = Role::kLeader;
  }
  for (int i = 0; i < r.etcd_member_isolations; ++i) {
    partition(Partition::kIsolateEtcdMember, Target::kEtcd, absl::Seconds(1),
              absl::Seconds(5))
        .role = absl::Bernoulli(random, 0.5) ? Role::kLeader : Role::kStandby;
  }
  for (int i = 0; i < r.etcd_splits; ++i) {
    partition(Partition::kEtcdSplitLeaderMinority, Target::kEtcd, absl::Seconds(2),
              absl::Seconds(6))
        .role = Role::kLeader;
  }
  for (int i = 0; i < r.fence_feed_cuts; ++i) {
    Fault& fault = partition(Partition::kGatewaysFromLockService, Target::kGateway,
                             absl::Seconds(1), absl::Seconds(5));
    fault.gateway = 0;  // its timeline; it cuts them all
    if (absl::Bernoulli(random, r.fence_feed_cuts_until_streams_end)) {
      fault.duration = absl::ZeroDuration();
    }
  }
  for (int i = 0; i < r.worker_cuts; ++i) {
    Fault& fault = add(FaultKind::kPartition, Target::kWorker);
    fault.partition = Partition::kWorkerFromLockService;
    fault.worker = absl::Uniform(random, 0, profile.workers);
    fault.ttl_factor = absl::Uniform(absl::IntervalClosed, random, 0.5, 5.0);
  }
}

}  // namespace

Schedule MakeSchedule(const ScheduleProfile& profile, uint64_t seed) {
  Schedule schedule;
  schedule.seed = seed;
  schedule.profile = profile;
  schedule.secure = profile.security == Security::kSecure ||
                    (profile.security == Security::kAlternate && seed % 2 == 1);
  std::mt19937_64 random(seed);
  // Faults fall after a second of warm-up and end two seconds before the
  // traffic does.
  const absl::Duration first = absl::Seconds(1);
  const absl::Duration last = std::max(profile.traffic - absl::Seconds(2), first);
  auto add = [&](FaultKind kind, Target target) -> Fault& {
    Fault& fault = schedule.faults.emplace_back();
    fault.kind = kind;
    fault.target = target;
    fault.at = Between(random, first, last);
    return fault;
  };

  // Pauses go to the workers in a shuffled order, so they spread out.
  std::vector<int> order(profile.workers);
  for (int i = 0; i < profile.workers; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), random);
  for (int i = 0; i < profile.holder_pauses + profile.pauses_before_write; ++i) {
    Fault& fault = add(i < profile.holder_pauses ? FaultKind::kPauseHolder
                                                 : FaultKind::kPauseBeforeWrite,
                       Target::kWorker);
    fault.worker = order[i % profile.workers];
    fault.ttl_factor = absl::Uniform(absl::IntervalClosed, random, 0.2, 5.0);
  }
  // Races take turns over the gateways; each one's stale writer is one of
  // the workers of its gateway (worker i talks to gateway i % gateways).
  // With one gateway the draws are exactly those of a single-gateway
  // schedule, so old seeds replay as they did.
  const int gateways = profile.topology.gateways;
  for (int i = 0; i < profile.stale_writer_races; ++i) {
    Fault& fault = add(FaultKind::kStaleWriterRace, Target::kGateway);
    fault.gateway = i % gateways;
    const int drawn = absl::Uniform(random, 0, profile.workers);
    fault.worker = drawn - drawn % gateways + fault.gateway;
    if (fault.worker >= profile.workers) fault.worker -= gateways;
    fault.release_by_operator =
        !schedule.secure && absl::Bernoulli(random, profile.release_by_operator);
  }
  const bool replicated = profile.topology.replicated();
  for (int server = -1; server < gateways; ++server) {  // -1: the lock service
    const Target target = server < 0 ? Target::kLockService : Target::kGateway;
    const ServerFaults& faults = server < 0 ? profile.lockservice : profile.gateway;
    // Replicated: the lock service's faults hit its leader, and kills and
    // stops a standby every other time. Roles draw nothing, so the other
    // topologies' schedules are what they were.
    auto add_server = [&](FaultKind kind, int turn = 0) -> Fault& {
      Fault& fault = add(kind, target);
      if (server >= 0) fault.gateway = server;
      if (server < 0 && replicated)
        fault.role = turn % 2 == 0 ? Role::kLeader : Role::kStandby;
      return fault;
    };
    for (int i = 0; i < faults.kill_restarts; ++i) {
      add_server(FaultKind::kKillRestart, i).duration =
          Between(random, absl::ZeroDuration(), absl::Seconds(2));
    }
    for (int i = 0; i < faults.stops; ++i) {
      add_server(FaultKind::kStopServer, i).duration =
          Between(random, absl::Milliseconds(500), absl::Seconds(3));
    }
    for (int i = 0; i < faults.failpoint_crashes && !faults.failpoints.empty(); ++i) {
      add_server(FaultKind::kFailpointCrash).failpoint =
          faults.failpoints[absl::Uniform<size_t>(random, 0, faults.failpoints.size())];
    }
    for (int i = 0; i < faults.clock_jumps; ++i) {
      Fault& fault = add_server(FaultKind::kClockJump);
      fault.clock_offset = Between(random, absl::Minutes(1), absl::Hours(24)) *
                           (absl::Uniform(random, 0, 2) == 0 ? -1 : 1);
      fault.duration = Between(random, absl::Milliseconds(500), absl::Seconds(2));
    }
    // Disk faults draw nothing when there are none, so the other profiles'
    // schedules are what they were.
    for (int i = 0; i < faults.disk_fulls; ++i) {
      add_server(FaultKind::kDiskFull).duration =
          Between(random, absl::Milliseconds(500), absl::Seconds(3));
    }
    for (int i = 0; i < faults.fsync_failures; ++i) add_server(FaultKind::kFsyncFailure);
    for (int i = 0; i < faults.write_failures; ++i) add_server(FaultKind::kWriteFailure);
  }
  if (replicated) AddReplicatedFaults(profile, random, add);
  // The workers' kills, and the SQL workers' pauses, last: they draw
  // nothing when there are none, so the other profiles' schedules are what
  // they were.
  for (int i = 0; i < profile.holder_kills; ++i) {
    add(FaultKind::kKillHolder, Target::kWorker).worker =
        absl::Uniform(random, 0, profile.workers);
  }
  for (int i = 0; i < profile.sql_holder_pauses + profile.sql_pauses_before_write; ++i) {
    Fault& fault = add(i < profile.sql_holder_pauses ? FaultKind::kPauseHolder
                                                     : FaultKind::kPauseBeforeWrite,
                       Target::kWorker);
    fault.worker = profile.workers + absl::Uniform(random, 0, profile.sql_workers);
    fault.ttl_factor = absl::Uniform(absl::IntervalClosed, random, 0.2, 5.0);
  }
  std::stable_sort(schedule.faults.begin(), schedule.faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
  return schedule;
}

std::string WorkerName(const ScheduleProfile& profile, int index) {
  if (index < profile.workers) return absl::StrCat("w", index);
  return absl::StrCat("sql", index - profile.workers);
}

std::string ResourceName(int index) { return absl::StrCat("hot-", index); }

std::string SemaphoreName() { return "semaphore"; }

std::string ElectionName() { return "election"; }

std::string GatewayName(const Topology& topology, int index) {
  return topology.gateways == 1 ? "gateway" : absl::StrCat("gateway-", index);
}

std::string LockServiceName(const Topology& topology, int index) {
  return topology.lockservices == 1 ? "lockservice" : absl::StrCat("lockservice-", index);
}

int PromisedFaults(const Schedule& schedule) {
  return static_cast<int>(schedule.faults.size());
}

std::string DescribeFault(const Schedule& schedule, const Fault& fault) {
  const std::string at = absl::StrFormat("+%.1fs", absl::ToDoubleSeconds(fault.at));
  const std::string worker = WorkerName(schedule.profile, fault.worker);
  switch (fault.kind) {
    case FaultKind::kPauseHolder:
      return absl::StrFormat("%s pause %s while it holds a lease, %.1fx its TTL", at, worker,
                             fault.ttl_factor);
    case FaultKind::kPauseBeforeWrite:
      return absl::StrFormat("%s pause %s between its lease check and its write, %.1fx its TTL",
                             at, worker, fault.ttl_factor);
    case FaultKind::kKillHolder:
      return absl::StrCat(at, " kill -9 ", worker,
                          " while it holds a lease, and start it again");
    case FaultKind::kStaleWriterRace:
      return absl::StrCat(at, " stale-writer race: a holder stopped before its write (",
                          worker, " or the next worker free",
                          schedule.profile.topology.gateways == 1
                              ? ""
                              : absl::StrCat(" of ", TargetName(schedule, fault)),
                          ") resumes it into the gateway commit its successor's fenced "
                          "read waits in",
                          fault.release_by_operator ? "; an operator releases its lease" : "");
    case FaultKind::kKillRestart:
      return absl::StrCat(at, " kill -9 the ", TargetName(schedule, fault), ", restart after ",
                          absl::FormatDuration(fault.duration));
    case FaultKind::kStopServer:
      return absl::StrCat(at, " SIGSTOP the ", TargetName(schedule, fault), " for ",
                          absl::FormatDuration(fault.duration));
    case FaultKind::kFailpointCrash:
      return absl::StrCat(at, " crash the ", TargetName(schedule, fault), " at failpoint ",
                          fault.failpoint);
    case FaultKind::kClockJump:
      return absl::StrCat(at, " the ", TargetName(schedule, fault), "'s wall clock jumps ",
                          fault.clock_offset < absl::ZeroDuration() ? "back " : "ahead ",
                          absl::FormatDuration(absl::AbsDuration(fault.clock_offset)), " for ",
                          absl::FormatDuration(fault.duration));
    case FaultKind::kDiskFull:
      return absl::StrCat(at, " the ", TargetName(schedule, fault),
                          "'s disk is full for ", absl::FormatDuration(fault.duration));
    case FaultKind::kFsyncFailure:
    case FaultKind::kWriteFailure:
      return absl::StrCat(at, " the ", TargetName(schedule, fault), "'s next ",
                          fault.kind == FaultKind::kFsyncFailure ? "fsync" : "write",
                          " fails (EIO); kill -9 if it goes on, power cut, restart");
    case FaultKind::kPauseLeaderPastTtl:
      return absl::StrCat(
          at,
          " SIGSTOP the lockservice leader with the commit of a probe lease's "
          "grant in flight, until another instance leads and granted it too; "
          "then SIGCONT");
    case FaultKind::kQuorumLoss:
      return absl::StrCat(
          at,
          " kill -9 the etcd leader and a follower (quorum lost), restart "
          "after ",
          absl::FormatDuration(fault.duration));
    case FaultKind::kPartition:
      return absl::StrCat(
          at, " ", DescribePartition(schedule, fault), ", ",
          fault.partition == Partition::kWorkerFromLockService
              ? absl::StrFormat("%.1fx its TTL", fault.ttl_factor)
          : fault.duration == absl::ZeroDuration()
              ? std::string("until the gateways' streams end")
              : absl::StrCat("for ", absl::FormatDuration(fault.duration)));
  }
  return at;
}

absl::StatusOr<ScheduleProfile> ProfileNamed(const std::string& name) {
  ScheduleProfile profile;
  profile.name = name;
  if (name == "default") return profile;
  if (name == "postgres-two-gateways") {
    // Workers split over two gateways on one PostgreSQL, on the default's
    // hot resources, so both gateways write the same rows; a race on each
    // gateway; PostgreSQL itself is never faulted.
    profile.topology = *TopologyNamed(name);
    profile.lockservice = ServerFaults{1, 0, 0, 0, {}};
    profile.gateway.clock_jumps = 0;
    // And two workers that write the same rows through SQL, fenced with
    // fencegate_fence, each paused once (at any moment or at the worst).
    profile.sql_workers = 2;
    profile.sql_holder_pauses = 1;
    profile.sql_pauses_before_write = 1;
    return profile;
  }
  if (name == "etcd-cluster") {
    // The replicated topology under everything: the workers' faults, the
    // two gateways' as on postgres-two-gateways, the lock service's on its
    // leader and a standby, etcd's, and the partitions.
    profile.topology = *TopologyNamed(name);
    profile.traffic = absl::Seconds(30);
    profile.holder_pauses = 2;
    profile.pauses_before_write = 2;
    profile.lockservice =
        ServerFaults{2, 2, 1, 1, {"lock.before_commit", "lock.after_commit"}};
    profile.gateway.clock_jumps = 0;
    return profile;
  }
  if (name == "etcd-quick") {
    // A smoke run of the replicated topology: one of each kind that only
    // it has, besides a pause and a race.
    profile.topology = *TopologyNamed("etcd-cluster");
    profile.traffic = absl::Seconds(20);
    profile.holder_pauses = 1;
    profile.pauses_before_write = 0;
    profile.stale_writer_races = 1;
    profile.lockservice = ServerFaults{2, 1, 1, 1, {"lock.before_commit"}};
    profile.gateway = ServerFaults{0, 0, 0, 0, {}};
    profile.replicated.etcd_kill_restarts = 1;
    profile.replicated.etcd_stops = 1;
    profile.replicated.etcd_quorum_losses = 1;
    return profile;
  }
  if (name == "etcd-kinds") {
    // The kinds of lock on the replicated topology: etcd-quick's faults
    // (the holds and waiters' kinds in etcd, across failovers and losses of
    // quorum) with the rounds of "kinds" below; torture.etcd_cluster.kinds.
    // No stale-writer race, as in "kinds" (etcd-quick's race is in
    // torture.etcd_cluster.smoke).
    profile = *ProfileNamed("etcd-quick");
    profile.name = name;
    profile.stale_writer_races = 0;
    profile.pauses_before_write = 1;
    profile.shared_rounds = 0.5;
    profile.permit_rounds = 0.15;
    profile.multi_rounds = 0.15;
    return profile;
  }
  if (name == "elections" || name == "etcd-elections") {
    // Eight candidates campaign for one election in most rounds (and
    // increment its counter with their term), the rest write the hot
    // resources; every worker observes the election. Leaders are paused
    // past their TTL (holder pauses, and at their worst moment, between
    // the term's check and its write and late Proclaim), and two holders
    // are killed (kill -9) and started again, among the servers' faults;
    // leaders resign or release at random. No stale-writer races, as
    // in "kinds". On etcd: etcd-quick's faults, Observe streams forwarded
    // by the standbys (not in CI: ./scripts/torture).
    if (name == "etcd-elections") {
      profile = *ProfileNamed("etcd-quick");
      profile.name = name;
    }
    profile.workers = 8;
    profile.resources = 2;
    profile.elect_rounds = 0.7;
    profile.holder_kills = 2;
    profile.holder_pauses = 3;
    profile.pauses_before_write = 3;
    profile.stale_writer_races = 0;
    return profile;
  }
  if (name == "kinds") {
    // Half the rounds read with a shared lease, pausing between their two
    // reads; some take a permit or two resources at once. No stale-writer
    // races: a race resumes a worker stopped before its write to meet its
    // successor's read in a stalled commit, and a worker stopped at its
    // worst moment here is as often a reader or a permit holder.
    profile.workers = 8;
    profile.shared_rounds = 0.5;
    profile.permit_rounds = 0.15;
    profile.multi_rounds = 0.15;
    profile.stale_writer_races = 0;
    return profile;
  }
  if (name == "disk-faults") {
    // Both servers on a failing disk among the holders' faults: every kill
    // and crash is a power cut too (server_node.h).
    profile.disk_faults = true;
    profile.traffic = absl::Seconds(14);
    profile.holder_pauses = 1;
    profile.pauses_before_write = 1;
    profile.stale_writer_races = 1;
    for (ServerFaults* faults : {&profile.lockservice, &profile.gateway}) {
      faults->stops = 0;
      faults->clock_jumps = 0;
      faults->disk_fulls = 1;
      faults->fsync_failures = 1;
      faults->write_failures = 1;
    }
    return profile;
  }
  if (name == "quick") {
    profile.traffic = absl::Seconds(8);
    profile.holder_pauses = 1;
    profile.pauses_before_write = 1;
    profile.stale_writer_races = 1;
    return profile;
  }
  // The rest aim at one fault each, with no other faults around it, on the
  // plain fencing the planted bugs break (grant-time fencing would hide
  // some of them).
  profile.security = Security::kPlain;
  profile.traffic = absl::Seconds(10);
  profile.holder_pauses = 0;
  profile.pauses_before_write = 0;
  profile.stale_writer_races = 0;
  profile.lockservice = ServerFaults{0, 0, 0, 0, {}};
  profile.gateway = ServerFaults{0, 0, 0, 0, {}};
  if (name == "races") {
    // One hot resource, so the successor's token is the next one.
    profile.resources = 1;
    profile.traffic = absl::Seconds(12);
    profile.max_ttl = absl::Seconds(2);
    profile.stale_writer_races = 3;
    profile.release_by_operator = 1;
    return profile;
  }
  if (name == "elections-paused-leaders") {
    // Leaders paused at their worst moment past their TTL, with no other
    // fault: each resumes to a late Proclaim with its old term while a
    // successor leads; the schedules of the election's planted bug.
    profile.workers = 8;
    profile.resources = 1;
    profile.traffic = absl::Seconds(12);
    profile.max_ttl = absl::Seconds(2);
    profile.elect_rounds = 0.9;
    profile.pauses_before_write = 4;
    return profile;
  }
  if (name == "kinds-contention") {
    // Eight workers on four hot resources and a semaphore of 2, every kind
    // of round, no faults: a shared lease beside an exclusive one, a
    // permit past N or a partial multi-resource grant shows at once. (On
    // two resources their queues are seldom empty, and a multi-resource
    // try-lock then rarely finds its first resource free and its second
    // taken, the partial grant's moment.)
    profile.workers = 8;
    profile.resources = 4;
    profile.traffic = absl::Seconds(8);
    profile.shared_rounds = 0.4;
    profile.permit_rounds = 0.25;
    profile.multi_rounds = 0.25;
    return profile;
  }
  if (name == "kinds-paused-readers") {
    // Readers paused at their worst moment, past their TTL, between their
    // two reads, while writers go on: the second read must be refused.
    profile.workers = 6;
    profile.resources = 2;
    profile.traffic = absl::Seconds(12);
    profile.max_ttl = absl::Seconds(2);
    profile.shared_rounds = 0.6;
    profile.pauses_before_write = 4;
    return profile;
  }
  if (name == "sql-pauses") {
    // SQL workers paused at the worst moment, on one hot resource that two
    // gateway workers and the other SQL worker keep incrementing: a paused
    // holder's late write meets its successor's fence in PostgreSQL.
    profile.topology = *TopologyNamed("postgres-two-gateways");
    profile.workers = 2;
    profile.sql_workers = 2;
    profile.resources = 1;
    profile.max_ttl = absl::Seconds(2);
    profile.sql_pauses_before_write = 3;
    return profile;
  }
  if (name == "lock-crashes") {
    // More resources than workers: after a crash some are free at once, so
    // new grants follow the restart without waiting for restored leases.
    profile.workers = 12;
    profile.resources = 16;
    profile.traffic = absl::Seconds(14);
    profile.lockservice.failpoint_crashes = 6;
    profile.lockservice.failpoints = {"lock.before_commit"};
    return profile;
  }
  if (name == "lock-restarts") {
    profile.resources = 2;
    profile.lockservice.kill_restarts = 3;
    return profile;
  }
  if (name == "disk-fsync") {
    // Failed fsyncs alone, each followed by a power cut: a server that
    // acknowledged past one loses that write, and hands its tokens out again.
    profile.disk_faults = true;
    profile.traffic = absl::Seconds(10);
    profile.lockservice.fsync_failures = 2;
    profile.gateway.fsync_failures = 2;
    return profile;
  }
  if (name == "gateway-restart") {
    profile.traffic = absl::Seconds(8);
    profile.gateway.kill_restarts = 1;
    return profile;
  }
  // The etcd planted bugs' schedules: the replicated topology with one
  // kind of fault.
  profile.topology = *TopologyNamed("etcd-cluster");
  profile.replicated = ReplicatedFaults{0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  if (name == "etcd-leader-partitions") {
    // The leader cut from etcd, long past its session TTL, twice.
    profile.traffic = absl::Seconds(20);
    profile.replicated.leader_from_etcd = 2;
    profile.replicated.min_leader_cut = absl::Seconds(5);
    return profile;
  }
  if (name == "etcd-leader-pauses") {
    profile.traffic = absl::Seconds(16);
    profile.replicated.leader_pauses_past_ttl = 2;
    return profile;
  }
  if (name == "etcd-standbys") {
    // No fault: the standbys serve the workers that talk to them.
    profile.traffic = absl::Seconds(8);
    return profile;
  }
  if (name == "etcd-fence-feed-cuts") {
    // Grant-time fencing, and two cuts of the fence feed, each held until
    // the gateways' streams ended.
    profile.security = Security::kSecure;
    profile.traffic = absl::Seconds(20);
    profile.replicated.fence_feed_cuts = 2;
    profile.replicated.fence_feed_cuts_until_streams_end = 1;
    return profile;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown --profile '", name,
      "'; one of: default, quick, races, lock-crashes, lock-restarts, gateway-restart, "
      "disk-faults, disk-fsync, elections, elections-paused-leaders, etcd-elections, "
      "postgres-two-gateways, sql-pauses, kinds, kinds-contention, kinds-paused-readers, "
      "etcd-cluster, etcd-quick, etcd-kinds, etcd-leader-partitions, etcd-leader-pauses, "
      "etcd-standbys, etcd-fence-feed-cuts"));
}

absl::StatusOr<Topology> TopologyNamed(const std::string& name) {
  if (name == "sqlite") return Topology();
  if (name == "postgres-two-gateways") {
    // Past the longest a gateway can hold a request: a race's stall (its
    // waits add up to about a minute at most), or a row another gateway
    // holds (at most PostgreSQL's idle_in_transaction_session_timeout, 30 s,
    // gateway/postgres/postgres_storage.h).
    return Topology{name, 2, GatewayStorage::kPostgres, absl::Seconds(120)};
  }
  if (name == "etcd-cluster") {
    // The gateways as on postgres-two-gateways; three instances of the lock
    // service on three etcd members.
    Topology topology{name, 2, GatewayStorage::kPostgres, absl::Seconds(120)};
    topology.lockservices = 3;
    topology.etcd_members = 3;
    topology.reach_timeout = absl::Seconds(60);
    return topology;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --topology '", name,
                   "'; one of: sqlite, postgres-two-gateways, etcd-cluster"));
}

}  // namespace fencegate::torture
