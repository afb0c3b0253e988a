// LockManager: the lock service's core. Leases on named resources, each with
// a fencing token from one counter that only grows; FIFO wait queues; expiry
// on an injected monotonic Clock; reentrancy with request-id dedupe;
// owner-checked renew ("extend to") and release; lock-delay and a hold cap;
// shared leases and semaphores (fencegate/lease_mode.h). No gRPC types:
// plain structs in, absl::StatusOr out through callbacks.
//
// What it promises, and how (docs/design.md, "The lock manager"): every
// call is decided in memory under one mutex and answered only after the
// batch holding its effects has committed, so nothing a reply reveals (a
// token, a holder) can be lost by a crash; the rows one decision changes
// commit together or not at all (decision.h); after a failed commit, every
// reply of that batch and later ones fails with UNAVAILABLE and the state
// is rebuilt from the store.
//
// Callbacks (`done`) run exactly once, on the thread that commits their
// batch (the group-commit thread, or a Session's thread that completed the
// batch: common/core/group_commit.h, "Who flushes"), or on the calling thread
// for errors that reveal no state (bad input, overload, shutdown,
// cancellation). The manager's mutex is never held while a callback runs,
// so callbacks may call the manager again; they should not block, since
// the replies behind them wait.
//
// Thread safety: all public methods are thread-safe.
//
// Lifetime: `store`, `clock` and `metrics` must outlive the manager. Timers
// the manager left on the clock become no-ops when it is destroyed.
//
// Its parts (resource_state.h, decision.h, parked_calls.h, lease_expiries.h
// and more) and which of its .cc files does what: docs/design.md, "The lock
// manager".
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_MANAGER_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_MANAGER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/core/group_commit.h"
#include "fencegate/clock.h"
#include "fencegate/lease_mode.h"
#include "lockservice/core/decision.h"
#include "lockservice/core/elections.h"
#include "lockservice/core/fence_feed.h"
#include "lockservice/core/lease_expiries.h"
#include "lockservice/core/lease_listener.h"
#include "lockservice/core/lease_listeners.h"
#include "lockservice/core/lock_calls.h"
#include "lockservice/core/lock_limits.h"
#include "lockservice/core/lock_metrics.h"
#include "lockservice/core/lock_store.h"
#include "lockservice/core/parked_calls.h"

namespace fencegate::lockservice {

// Whether a lease recorded for `holder` belongs to the authenticated
// identity `caller`: the holder is the identity itself or "<identity>/...".
bool HeldBy(absl::string_view holder, absl::string_view caller);

class LockManager {
 public:
  // Identifies one Acquire call, so a parked call can be cancelled.
  using CallId = uint64_t;

  // Loads the store's committed state; every lease found is held for its
  // full TTL from now. `feed` (optional, must outlive the manager) receives
  // the fence events of every committed batch; `metrics` (optional) counts
  // (docs/design.md, "The lock manager": metrics).
  static absl::StatusOr<std::unique_ptr<LockManager>> Create(
      LockStore* store, Clock* clock, const LockLimits& limits, FenceFeed* feed = nullptr,
      const LockManagerMetrics* metrics = nullptr);
  ~LockManager();

  // A fresh id for the next Acquire.
  CallId NewCallId() { return next_call_id_.fetch_add(1); }

  const LockLimits& limits() const { return limits_; }

  // Grants, queues (args.wait > 0) or refuses. Not being granted is an OK
  // result with acquired = false. Errors: INVALID_ARGUMENT for bad input,
  // RESOURCE_EXHAUSTED past the waiter/resource limits, UNAVAILABLE when
  // shutting down or the store failed, CANCELLED if CancelAcquire() ended it.
  void Acquire(CallId id, AcquireArgs args, Callback<AcquireResult> done);

  // Grants every resource of `args` together (each as Acquire would, kind
  // and reentrancy included), or, with a wait, parks the call in each
  // resource's queue at once and grants them all in one decision when it
  // heads every queue and each fits; or refuses. Two calls naming
  // overlapping sets, in any order, cannot deadlock: every call enters all
  // its queues in one decision, so its queues agree on who is first. A
  // parked MultiAcquire is not persisted: after a restart or a failover
  // its client's retry queues again. Errors as for Acquire, and
  // INVALID_ARGUMENT for an empty, too long or repeating list. The call
  // is cancelled with CancelAcquire(id).
  void AcquireMany(CallId id, MultiAcquireArgs args, Callback<MultiAcquireResult> done);

