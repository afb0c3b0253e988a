// EtcdLockNode: one fencegate-lockservice instance of a replicated
// deployment on etcd (--store=etcd://...). It campaigns for leadership
// (leader_election.h). For each term it wins it loads the whole lock state
// from etcd into a fresh LockManager over an EtcdLockStore fenced by that
// term (every lease held for its full TTL again: the "delay restart" rule)
// and serves through it. Otherwise it forwards every call to the leader.
// Its RoutingLockService gets each role change; `on_serving` learns whether
// the instance can serve (leads, or knows a leader), for the health service.
//
// A term ends when its etcd lease cannot be proven alive, when a commit of
// it fails or is refused (the store asks the election to step down), or on
// Stop(). The manager of the ended term refuses everything with
// UNAVAILABLE and ends its parked Acquires the same way; their clients
// retry and reach the next leader. Its Session streams answer what they
// read and end with UNAVAILABLE; their clients reconnect, and renew their
// leases (which the next leader holds for a full TTL) on the new stream. Its FenceFeed
// closes, which ends the WatchFences streams served in the term (UNAVAILABLE): their
// gateways reconnect and catch up from etcd, where every term's positions are.
//
// Thread safety: Start() and Stop() from one thread; everything else runs
// on the election's thread. Ownership: `clock` and `router` must outlive
// the node; `on_serving` must stay callable until Stop() returns.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_ETCD_LOCK_NODE_H_
#define FENCEGATE_LOCKSERVICE_SERVER_ETCD_LOCK_NODE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "common/core/token_signer.h"
#include "fencegate/clock.h"
#include "lockservice/core/fence_feed.h"
#include "lockservice/core/lock_limits.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_metrics.h"
#include "lockservice/etcd/etcd_client.h"
#include "lockservice/etcd/etcd_lock_store.h"
#include "lockservice/etcd/leader_election.h"
#include "lockservice/server/lock_service.h"
#include "lockservice/server/routing_lock_service.h"

namespace fencegate::lockservice {

struct EtcdLockNodeOptions {
  std::vector<std::string> endpoints;  // etcd members, host:port
  std::string advertise;               // this instance's address, for the others
  absl::Duration session_ttl = absl::Seconds(5);
  EtcdLockStoreOptions store;
  LockLimits limits;
  StreamLimits session_limits;            // of the leader's Session streams
  StreamRegistry* sessions = nullptr;     // lists them; null: not listed
  StreamQuota* fence_watchers = nullptr;  // counts the leader's WatchFences streams
  StreamQuota* observers = nullptr;       // and its Observe streams
  const TokenSigner* signer = nullptr;    // null: no signing
  CallerIdentity identity;                // of the leader's service
  std::shared_ptr<grpc::ChannelCredentials> etcd_credentials;  // null: plaintext
  // Metrics (lock_metrics.h); null: not counted. Each term's manager counts
  // into `manager_metrics`, so the counters run on across terms.
  const LockManagerMetrics* manager_metrics = nullptr;
  const LeadershipMetrics* leadership_metrics = nullptr;
};

class EtcdLockNode final : public LeaderElection::Delegate {
 public:
  EtcdLockNode(EtcdLockNodeOptions options, Clock* clock, RoutingLockService* router,
               absl::AnyInvocable<void(bool serving)> on_serving);
  ~EtcdLockNode() override;  // Stop()

  void Start();
  // The manager of the term this instance leads now; null while it does
  // not lead. For the gauges and the status page.
  std::shared_ptr<LockManager> CurrentManager();
  // Hands over: ends a term cleanly (replies already decided are
  // delivered), revokes the etcd lease so another instance leads at once,
  // stops campaigning. Idempotent.
  void Stop();

  absl::Status StartTerm(const LeaderGuard& guard) override;
  void EndTerm(LeaderElection::TermEnd why) override;
  void LeaderChanged(const std::string& address) override;

 private:
  // What one term serves with. The manager is shared (through aliasing
  // pointers to the whole Term) with the term's LockServiceImpl and its
  // parked calls, so the store lives as long as the manager.
  struct Term {
    std::unique_ptr<EtcdLockStore> store;
    FenceFeed* feed = nullptr;  // one of feeds_
    std::unique_ptr<LockManager> manager;
  };

  void ReportServing();

  const EtcdLockNodeOptions options_;
  Clock* const clock_;
  RoutingLockService* const router_;
  absl::AnyInvocable<void(bool)> on_serving_;
  etcd::EtcdClient client_;
  // What WatchFences streams catch up from, whatever the term: a store of
  // no term (it never loads or commits) whose ScanFencePositions reads etcd.
  EtcdLockStore fence_reader_;
  // What the router serves from while this instance does not lead: null
  // (forward to the leader), except in a test build with the planted bug
  // lock_standby_answers_locally (standby_shadow.h).
  const std::shared_ptr<LockServiceBase> standby_shadow_;
  // Each term's feed, closed when the term ends. Kept until the node goes
  // (a few bytes each), since a closed stream's reactor still unsubscribes
  // when gRPC is done with it.
  std::vector<std::unique_ptr<FenceFeed>> feeds_;
  LeaderElection election_;
  // Election thread only:
  std::shared_ptr<Term> term_;  // while leading
  std::string leader_;          // the other instance that leads, if known
  // term_'s manager, for other threads (CurrentManager()).
  absl::Mutex current_mu_;
  std::shared_ptr<LockManager> current_ ABSL_GUARDED_BY(current_mu_);
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_ETCD_LOCK_NODE_H_
