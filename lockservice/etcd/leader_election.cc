#include "lockservice/etcd/leader_election.h"

#include <pthread.h>

#include <memory>
#include <utility>

#include "absl/time/clock.h"
#include "common/base/log.h"
#include "common/test_hooks/test_hooks.h"

namespace fencegate::lockservice {
namespace {

using etcdserverpb::Compare;

// After a failed etcd call, before the next try.
constexpr absl::Duration kRetryPause = absl::Milliseconds(200);
// A standby's watch is renewed this often, so a member that silently went
// away (a frozen process keeps its connections open) is noticed soon.
constexpr absl::Duration kWatchRefresh = absl::Seconds(10);
// How long a leader that steps down tries to revoke its lease.
constexpr absl::Duration kRevokeTimeout = absl::Seconds(2);

}  // namespace

LeaderElection::LeaderElection(etcd::EtcdClient* client, Clock* clock,
                               Options options, Delegate* delegate)
    : client_(client), clock_(clock), options_(std::move(options)), delegate_(delegate) {}

LeaderElection::~LeaderElection() { Stop(); }

void LeaderElection::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "fg-election");
    Run();
  });
}

void LeaderElection::StepDown(int64_t create_revision) {
  absl::MutexLock lock(&mu_);
  if (term_revision_ == create_revision) step_down_ = true;
}

void LeaderElection::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (watch_ != nullptr) watch_->Cancel();
  }
  wake_.Notify();
  if (thread_.joinable()) thread_.join();
}

void LeaderElection::OnSessionLost() {
  {
    absl::MutexLock lock(&mu_);
    if (term_revision_ != 0 && FENCEGATE_PLANTED_BUG("lock_leader_grants_without_session")) return;  // test builds only
    session_lost_ = true;
    if (watch_ != nullptr) watch_->Cancel();
  }
  wake_.Notify();
}

void LeaderElection::Pause(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  wake_.WaitFor(&mu_, absl::Condition(this, &LeaderElection::Interrupted), d);
}

void LeaderElection::Run() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      session_lost_ = false;
    }
    absl::StatusOr<std::unique_ptr<EtcdSession>> session =
        EtcdSession::Start(client_, clock_, options_.session_ttl, options_.etcd_timeout,
                           [this] { OnSessionLost(); });
    if (!session.ok()) {
      LogWarning("leader election: cannot start an etcd session: %s",
                 session.status().ToString());
      Pause(kRetryPause);
      continue;
    }
    RunSession(**session);
    // Deletes the leader key if this session held it, so the next leader
    // need not wait for the lease to expire.
    (*session)->Revoke(kRevokeTimeout);
  }
}

void LeaderElection::RunSession(EtcdSession& session) {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (Interrupted()) return;
    }
    Campaign campaign = TryCampaign(session);
    switch (campaign.outcome) {
      case Outcome::kWon:
        Lead(campaign.guard);
        return;  // a new term takes a new session
      case Outcome::kOtherLeads:
        delegate_->LeaderChanged(campaign.leader);
        WatchLeader(campaign.read_revision);
        break;
      case Outcome::kRetry:
        Pause(kRetryPause);
        break;
    }
  }
}

LeaderElection::Campaign LeaderElection::TryCampaign(EtcdSession& session) {
  etcdserverpb::TxnRequest txn;
  Compare* absent = txn.add_compare();
  absent->set_key(options_.key);
  absent->set_target(Compare::CREATE);
  absent->set_result(Compare::EQUAL);
  absent->set_create_revision(0);
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(options_.key);
  put->set_value(options_.value);
  put->set_lease(session.lease_id());
  txn.add_failure()->mutable_request_range()->set_key(options_.key);

  Campaign campaign;
  absl::StatusOr<etcdserverpb::TxnResponse> response =
      client_->Txn(txn, absl::Now() + options_.etcd_timeout);
  if (!response.ok()) {
    LogWarning("leader election: campaign failed: %s", response.status().ToString());
    return campaign;
  }
  campaign.guard.key = options_.key;
  campaign.guard.lease_id = session.lease_id();
  if (response->succeeded()) {
    campaign.outcome = Outcome::kWon;
    campaign.guard.create_revision = response->header().revision();
    return campaign;
  }
  const auto& kvs = response->responses(0).response_range().kvs();
  if (kvs.empty()) return campaign;  // deleted in between: try again
  if (kvs[0].lease() == session.lease_id()) {
    // An earlier attempt of this txn created it, and its answer was lost.
    campaign.outcome = Outcome::kWon;
    campaign.guard.create_revision = kvs[0].create_revision();
    return campaign;
  }
  campaign.outcome = Outcome::kOtherLeads;
  campaign.leader = kvs[0].value();
  campaign.read_revision = response->header().revision();
  return campaign;
}

void LeaderElection::Lead(const LeaderGuard& guard) {
  LogInfo("leader election: this instance leads (%s, create revision %d)",
          options_.value, guard.create_revision);
  {
    absl::MutexLock lock(&mu_);
    term_revision_ = guard.create_revision;
    step_down_ = false;
  }
  absl::Status started = delegate_->StartTerm(guard);
  TermEnd why = TermEnd::kStopped;
  if (started.ok()) {
    absl::MutexLock lock(&mu_);
    auto over = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || session_lost_ || step_down_;
    };
    mu_.Await(absl::Condition(&over));
    why = stopping_ ? TermEnd::kStopped
                    : session_lost_ ? TermEnd::kSessionLost : TermEnd::kSteppedDown;
  } else {
    LogError("leader election: could not start serving as leader: %s",
             started.ToString());
  }
  {
    absl::MutexLock lock(&mu_);
    term_revision_ = 0;
  }
  if (started.ok()) {
    LogInfo("leader election: term %d ends (%s)", guard.create_revision,
            why == TermEnd::kStopped       ? "shutting down"
            : why == TermEnd::kSessionLost ? "etcd lease not provably alive"
                                           : "a commit failed or was refused");
    delegate_->EndTerm(why);
  } else {
    Pause(kRetryPause);
  }
}

void LeaderElection::WatchLeader(int64_t after_revision) {
  etcdserverpb::WatchCreateRequest request;
  request.set_key(options_.key);
  request.set_start_revision(after_revision + 1);
  const absl::Time now = absl::Now();
  absl::StatusOr<std::unique_ptr<etcd::EtcdClient::Watch>> watch =
      client_->StartWatch(request, now + options_.etcd_timeout, now + kWatchRefresh);
  if (!watch.ok()) {
    LogWarning("leader election: cannot watch the leader key: %s",
               watch.status().ToString());
    Pause(kRetryPause);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (Interrupted()) return;
    watch_ = watch->get();
  }
  for (bool leader_gone = false; !leader_gone;) {
    absl::StatusOr<etcdserverpb::WatchResponse> response = (*watch)->Next();
    if (!response.ok() || response->canceled()) break;  // re-read, re-watch
    for (const mvccpb::Event& event : response->events()) {
      if (event.type() == mvccpb::Event::DELETE) {
        delegate_->LeaderChanged("");
        leader_gone = true;
        break;
      }
      delegate_->LeaderChanged(event.kv().value());
    }
  }
  absl::MutexLock lock(&mu_);
  watch_ = nullptr;
}

}  // namespace fencegate::lockservice
