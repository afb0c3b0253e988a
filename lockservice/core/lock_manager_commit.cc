// Group commit and recovery: the items a decision queues, the batch that
// folds them into one store commit, and the reload of the store's state
// (at start, and after a failed commit).
#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/base/log.h"
#include "common/core/reply_batch.h"
#include "common/test_hooks/test_hooks.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_manager_internal.h"

namespace fencegate::lockservice {
void LockManager::Flush(std::vector<CommitItem>& batch) {
  uint64_t epoch;
  {
    absl::MutexLock lock(&mu_);
    epoch = epoch_;
  }
  // Fold the rows: the last state of each resource wins, and its last fence
  // position (positions grow in decision order).
  LockStoreBatch rows;
  absl::flat_hash_map<std::string, size_t> row_of;
  // Shared leases and permits by token; one granted and ended within the
  // batch still goes (a delete of a row never written is harmless).
  absl::flat_hash_map<uint64_t, size_t> hold_of;
  absl::flat_hash_map<std::string, size_t> fence_of;
  // Waiter rows by seq; one parked and granted within the batch cancels out.
  absl::flat_hash_map<uint64_t, std::optional<WaiterRecord>> waiter_rows;
  std::vector<FenceEvent> events;
  for (CommitItem& item : batch) {
    if (item.epoch != epoch) continue;  // decided on state a failure discarded
    rows.last_token = std::max(rows.last_token, item.last_token);
    if (auto* change = std::get_if<WaiterRowChange>(&item.change)) {
      auto it = waiter_rows.find(change->seq);
      if (it != waiter_rows.end() && it->second && !change->waiter) {
        waiter_rows.erase(it);
      } else {
        waiter_rows[change->seq] = std::move(change->waiter);
      }
    } else if (auto* fence = std::get_if<FenceEvent>(&item.change)) {
      auto [it, inserted] =
          fence_of.emplace(fence->resource, rows.fence_positions.size());
      if (inserted) {
        rows.fence_positions.push_back({fence->resource, fence->position});
      } else {
        rows.fence_positions[it->second].position = fence->position;
      }
      events.push_back(std::move(*fence));
    } else if (auto* change = std::get_if<LeaseRowChange>(&item.change)) {
      auto [it, inserted] = row_of.emplace(change->resource, rows.leases.size());
      if (inserted) {
        rows.leases.emplace_back(std::move(change->resource), std::move(change->lease));
      } else {
        rows.leases[it->second].second = std::move(change->lease);
      }
    } else if (auto* change = std::get_if<HoldRowChange>(&item.change)) {
      auto [it, inserted] = hold_of.emplace(change->token, rows.holds.size());
      if (inserted) {
        rows.holds.emplace_back(change->token, std::move(change->lease));
      } else {
        rows.holds[it->second].second = std::move(change->lease);
      }
    }
  }
  // A batch that changes nothing still goes to the store, empty: the replies
  // in it were decided from memory, and a store whose memory can go stale
  // (etcd: a deposed leader) confirms they are current. The counter only
  // moves with a change, so it has nothing to add then.
  for (auto& [seq, waiter] : waiter_rows)
    rows.waiters.emplace_back(seq, std::move(waiter));
  if (rows.leases.empty() && rows.holds.empty() && rows.fence_positions.empty()) {
    rows.last_token = 0;
  }
  const auto commit_start = std::chrono::steady_clock::now();
  absl::Status commit = store_->Commit(rows);
  if (metrics_->commit_seconds != nullptr) {
    metrics_->commit_seconds->ObserveSince(commit_start);
    size_t replies = 0;
    for (const CommitItem& item : batch) {
      const auto* delivery = std::get_if<Delivery>(&item.change);
      replies += delivery != nullptr && *delivery != nullptr;
    }
    metrics_->commit_batch_size->Observe(static_cast<double>(replies));
  }
  if (!commit.ok()) Count(metrics_->commit_failures);
  if (commit.ok() && !rows.empty())
    FENCEGATE_FAILPOINT("lock.after_commit");  // test builds only
  if (commit.ok() && feed_ != nullptr) feed_->Publish(events);
  if (!commit.ok()) {
    Recover(commit);
    // A full disk (SqliteLockStore) keeps its code: back off until space is
    // freed. Calls that need no commit (Describe) are still answered.
    commit =
        commit.code() == absl::StatusCode::kResourceExhausted
            ? absl::ResourceExhaustedError(absl::StrCat(
                  "the lock service could not store this request: ", commit.message(),
                  "; nothing was applied; retry once space is freed"))
            : absl::UnavailableError(
                  absl::StrCat("the lock service could not commit this request (",
                               commit.message(), "); nothing was applied; retry"));
  }
  const absl::Status stale = absl::UnavailableError(
      "the lock service's store failed before this request was committed; "
      "nothing was applied; retry");
  // Each stream's replies of this batch go out in one message.
  ReplyBatch replies;
  for (CommitItem& item : batch) {
    auto* delivery = std::get_if<Delivery>(&item.change);
    if (delivery != nullptr && *delivery)
      (*delivery)(item.epoch == epoch ? commit : stale);
  }
}

void LockManager::Recover(const absl::Status& commit_error) {
  std::vector<LeaseListener*> listeners;
  std::vector<ElectionObserver*> observers;
  absl::Cleanup stop = [&listeners, &observers, &commit_error] {
    // What they listened to was decided on the state now discarded: they
    // start again (a Session stream ends; its client renews on a new one).
    StopListeners(
        std::move(listeners),
        absl::UnavailableError(absl::StrCat(
            "the lock service's store failed (", commit_error.message(),
            ") and it rebuilt its state from its last commit; leases are as "
            "committed: renew them on a new stream to hear of their end again")));
    StopObservers(std::move(observers),
                  absl::UnavailableError(absl::StrCat(
                      "the lock service's store failed (", commit_error.message(),
                      ") and it rebuilt its state from its last commit; observe the "
                      "election again, from the last change you saw")));
  };
  DecisionLock lock(this);
  listeners = listeners_.TakeAll();
  observers = elections_.TakeObservers();
  LogError("lock store commit failed: %s; reloading the last committed state",
           commit_error.ToString());
  ++epoch_;
  absl::Status status = LoadFromStore();
  if (!status.ok()) {
    broken_ = absl::UnavailableError(
        absl::StrCat("the lock service's store failed and could not be reloaded (",
                     status.message(), "); restart the lock service"));
    LogError("%s", broken_.ToString());
  }
}

// What LoadFromStore hands each row to. It starts from no lease held (the
// waiters stay: a reload finds the parked ones again); Forget() drops the
// leases again after a load that failed.
class LockManager::Restorer final : public LoadSink {
 public:
  Restorer(LockManager& m, absl::Time now) : m_(m), now_(now) { Forget(); }

