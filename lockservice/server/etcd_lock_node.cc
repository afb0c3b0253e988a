#include "lockservice/server/etcd_lock_node.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/log.h"
#include "lockservice/server/lock_service.h"
#include "lockservice/server/standby_shadow.h"

namespace fencegate::lockservice {
namespace {

LeaderElection::Options ElectionOptions(const EtcdLockNodeOptions& options) {
  LeaderElection::Options election;
  election.key = EtcdLeaderKey(options.store.prefix);
  election.value = options.advertise;
  election.session_ttl = options.session_ttl;
  return election;
}

etcd::EtcdClientOptions EtcdOptions(const EtcdLockNodeOptions& options) {
  etcd::EtcdClientOptions client;
  client.endpoints = options.endpoints;
  client.credentials = options.etcd_credentials;
  return client;
}

}  // namespace

EtcdLockNode::EtcdLockNode(EtcdLockNodeOptions options, Clock* clock,
                           RoutingLockService* router,
                           absl::AnyInvocable<void(bool)> on_serving)
    : options_(std::move(options)),
      clock_(clock),
      router_(router),
      on_serving_(std::move(on_serving)),
      client_(EtcdOptions(options_)),
      fence_reader_(&client_, options_.store, LeaderGuard(), nullptr),
      standby_shadow_(MakeStandbyShadow(clock, options_.limits, options_.signer)),
      election_(&client_, clock, ElectionOptions(options_), this) {
  fence_reader_.EndTerm();
}

EtcdLockNode::~EtcdLockNode() { Stop(); }

void EtcdLockNode::Start() {
  router_->SetLocal(standby_shadow_);  // null: forward (see the header)
  ReportServing();
  election_.Start();
}

void EtcdLockNode::Stop() { election_.Stop(); }

std::shared_ptr<LockManager> EtcdLockNode::CurrentManager() {
  absl::MutexLock lock(&current_mu_);
  return current_;
}

absl::Status EtcdLockNode::StartTerm(const LeaderGuard& guard) {
  auto term = std::make_shared<Term>();
  term->store = std::make_unique<EtcdLockStore>(
      &client_, options_.store, guard,
      [election = &election_, revision = guard.create_revision](const absl::Status&) {
        election->StepDown(revision);
      });
  feeds_.push_back(std::make_unique<FenceFeed>());
  term->feed = feeds_.back().get();
  // Loads everything, re-arming each lease for its full TTL.
  absl::StatusOr<std::unique_ptr<LockManager>> manager = LockManager::Create(
      term->store.get(), clock_, options_.limits, term->feed, options_.manager_metrics);
  if (!manager.ok()) {
    term->feed->Close();
    return manager.status();
  }
  term->manager = *std::move(manager);
  std::shared_ptr<LockManager> shared(term, term->manager.get());
  router_->SetLeader("");
  leader_.clear();
  {
    absl::MutexLock lock(&current_mu_);
    current_ = shared;
  }
  router_->SetLocal(std::make_shared<LockServiceImpl>(
      std::move(shared), &fence_reader_, term->feed, options_.signer, options_.identity,
      options_.session_limits, options_.sessions, options_.fence_watchers,
      options_.observers));
  term_ = std::move(term);
  if (const LeadershipMetrics* m = options_.leadership_metrics) {
    m->terms_started->Increment();
    m->leader_changes->Increment();
    m->leader->Set(1);
    m->term->Set(guard.create_revision);
  }
  LogInfo("leading term %d: lock state loaded from etcd; serving", guard.create_revision);
  ReportServing();
  return absl::OkStatus();
}

void EtcdLockNode::EndTerm(LeaderElection::TermEnd why) {
  router_->SetLocal(standby_shadow_);  // null: forward (see the header)
  {
    absl::MutexLock lock(&current_mu_);
    current_.reset();
  }
  if (const LeadershipMetrics* m = options_.leadership_metrics) {
    m->leader->Set(0);
    m->term->Set(0);
    m->terms_ended[why == LeaderElection::TermEnd::kStopped ? LeadershipMetrics::kStopped
                   : why == LeaderElection::TermEnd::kSessionLost
                       ? LeadershipMetrics::kSessionLost
                       : LeadershipMetrics::kSteppedDown]
        ->Increment();
  }
  std::shared_ptr<Term> term = std::move(term_);
  if (term != nullptr) {
    // Parked Acquires: UNAVAILABLE, retry elsewhere. Session streams: end
    // with UNAVAILABLE once they answered what they read; reconnect.
    term->manager->Shutdown(absl::UnavailableError(absl::StrCat(
        "this lock-service instance's term as leader ended (",
        why == LeaderElection::TermEnd::kStopped       ? "it hands over"
        : why == LeaderElection::TermEnd::kSessionLost ? "its etcd session was lost"
                                                       : "a commit failed or was refused",
        "); retry, or reconnect a stream: another instance leads, with every committed "
        "lease")));
    if (why == LeaderElection::TermEnd::kStopped) {
      term->manager->Sync();  // a clean hand-over delivers what was decided
    }
    term->store->EndTerm();  // anything later fails at once
    term->feed->Close();     // its WatchFences streams reconnect elsewhere
  }
  // The term is destroyed by the last holder: here, or a parked call's
  // reactor that has not finished yet.
  term.reset();
  ReportServing();
}

void EtcdLockNode::LeaderChanged(const std::string& address) {
  // Our own address is a key left by an earlier term of this instance:
  // nobody to forward to until it expires.
  const std::string leader = address == options_.advertise ? "" : address;
  router_->SetLeader(leader);
  if (leader != leader_) {
    LogInfo("leader: %s", leader.empty() ? "none known" : leader);
    leader_ = leader;
    if (const LeadershipMetrics* m = options_.leadership_metrics) {
      m->leader_changes->Increment();
    }
  }
  ReportServing();
}

void EtcdLockNode::ReportServing() {
  if (on_serving_) on_serving_(router_->serving());
}

}  // namespace fencegate::lockservice