  // Ends the parked Acquire (or AcquireMany) `id` with CANCELLED (the client
  // went away). No effect if it is not parked (already answered, or never
  // parked).
  void CancelAcquire(CallId id);

  // Extends the lease to now + ttl (capped by max_hold). ABORTED with
  // ErrorReason::kLeaseLost if `token` does not hold `resource`;
  // PERMISSION_DENIED if it does but args.caller is set and not its owner.
  void Renew(RenewArgs args, Callback<RenewResult> done);

  // Drops one hold; at zero the lease ends and the next waiter is granted.
  // ABORTED (kLeaseLost) if `token` does not hold `resource`;
  // PERMISSION_DENIED as for Renew.
  void Release(ReleaseArgs args, Callback<ReleaseResult> done);

  void Describe(std::string resource, Callback<ResourceInfo> done);

  // ---- Elections (elections.h; docs/semantics.md, "Elections"). A
  // Campaign is an Acquire with args.campaign set; a Resign is a Release
  // with args.resign set.
  // The leader of election `args.resource` in term `args.token` says
  // `args.value` from now on; answers the value's sequence number. ABORTED
  // (kLeaseLost) unless `token` is the election's exclusive lease's (a
  // deposed leader's); PERMISSION_DENIED as for Renew.
  void Proclaim(ProclaimArgs args, Callback<ProclaimResult> done);
  // The election's state, once committed: who leads, in which term, with
  // which value (leader false: nobody does).
  void Leader(std::string election, Callback<ElectionChange> done);
  // Adds `observer` to `election`: it hears the election's state once
  // committed, then each change (elections.h). UNAVAILABLE, and nothing
  // added, when the manager shuts down or its store is broken; on a
  // rebuild or at shutdown every observer is stopped (OnStopped).
  // REQUIRES: RemoveObserver() before `observer` goes.
  absl::Status AddObserver(const std::string& election, ElectionObserver* observer);
  // Removes `observer` from `election`; changes already decided may still
  // be told (they hold their own reference). Idempotent.
  void RemoveObserver(const std::string& election, ElectionObserver* observer);

  // Adds `listener` (docs/design.md, "The lock manager": lease
  // listeners). UNAVAILABLE, and nothing added, when the manager shuts
  // down or its store is broken.
  // REQUIRES: RemoveListener() before `listener` goes.
  absl::Status AddListener(LeaseListener* listener);
  // Removes `listener` and every registration of it; ends already decided
  // may still be told (they hold their own reference). Idempotent.
  void RemoveListener(LeaseListener* listener);

  // Ends every parked Acquire with UNAVAILABLE, tells every listener it
  // stopped (OnStopped, UNAVAILABLE) and removes it, and refuses new calls.
  // Replies already decided are still delivered after their commit. `why`
  // (UNAVAILABLE) says so to the parked calls and the listeners; by
  // default, that the service is shutting down.
  void Shutdown();
  void Shutdown(const absl::Status& why);

  // Blocks until every reply decided before the call has been delivered.
  void Sync();

  // Leases held, waiters, resources and the token counter, as decided so
  // far (possibly not yet committed): for the gauges. O(1).
  LockStateFigures Figures();
  // Up to `limit` resources whose name starts with `prefix`, those with the
  // most waiters first, then by name: for the status page. Reads the whole
  // table under the manager's mutex (O(resources)), and answers from
  // memory, without waiting for a commit: what it shows may not be
  // committed yet, so it is never a reply to a client.
  std::vector<ResourceSummary> TopResources(absl::string_view prefix, size_t limit);

  // Announces calls on their way (common/core/group_commit.h): while it is
  // held, the group-commit writer does not start a batch that is not full.
  // Acquire, Renew and Release hold one while they decide; a handler may hold
  // one across the requests it has just received. Never while waiting for an
  // answer.
  CommitArrival Arriving() { return commits_->Arriving(); }