  // Called within LoadFromStore, which holds mu_.
  void OnLastToken(uint64_t last_token) override {
    m_.mu_.AssertHeld();
    // The first row: the store answered (with etcd, after all of Load()).
    // The torture checker takes this event as the state's reload, so it
    // must not be written for a load that fails before any row.
    FENCEGATE_LEASE_EVENT("load", "", 0, absl::ZeroDuration(), "");  // test builds only
    m_.last_token_ = last_token;
  }
  void ExpectLeases(size_t count) override {
    m_.mu_.AssertHeld();
    // Sized once: a million leases inserted one by one rehash the table
    // twenty times over.
    m_.resources_.reserve(m_.resources_.size() + count);
  }
  void OnLease(LeaseRecord& record) override;
  void OnWaiter(WaiterRecord& record) override;

  // Drops every lease from memory (not from the store) and the expiries.
  void Forget();
  // Whether a waiter was left detached (its client to come back).
  bool detached() const { return detached_; }

 private:
  LockManager& m_;
  const absl::Time now_;
  bool detached_ = false;
};

void LockManager::Restorer::Forget() {
  m_.mu_.AssertHeld();
  for (auto& [name, r] : m_.resources_) {
    r.lease.reset();
    if (r.shared != nullptr) r.shared->leases.clear();
  }
  m_.expiries_.Clear();
  m_.elections_.ForgetTerms();
}

void LockManager::Restorer::OnLease(LeaseRecord& record) {
  m_.mu_.AssertHeld();
  // test builds only: "restore", or "restore-shared", "restore-permit".
  FENCEGATE_LEASE_EVENT(record.mode == LeaseMode::kExclusive
                            ? std::string("restore")
                            : absl::StrCat("restore-", LeaseModeName(record.mode)),
                        record.resource, record.token, record.ttl, record.holder);
  HeldLease lease;
  lease.holder = std::move(record.holder);
  lease.token = record.token;
  lease.ttl = CompactDuration(record.ttl);
  // The "delay restart" rule: held for a full TTL from now, and the max_hold
  // cap counts from now too (a lease re-armed past its cap would take
  // renewals that end it at once).
  lease.acquired_at = CompactTime(now_);
  lease.expiry = CompactTime(CappedExpiry(lease, record.ttl, now_, m_.limits_.max_hold));
  lease.hold_count = record.hold_count;
  lease.request_ids.Assign(record.request_ids, m_.limits_.remembered_request_ids);
  lease.mode = record.mode;
  m_.last_token_ = std::max(m_.last_token_, lease.token);
  auto [it, added] = m_.resources_.try_emplace(std::move(record.resource));
  ResourceState& r = it->second;
  LeaseExpiries& expiries = m_.expiries_;
  if (lease.mode != LeaseMode::kExclusive) {
    SharedHolds& shared = r.EnsureShared();
    shared.permits = record.permits;
    for (HeldLease& same : shared.leases) {
      if (same.token == lease.token) {  // listed twice by the store
        expiries.Remove(same);
        same = std::move(lease);
        expiries.Add(it->first, same);
        return;
      }
    }
    expiries.Add(it->first, shared.leases.emplace_back(std::move(lease)));
    return;
  }
  if (r.lease) expiries.Remove(*r.lease);  // listed twice by the store
  r.lease = std::move(lease);
  expiries.Add(it->first, *r.lease);
  if (record.proclamation) {
    m_.elections_.Begin(it->first, r.lease->token, std::move(*record.proclamation));
  }
}

void LockManager::Restorer::OnWaiter(WaiterRecord& record) {
  m_.mu_.AssertHeld();
  m_.next_waiter_seq_ = std::max(m_.next_waiter_seq_, record.seq + 1);
  ResourceState& r = m_.resources_[record.resource];
  if (r.FindParked(record.holder, record.request_id)) return;  // still parked (a reload)
  WaitQueue& queue = r.EnsureQueue();
  auto place = std::find_if(queue.begin(), queue.end(),
                            [&](const Waiter& w) { return w.seq > record.seq; });
  if (record.mode == LeaseMode::kPermit) r.EnsureShared().permits = record.permits;
  m_.LinkWaiter(r, place,
                Waiter{0, std::move(record.holder), record.ttl,
                       std::move(record.request_id), nullptr, CompactTime(), record.seq,
                       /*listener=*/nullptr, /*parked_at=*/CompactTime(now_), record.mode,
                       /*many=*/false, record.permits});
  detached_ = true;
}

absl::Status LockManager::LoadFromStore() {
  const absl::Time now = clock_->Now();
  Restorer restorer(*this, now);
  absl::Status status = store_->LoadInto(restorer);
  if (!status.ok()) {
    restorer.Forget();
    return status;
  }
  // Waiters keep their places, detached until their clients retry.
  if (restorer.detached()) {
    SetTimer(now + limits_.waiter_reattach_grace,
             [](LockManager& m) { m.DropDetachedWaiters(); });
  }
  std::vector<std::string> names;
  for (auto& [name, r] : resources_) names.push_back(name);
  for (const std::string& name : names) {
    GrantWaiters(name, resources_[name]);
    MaybeForget(name);
    EndDecision();  // one per resource
  }
  return absl::OkStatus();
}

}  // namespace fencegate::lockservice
