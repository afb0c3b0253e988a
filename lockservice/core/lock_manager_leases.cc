// Leases: grants, reentrant holds, expiry timers, lock-delay and the
// max_hold cap, and the answers that describe a lease.
#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/test_hooks/test_hooks.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_manager_internal.h"

namespace fencegate::lockservice {
namespace {

// The answer to an Acquire granted `lease`, for `ttl`.
AcquireResult Acquired(const HeldLease& lease, absl::Duration ttl) {
  AcquireResult result;
  result.acquired = true;
  result.token = lease.token;
  result.mode = lease.mode;
  result.ttl = ttl;
  result.hold_count = lease.hold_count;
  return result;
}

}  // namespace

void LockManager::Grant(const std::string& name, ResourceState& r,
                        const std::string& holder, LeaseMode mode, absl::Duration ttl,
                        const std::string& request_id, Callback<AcquireResult> done,
                        LeaseListener* listener, const std::string* campaign) {
  const absl::Time now = clock_->Now();
  HeldLease granted;
  granted.holder = holder;
  granted.token = ++last_token_;
  granted.mode = mode;
  granted.ttl = CompactDuration(ttl);
  granted.acquired_at = CompactTime(now);
  granted.expiry = CompactTime(CappedExpiry(granted, ttl, now, limits_.max_hold));
  granted.hold_count = 1;
  granted.request_ids.Remember(request_id, limits_.remembered_request_ids);
  // test builds only: "grant", or "grant-shared", "grant-permit".
  FENCEGATE_LEASE_EVENT(mode == LeaseMode::kExclusive
                            ? std::string("grant")
                            : absl::StrCat("grant-", LeaseModeName(mode)),
                        name, granted.token, ttl, holder);
  HeldLease& lease = mode == LeaseMode::kExclusive
                         ? r.lease.emplace(std::move(granted))
                         : r.EnsureShared().leases.emplace_back(std::move(granted));
  expiries_.Add(resources_.find(name)->first, lease);
  if (listener != nullptr) listeners_.Listen(listener, lease.token, lease.first_listener);
  if (campaign != nullptr)
    elections_.Begin(name, lease.token, Proclamation{0, *campaign});
  decision_.PutLease(name, r, lease);
  // Only an exclusive lease writes, so only its grant fences the others out.
  if (mode == LeaseMode::kExclusive) {
    decision_.MoveFence(
        FenceEvent{FenceEvent::Kind::kGranted, name, lease.token, lease.token});
    // Its holder leads the election `name` (if anybody watches it).
    if (!elections_.ObserversOf(name).empty()) TellObservers(ElectionState(name, &r));
  }
  decision_.Reply(std::move(done), absl::StatusOr<AcquireResult>(
                                       Acquired(lease, lease.expiry.get() - now)));
}

void LockManager::Reenter(const std::string& name, ResourceState& r, HeldLease& lease,
                          absl::Duration ttl, const std::string& request_id,
                          Callback<AcquireResult> done, LeaseListener* listener,
                          bool campaign) {
  Count(metrics_->grants[LockManagerMetrics::kReentrant]);
  if (listener != nullptr) listeners_.Listen(listener, lease.token, lease.first_listener);
  const bool retry =
      campaign || (!request_id.empty() && lease.request_ids.Contains(request_id));
  if (!retry) {
    ++lease.hold_count;
    lease.request_ids.Remember(request_id, limits_.remembered_request_ids);
    expiries_.Move(lease,
                   std::max(lease.expiry.get(),
                            CappedExpiry(lease, ttl, clock_->Now(), limits_.max_hold)));
    lease.ttl = CompactDuration(std::max(lease.ttl.get(), ttl));
    decision_.PutLease(name, r, lease);
  }
  decision_.Reply(std::move(done), absl::StatusOr<AcquireResult>(Acquired(
                                       lease, lease.expiry.get() - clock_->Now())));
}

ResourceState* LockManager::FindCurrent(const std::string& name) {
  auto it = resources_.find(name);
  if (it == resources_.end()) return nullptr;
  ResourceState& r = it->second;
  // The expiry timer may not have run yet; a lease past its expiry is gone.
  const absl::Time now = clock_->Now();
  if (r.lease && now >= r.lease->expiry.get()) {
    EndLease(name, r, *r.lease, LeaseEnd::kExpired);
  }
  if (r.shared != nullptr) {
    // Newest first: an end erases its lease from the vector.
    for (size_t i = r.shared->leases.size(); i-- > 0;) {
      if (i < r.shared->leases.size() && now >= r.shared->leases[i].expiry.get()) {
        EndLease(name, r, r.shared->leases[i], LeaseEnd::kExpired);
        EndDecision();  // one per lease, as OnExpiryTimer's
      }
    }
  }
  return &r;
}

void LockManager::EndLease(const std::string& name, ResourceState& r, HeldLease& lease,
                           LeaseEnd why, const LeaseListener* releaser) {
  const bool expired = why == LeaseEnd::kExpired;
  const bool exclusive = lease.mode == LeaseMode::kExclusive;
  FENCEGATE_LEASE_EVENT(expired ? "expire" : "release", name, lease.token,
                        lease.ttl.get(), lease.holder);  // test builds only
  expiries_.Remove(lease);
  for (LeaseListener* listener : listeners_.End(lease.token, lease.first_listener)) {
    if (listener != releaser) {
      decision_.TellLost(listener, LeaseLoss{name, lease.token, why});
    }
  }
  if (expired) {
    if (exclusive) {
      // The expiry mark: a token of its own, so the expired holder is fenced
      // out and the next grant (a larger token) still passes.
      const uint64_t mark = ++last_token_;
      decision_.MoveFence(
          FenceEvent{FenceEvent::Kind::kExpired, name, lease.token, mark});
    }
    Count(metrics_->expirations);
  } else {
    Count(metrics_->releases);
  }
  if (exclusive) {
    // The term of election `name` ends (if anybody watches it).
    const uint64_t end = elections_.End(name, lease.token);
    if (!elections_.ObserversOf(name).empty()) {
      ElectionChange change;
      change.election = name;
      change.term = lease.token;
      change.seq = end;  // no candidate: as Leader() tells an ended term
      change.at = absl::Now();
      TellObservers(change);
    }
  }
  decision_.DeleteLease(name, lease);
  if (exclusive) {
    r.lease.reset();
  } else {
    std::vector<HeldLease>& leases = r.shared->leases;
    leases.erase(leases.begin() + (&lease - leases.data()));
  }
  if (expired && exclusive && limits_.lock_delay > absl::ZeroDuration()) {
    r.delay_until = CompactTime(clock_->Now() + limits_.lock_delay);
    SetTimer(r.delay_until.get(), [name](LockManager& m) { m.OnDelayEnd(name); });
  }
  GrantWaiters(name, r);
}

void LockManager::OnExpiryTimer() {
  {
    absl::MutexLock lock(&mu_);
    expiries_.Fired();
  }
  // One decision per lease: each expiry commits whole (its fence, its row,
  // the grant to the next waiter), and no batch outgrows a store's
  // transaction (--etcd_max_txn_ops) when many leases end at one instant.
  for (;;) {
    DecisionLock lock(this);
    const DeadlineIndex::Entry due = expiries_.Due(clock_->Now());
    if (due.resource == nullptr) {
      expiries_.Arm();
      return;
    }
    const std::string name = *due.resource;  // MaybeForget may drop the key
    auto it = resources_.find(name);
    HeldLease* lease = it == resources_.end() ? nullptr : it->second.FindLease(due.id);
    if (lease == nullptr) {
      // Cannot happen (a lease leaves the index when it ends); never loop on it.
      expiries_.Remove(due);
      continue;
    }
    EndLease(name, it->second, *lease, LeaseEnd::kExpired);  // takes it out of the index
    MaybeForget(name);
  }
}

void LockManager::OnDelayEnd(const std::string& name) {
  DecisionLock lock(this);
  auto it = resources_.find(name);
  if (it == resources_.end()) return;
  GrantWaiters(name, it->second);
  MaybeForget(name);
}

void LockManager::MaybeForget(const std::string& name) {
  auto it = resources_.find(name);
  if (it == resources_.end()) return;
  it->second.Trim();
  if (it->second.Empty(clock_->Now())) resources_.erase(it);
}

}  // namespace fencegate::lockservice