  // The most items one decision queues (docs/design.md, "The lock manager"): a
  // batch is at most limits.max_batch + kMaxDecisionItems - 1 items, which
  // the etcd store's transaction limit allows for.
  static constexpr size_t kMaxDecisionItems = 16;
  // The most resources one AcquireMany names: its grant is one decision,
  // two store items (the lease row, the fence position) a resource.
  static constexpr size_t kMaxMultiResources = kMaxDecisionItems / 2;

 private:
  LockManager(LockStore* store, Clock* clock, const LockLimits& limits, FenceFeed* feed,
              const LockManagerMetrics* metrics);
  // A link seam, like CanGrant and RefuseTryMany (lock_manager_seams.cc;
  // the torture's test builds link tests/torture/planted_lock_bugs.cc
  // instead): the store to use instead of `store`, or null for `store`.
  static std::unique_ptr<LockStore> TestBuildStore(LockStore* store);

  // Runs fn(*this) at `deadline` unless the manager is gone by then.
  Clock::TimerId SetTimer(absl::Time deadline, absl::AnyInvocable<void(LockManager&)> fn);

  // ---- The calls (lock_manager.cc, lock_manager_renew_release.cc)
  // Decides an Acquire. Returns an error without touching `done` when it
  // fails before reading state; otherwise takes `done` and returns OK.
  absl::Status AcquireLocked(CallId id, const AcquireArgs& args,
                             Callback<AcquireResult>& done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts `w` into `r`'s queue (made if it has none) before `place`, and
  // into its indexes; counts it.
  WaitQueue::iterator LinkWaiter(ResourceState& r, WaitQueue::iterator place, Waiter w)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes `w` out of `r`'s queue and its indexes; its row stays.
  void UnlinkWaiter(ResourceState& r, WaitQueue::iterator w)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The resource and its lease (of any kind) that `token` holds and
  // `caller` owns (an expired lease is ended first); otherwise the LeaseLost
  // or CheckOwner error for `op`. The caller calls MaybeForget(resource)
  // afterwards.
  struct Held {
    ResourceState* resource;
    HeldLease* lease;
  };
  absl::StatusOr<Held> FindHeld(absl::string_view op, const std::string& resource,
                                uint64_t token, const std::string& caller)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The lease of `token` on `r` that call `op` acts on (FindHeld), or null:
  // r.FindLease(token). A link seam (lock_manager_seams.cc).
  HeldLease* LeaseOfToken(absl::string_view op, ResourceState& r, uint64_t token)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The path Renew and Release share: unless `error` (their validation) is
  // set, finds the lease `token` holds on `resource` for `caller` (FindHeld)
  // and replies what decide(resource, lease) returns, within one decision;
  // or replies the error, counting a lost lease under `lost`.
  template <typename Result, typename Decide>
  void OnHeldLease(absl::string_view op, LockManagerMetrics::LeaseLostOp lost,
                   const std::string& resource, uint64_t token, const std::string& caller,
                   absl::Status error, Callback<Result> done, Decide decide)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Whether a request of `mode` by `holder` may be granted a new lease on
  // `r` now, the queue aside (kShared by the exclusive holder: a
  // downgrade): the grant rule (grant_rule.h) over `r`'s facts. A link
  // seam (lock_manager_seams.cc).
  bool CanGrant(const ResourceState& r, const std::string& holder, LeaseMode mode) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- Leases (lock_manager_leases.cc)
  // Grants a new lease of `mode` on `r` to `holder` (CanGrant), queueing
  // its reply; `listener` (may be null) listens to it; `campaign` (may be
  // null) is the value it leads the election with.
  void Grant(const std::string& name, ResourceState& r, const std::string& holder,
             LeaseMode mode, absl::Duration ttl, const std::string& request_id,
             Callback<AcquireResult> done, LeaseListener* listener,
             const std::string* campaign = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A reentrant acquire of `lease` (of `r`) by its holder: one more hold and
  // a lease at least `ttl` long, unless `request_id` was applied to it (a
  // retry) or it is a `campaign` (a leader campaigning again holds its term
  // once); queues the reply. `listener` (may be null) listens to it.
  void Reenter(const std::string& name, ResourceState& r, HeldLease& lease,
               absl::Duration ttl, const std::string& request_id,
               Callback<AcquireResult> done, LeaseListener* listener,
               bool campaign = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The resource's entry with every lease past its expiry ended, or null.
  ResourceState* FindCurrent(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends `lease` (of `r`; it goes) and hands the resource on. Its listeners
  // hear `why`, but `releaser` (the listener whose call released it; may be
  // null).
  void EndLease(const std::string& name, ResourceState& r, HeldLease& lease, LeaseEnd why,
                const LeaseListener* releaser = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops `r` from the table when nothing refers to it any more.
  void MaybeForget(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Timer callbacks. OnExpiryTimer ends every lease due, in expiry order.
  void OnExpiryTimer();
  void OnDelayEnd(const std::string& name);

  // ---- Wait queues (lock_manager_queues.cc)
  // Serves `r`'s queue from its head: each waiter in turn while it can be
  // granted (CanGrant; an exclusive waiter stops the run) and its client is
  // there (docs/design.md, "The lock manager": wait queues), then each new
  // holder's own parked calls (GrantHolderWaiters). Every grant after the
  // first is a decision of its own.
  void GrantWaiters(const std::string& name, ResourceState& r)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Grants every parked call of `holder` that its leases on `r` let through
  // (a reentrant acquire, or a shared lease for the exclusive holder), in
  // queue order, each a decision of its own. Loaded waiters whose clients
  // are not back stay: their retries are answered on arrival.
  void GrantHolderWaiters(const std::string& name, ResourceState& r,
                          const std::string& holder) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives the parked or loaded waiter `w` of `r` to the call `id` (a retry
  // of the Acquire it stands for).
  void Reattach(CallId id, const AcquireArgs& args, ResourceState& r,
                WaitQueue::iterator w, Callback<AcquireResult>& done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the call parked as `w`, if any, with CANCELLED (a retry with the
  // same request id took over); `w` stays in the queue, detached.
  void Supersede(Waiter& w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes `w` from `r`'s queue and its row from the store (the caller
  // unparks its call first: ParkedCalls::Unpark).
  void EraseWaiter(ResourceState& r, WaitQueue::iterator w)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the loaded waiters whose clients did not come back in time.
  void DropDetachedWaiters();
  // Timer callback: answers every parked call whose wait ran out.
  void OnWaitTimer();

  // ---- Several resources at once (lock_manager_multi.cc)
  absl::Status AcquireManyLocked(CallId id, const MultiAcquireArgs& args,
                                 Callback<MultiAcquireResult>& done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A try-lock of `args.resources` (`rs`, in that order) found rs[busy]
  // taken: grants nothing and answers through ReplyTryManyRefused(). A link
  // seam (lock_manager_seams.cc).
  void RefuseTryMany(const MultiAcquireArgs& args, const std::vector<ResourceState*>& rs,
                     size_t busy, Callback<MultiAcquireResult> done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Answers a refused try-lock of several resources: not acquired, because
  // of `name` (`r`).
  void ReplyTryManyRefused(const std::string& name, const ResourceState& r,
                           Callback<MultiAcquireResult> done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the request of `mode` by `holder` for `r` fits now, at its
  // place `w` (null: not queued): a lease it re-enters, or a new lease
  // that CanGrant() allows with nobody ahead of it.
  bool FitsNow(ResourceState& r, const std::string& holder, LeaseMode mode,
               const Waiter* w) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Grants (or re-enters) each of `names` for the call, in order, as one
  // decision, and replies once with every lease.
  void GrantMany(const std::vector<const std::string*>& names, const std::string& holder,
                 LeaseMode mode, absl::Duration ttl, const std::string& request_id,
                 LeaseListener* listener, Callback<MultiAcquireResult> done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Grants the parked AcquireMany `id` if it heads every queue and each of
  // its resources fits; true when it did. Then serves the queues it left.
  bool GrantParkedMany(CallId id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the parked AcquireMany `id` out of every queue and the wait
  // index, and returns it (null if it is not parked). Serves no queue.
  std::unique_ptr<ParkedCalls::Many> UnparkMany(CallId id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the parked AcquireMany `id`, if parked: with `why` (CANCELLED), or,
  // when `why` is OK, as a wait that ran out (not acquired, naming the
  // resource that held it back). Then serves the queues it left.
  void EndParkedMany(CallId id, absl::Status why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- Elections (lock_manager_elections.cc)
  // The state of election `name` (`r`, may be null) as decided so far.
  ElectionChange ElectionState(const std::string& name, const ResourceState* r)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tells each observer of change.election of `change` once committed.
  void TellObservers(const ElectionChange& change) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- Group commit and recovery (lock_manager_commit.cc)
  // Ends the decision under way (decision_): its items go to the group
  // commit as one group. commits_ is null while Create() loads and once
  // the destructor took it: nothing decided then is waited for.
  void EndDecision() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    decision_.End(commits_.get(), epoch_, last_token_);
  }
  // Holds mu_ for decisions; ends the last one (EndDecision()) before it
  // unlocks. Every method that decides takes mu_ through it.
  class ABSL_SCOPED_LOCKABLE DecisionLock {
   public:
    explicit DecisionLock(LockManager* m) ABSL_EXCLUSIVE_LOCK_FUNCTION(m->mu_) : m_(m) {
      m_->mu_.Lock();
    }
    ~DecisionLock() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      m_->EndDecision();
      m_->mu_.Unlock();
    }
    DecisionLock(const DecisionLock&) = delete;
    DecisionLock& operator=(const DecisionLock&) = delete;

   private:
    LockManager* const m_;
  };
  void Flush(std::vector<CommitItem>& batch);
  void Recover(const absl::Status& commit_error);
  // Replaces the leases and adds the waiters with what the store holds,
  // as it reads them (LockStore::LoadInto: never all rows at once). On
  // error no lease is left: a partial load is not served.
  absl::Status LoadFromStore() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What LoadFromStore hands each row to (lock_manager_commit.cc).
  class Restorer;

  // Timer callbacks hold a reference; the destructor clears `manager` under
  // `mu`, which waits for a callback in progress and disarms later ones.
  struct Lifeline {
    absl::Mutex mu;
    LockManager* manager ABSL_GUARDED_BY(mu);
  };
  const std::shared_ptr<Lifeline> lifeline_;

  // What TestBuildStore() made, if anything (test builds); store_ is it then.
  const std::unique_ptr<LockStore> test_store_;
  LockStore* const store_;
  Clock* const clock_;
  const LockLimits limits_;
  FenceFeed* const feed_;  // may be null
  // Never null: without metrics, one whose pointers are all null (Count()
  // and Observe() in lock_metrics.h skip those).
  const LockManagerMetrics* const metrics_;
  std::atomic<CallId> next_call_id_{1};

  absl::Mutex mu_;
  absl::node_hash_map<std::string, ResourceState> resources_ ABSL_GUARDED_BY(mu_);
  // Parked calls, for CancelAcquire, and the timer that ends their waits.
  ParkedCalls parked_ ABSL_GUARDED_BY(mu_);
  uint64_t last_token_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  // Set when the store failed and could not be reloaded.
  absl::Status broken_ ABSL_GUARDED_BY(mu_);
  // Bumped on every recovery; queued items of an older epoch were decided
  // on discarded state and are failed instead of committed.
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // The next persisted waiter's place in arrival order.
  uint64_t next_waiter_seq_ ABSL_GUARDED_BY(mu_) = 1;
  // Who hears when which lease ends (with each lease's first_listener).
  LeaseListeners listeners_ ABSL_GUARDED_BY(mu_);
  // What election leaders proclaimed, and who observes which election.
  Elections elections_ ABSL_GUARDED_BY(mu_);
  // Every held lease by expiry, and the timer that runs OnExpiryTimer.
  LeaseExpiries expiries_ ABSL_GUARDED_BY(mu_);
  // For Figures(): waiters in every queue.
  uint64_t waiters_ ABSL_GUARDED_BY(mu_) = 0;

  // What the decision under way changes, not yet in commits_.
  Decision decision_ ABSL_GUARDED_BY(mu_){kMaxDecisionItems, &elections_};

  // Last: its destructor flushes what is queued, using the members above.
  std::unique_ptr<GroupCommitQueue<CommitItem>> commits_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_MANAGER_H_
