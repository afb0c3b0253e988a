#include "lockservice/lock_manager.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/test_hooks.h"
#include "common/validation.h"

namespace fencegate::lockservice {

struct LockManager::Waiter {
  CallId id = 0;  // 0: loaded from the store; its client has not come back
  std::string holder;
  absl::Duration ttl;
  std::string request_id;
  Callback<AcquireResult> done;
  Clock::TimerId timer = 0;
  uint64_t seq = 0;  // its persisted place; 0: not persisted (no request id)
};

struct LockManager::HeldLease {
  std::string holder;
  uint64_t token = 0;
  absl::Duration ttl;       // the longest TTL asked for: re-armed after restart
  absl::Time expiry;
  absl::Time acquired_at;   // for max_hold
  Clock::TimerId expiry_timer = 0;  // cancelled when the lease ends early
  uint32_t hold_count = 0;
  std::deque<std::string> request_ids;
};

struct LockManager::Resource {
  std::optional<HeldLease> lease;
  WaiterList waiters;  // FIFO
  // The waiters with a request id, by holder + '\0' + request id.
  absl::flat_hash_map<std::string, WaiterList::iterator> by_request;
  // How many of `waiters` each holder has, so that a grant finds the new
  // holder's other waiters without scanning the queue when it has none.
  absl::flat_hash_map<std::string, uint32_t> waiters_of;
  absl::Time delay_until = absl::InfinitePast();
};

// One entry of a group-commit batch: a lease row to write (when `persist`),
// a fence event, and/or a reply to deliver once the batch is durable.
struct LockManager::CommitItem {
  uint64_t epoch = 0;
  uint64_t last_token = 0;  // the counter when the item was decided
  bool persist = false;
  std::string resource;
  std::optional<LeaseRecord> lease;  // nullopt with persist: delete the row
  std::optional<FenceEvent> fence;
  uint64_t waiter_seq = 0;              // set: a waiter row to write
  std::optional<WaiterRecord> waiter;   // nullopt with waiter_seq: delete it
  absl::AnyInvocable<void(const absl::Status& commit)> reply;
};

namespace {

absl::Status ShuttingDownError() {
  return absl::UnavailableError(
      "lock service is shutting down; retry against another instance or "
      "after it restarts");
}

std::string RequestKey(const std::string& holder, const std::string& request_id) {
  return absl::StrCat(holder, absl::string_view("\0", 1), request_id);
}

LeaseRecord ToRecord(const std::string& resource, const std::string& holder,
                     uint64_t token, absl::Duration ttl, uint32_t hold_count,
                     const std::deque<std::string>& request_ids) {
  LeaseRecord record;
  record.resource = resource;
  record.holder = holder;
  record.token = token;
  record.ttl = ttl;
  record.hold_count = hold_count;
  record.request_ids.assign(request_ids.begin(), request_ids.end());
  return record;
}

}  // namespace

LockManager::LockManager(LockStore* store, Clock* clock,
                         const LockLimits& limits, FenceFeed* feed)
    : lifeline_(std::make_shared<Lifeline>()),
      store_(store),
      clock_(clock),
      limits_(limits),
      feed_(feed) {
  absl::MutexLock lock(&lifeline_->mu);
  lifeline_->manager = this;
}

absl::StatusOr<std::unique_ptr<LockManager>> LockManager::Create(
    LockStore* store, Clock* clock, const LockLimits& limits, FenceFeed* feed) {
  std::unique_ptr<LockManager> manager(new LockManager(store, clock, limits, feed));
  {
    absl::MutexLock lock(&manager->mu_);
    absl::Status status = manager->LoadFromStore();
    if (!status.ok()) return status;
  }
  LockManager* raw = manager.get();
  manager->commits_ = std::make_unique<GroupCommitQueue<CommitItem>>(
      [raw](std::vector<CommitItem>& batch) { raw->Flush(batch); },
      limits.max_batch);
  return manager;
}

LockManager::~LockManager() {
  Shutdown();
  commits_.reset();  // delivers every reply already decided
  absl::MutexLock lock(&lifeline_->mu);
  lifeline_->manager = nullptr;
}

Clock::TimerId LockManager::SetTimer(absl::Time deadline,
                                     absl::AnyInvocable<void(LockManager&)> fn) {
  return clock_->RunAt(
      deadline, [lifeline = lifeline_, fn = std::move(fn)]() mutable {
        absl::ReaderMutexLock lock(&lifeline->mu);
        if (lifeline->manager != nullptr) fn(*lifeline->manager);
      });
}

// ---------------------------------------------------------------- Acquire

absl::Status LockManager::ValidateAcquire(const AcquireArgs& args) const {
  absl::Status s = ValidateName("resource", args.resource, limits_.max_resource_bytes);
  if (s.ok()) s = ValidateName("holder", args.holder, limits_.max_holder_bytes);
  if (s.ok()) s = ValidateDuration("ttl_ms", args.ttl, limits_.min_ttl, limits_.max_ttl);
  if (s.ok()) {
    s = ValidateDuration("wait_ms", args.wait, absl::ZeroDuration(), limits_.max_wait);
  }
  if (s.ok()) {
    s = ValidateOptionalName("request_id", args.request_id,
                             limits_.max_request_id_bytes);
  }
  return s;
}

void LockManager::Acquire(CallId id, AcquireArgs args,
                          Callback<AcquireResult> done) {
  absl::Status error = ValidateAcquire(args);
  if (error.ok()) {
    absl::MutexLock lock(&mu_);
    error = AcquireLocked(id, args, done);
  }
  if (!error.ok()) done(error);
}

absl::Status LockManager::AcquireLocked(CallId id, const AcquireArgs& args,
                                        Callback<AcquireResult>& done) {
  if (shutting_down_) return ShuttingDownError();
  if (!broken_.ok()) return broken_;
  Resource* r = FindCurrent(args.resource);
  if (r == nullptr) {
    if (resources_.size() >= limits_.max_resources) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the lock service tracks ", resources_.size(),
          " resources, its limit (--max_resources); release unused locks or "
          "raise the limit"));
    }
    r = &resources_[args.resource];
  }
  const absl::Time now = clock_->Now();

  if (r->lease && r->lease->holder == args.holder) {
    if (!args.request_id.empty()) {
      // A retry of this holder's queued call (one loaded from the store,
      // whose client is back): answered here, so its place goes.
      auto queued = r->by_request.find(RequestKey(args.holder, args.request_id));
      if (queued != r->by_request.end()) {
        WaiterList::iterator w = queued->second;
        Supersede(*w);
        EraseWaiter(args.resource, *r, w);
      }
    }
    Reenter(args.resource, *r, args.ttl, args.request_id, std::move(done));
    return absl::OkStatus();
  }
  if (!args.request_id.empty()) {
    auto parked = r->by_request.find(RequestKey(args.holder, args.request_id));
    if (parked != r->by_request.end()) {
      Reattach(id, args, *r, parked->second, done);
      return absl::OkStatus();
    }
  }
  if (!r->lease && r->waiters.empty() && now >= r->delay_until) {
    Grant(args.resource, *r, args.holder, args.ttl, args.request_id, std::move(done));
    return absl::OkStatus();
  }
  if (args.wait == absl::ZeroDuration()) {
    Reply(std::move(done), absl::StatusOr<AcquireResult>(NotAcquired(*r)));
    MaybeForget(args.resource);
    return absl::OkStatus();
  }
  if (r->waiters.size() >= limits_.max_waiters_per_resource) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "resource '", args.resource, "' already has ", r->waiters.size(),
        " waiters, the limit (--max_waiters_per_resource); retry later or "
        "use a try-lock (wait_ms = 0)"));
  }
  if (parked_.size() >= limits_.max_waiters_total) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the lock service has ", parked_.size(),
        " waiting Acquire calls, its limit (--max_waiters_total); retry later"));
  }
  // With a request id its place survives a restart or a failover (see the
  // header).
  const uint64_t seq = args.request_id.empty() ? 0 : next_waiter_seq_++;
  auto waiter = LinkWaiter(*r, r->waiters.end(),
                           Waiter{id, args.holder, args.ttl, args.request_id,
                                  std::move(done), 0, seq});
  waiter->timer =
      SetTimer(now + args.wait, [id](LockManager& m) { m.OnWaitTimeout(id); });
  parked_.emplace(id, std::make_pair(args.resource, waiter));
  if (seq != 0) PersistWaiter(args.resource, *waiter, /*present=*/true);
  return absl::OkStatus();
}

void LockManager::Reenter(const std::string& name, Resource& r, absl::Duration ttl,
                          const std::string& request_id, Callback<AcquireResult> done) {
  HeldLease& lease = *r.lease;
  const bool retry = !request_id.empty() &&
                     std::find(lease.request_ids.begin(), lease.request_ids.end(),
                               request_id) != lease.request_ids.end();
  if (!retry) {
    ++lease.hold_count;
    RememberRequest(lease, request_id);
    lease.expiry = std::max(lease.expiry, CappedExpiry(lease, ttl));
    lease.ttl = std::max(lease.ttl, ttl);
    Persist(name, r);
  }
  Reply(std::move(done),
        absl::StatusOr<AcquireResult>(Acquired(lease, lease.expiry - clock_->Now())));
}

void LockManager::Supersede(Waiter& w) {
  if (w.id == 0) return;
  // Still parked: the client gave up on that call and retried.
  parked_.erase(w.id);
  clock_->Cancel(w.timer);
  Reply(std::move(w.done), absl::StatusOr<AcquireResult>(absl::CancelledError(
                               "superseded by a retry with the same request_id")));
  w.id = 0;
}

void LockManager::Reattach(CallId id, const AcquireArgs& args, Resource& r,
                           WaiterList::iterator w, Callback<AcquireResult>& done) {
  Supersede(*w);
  w->id = id;
  w->ttl = args.ttl;
  w->done = std::move(done);
  w->timer = SetTimer(clock_->Now() + args.wait,
                      [id](LockManager& m) { m.OnWaitTimeout(id); });
  parked_.emplace(id, std::make_pair(args.resource, w));
  GrantWaiters(args.resource, r);  // it may head a free queue
}

LockManager::WaiterList::iterator LockManager::LinkWaiter(Resource& r,
                                                          WaiterList::iterator place,
                                                          Waiter w) {
  auto it = r.waiters.insert(place, std::move(w));
  if (it->seq != 0) r.by_request.emplace(RequestKey(it->holder, it->request_id), it);
  ++r.waiters_of[it->holder];
  return it;
}

void LockManager::UnlinkWaiter(Resource& r, WaiterList::iterator w) {
  if (w->seq != 0) r.by_request.erase(RequestKey(w->holder, w->request_id));
  auto count = r.waiters_of.find(w->holder);
  if (--count->second == 0) r.waiters_of.erase(count);
  r.waiters.erase(w);
}

void LockManager::EraseWaiter(const std::string& name, Resource& r,
                              WaiterList::iterator w) {
  if (w->seq != 0) PersistWaiter(name, *w, /*present=*/false);
  UnlinkWaiter(r, w);
}

void LockManager::DropDetachedWaiters() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (auto& [name, r] : resources_) {
    for (auto w = r.waiters.begin(); w != r.waiters.end();) {
      auto next = std::next(w);
      if (w->id == 0) {
        LogInfo("dropping the waiter of '%s' for '%s': its client did not retry within "
                "%s (--waiter_reattach_grace)",
                w->holder, name, absl::FormatDuration(limits_.waiter_reattach_grace));
        EraseWaiter(name, r, w);
        names.push_back(name);
      }
      w = next;
    }
  }
  for (const std::string& name : names) {
    auto it = resources_.find(name);
    if (it == resources_.end()) continue;
    GrantWaiters(name, it->second);
    MaybeForget(name);
  }
}

void LockManager::CancelAcquire(CallId id) {
  Callback<AcquireResult> done;
  {
    absl::MutexLock lock(&mu_);
    auto it = parked_.find(id);
    if (it == parked_.end()) return;
    auto [name, waiter] = std::move(it->second);
    parked_.erase(it);
    clock_->Cancel(waiter->timer);
    done = std::move(waiter->done);
    EraseWaiter(name, resources_[name], waiter);
    MaybeForget(name);
  }
  done(absl::CancelledError("the Acquire call was cancelled by the client"));
}

void LockManager::OnWaitTimeout(CallId id) {
  absl::MutexLock lock(&mu_);
  auto it = parked_.find(id);
  if (it == parked_.end()) return;  // granted or cancelled meanwhile
  auto [name, waiter] = std::move(it->second);
  parked_.erase(it);
  Callback<AcquireResult> done = std::move(waiter->done);
  Resource& r = resources_[name];
  EraseWaiter(name, r, waiter);
  Reply(std::move(done), absl::StatusOr<AcquireResult>(NotAcquired(r)));
  MaybeForget(name);
}

void LockManager::Grant(const std::string& name, Resource& r,
                        const std::string& holder, absl::Duration ttl,
                        const std::string& request_id,
                        Callback<AcquireResult> done) {
  const absl::Time now = clock_->Now();
  HeldLease lease;
  lease.holder = holder;
  lease.token = ++last_token_;
  lease.ttl = ttl;
  lease.acquired_at = now;
  lease.expiry = CappedExpiry(lease, ttl);
  lease.hold_count = 1;
  RememberRequest(lease, request_id);
  FENCEGATE_LEASE_EVENT("grant", name, lease.token, ttl);  // test builds only
  r.lease = std::move(lease);
  ArmExpiry(name, *r.lease);
  Persist(name, r);
  MoveFence(FenceEvent{FenceEvent::Kind::kGranted, name, r.lease->token, r.lease->token});
  Reply(std::move(done), absl::StatusOr<AcquireResult>(Acquired(*r.lease, r.lease->expiry - now)));
}

void LockManager::GrantWaiters(const std::string& name, Resource& r) {
  if (!r.lease) {
    if (r.waiters.empty() || clock_->Now() < r.delay_until) return;
    // A loaded waiter whose client has not retried yet keeps its turn: the
    // queue waits for it (at most waiter_reattach_grace).
    if (r.waiters.front().id == 0) return;
    // Copy, not move, what the grant needs: EraseWaiter() finds the waiter's
    // entry in by_request by its holder and request id.
    Waiter& next = r.waiters.front();
    const std::string holder = next.holder;
    const std::string request_id = next.request_id;
    const absl::Duration ttl = next.ttl;
    Callback<AcquireResult> done = std::move(next.done);
    parked_.erase(next.id);
    clock_->Cancel(next.timer);
    EraseWaiter(name, r, r.waiters.begin());
    Grant(name, r, holder, ttl, request_id, std::move(done));
  }
  GrantHolderWaiters(name, r);
}

void LockManager::GrantHolderWaiters(const std::string& name, Resource& r) {
  const std::string& holder = r.lease->holder;
  if (r.waiters_of.count(holder) == 0) return;
  for (auto w = r.waiters.begin(); w != r.waiters.end();) {
    auto next = std::next(w);
    if (w->id != 0 && w->holder == holder) {
      // As in GrantWaiters(): copy what EraseWaiter() still reads.
      const absl::Duration ttl = w->ttl;
      const std::string request_id = w->request_id;
      Callback<AcquireResult> done = std::move(w->done);
      parked_.erase(w->id);
      clock_->Cancel(w->timer);
      EraseWaiter(name, r, w);
      Reenter(name, r, ttl, request_id, std::move(done));
    }
    w = next;
  }
}

// ------------------------------------------------------------ Renew/Release

void LockManager::Renew(RenewArgs args, Callback<RenewResult> done) {
  absl::Status error =
      ValidateName("resource", args.resource, limits_.max_resource_bytes);
  if (error.ok()) error = ValidateToken("token", args.token);
  if (error.ok()) {
    error = ValidateDuration("ttl_ms", args.ttl, limits_.min_ttl, limits_.max_ttl);
  }
  if (error.ok()) {
    absl::MutexLock lock(&mu_);
    error = !broken_.ok() ? broken_ : absl::OkStatus();
    if (error.ok()) {
      Resource* r = FindCurrent(args.resource);
      absl::Status owner;
      if (r == nullptr || !r->lease || r->lease->token != args.token) {
        Reply(std::move(done), absl::StatusOr<RenewResult>(
                                   LeaseLost("renew", args.resource, args.token, r)));
      } else if (!(owner = CheckOwner("renew", args.resource, *r->lease, args.caller))
                      .ok()) {
        Reply(std::move(done), absl::StatusOr<RenewResult>(owner));
      } else {
        HeldLease& lease = *r->lease;
        const absl::Time now = clock_->Now();
        const absl::Time before = lease.expiry;
        lease.expiry = CappedExpiry(lease, args.ttl);  // extend TO, not by
        if (lease.expiry < before) {
          // Shortened: the timer may be set for the old expiry, too late
          // to end the lease and hand it on at the new one.
          clock_->Cancel(lease.expiry_timer);
          ArmExpiry(args.resource, lease);
        }
        if (args.ttl > lease.ttl) {
          lease.ttl = args.ttl;
          Persist(args.resource, *r);
        }
        Reply(std::move(done), absl::StatusOr<RenewResult>(RenewResult{lease.expiry - now}));
      }
      MaybeForget(args.resource);
    }
  }
  if (!error.ok()) done(error);
}

void LockManager::Release(ReleaseArgs args, Callback<ReleaseResult> done) {
  absl::Status error =
      ValidateName("resource", args.resource, limits_.max_resource_bytes);
  if (error.ok()) error = ValidateToken("token", args.token);
  if (error.ok()) {
    error = ValidateOptionalName("request_id", args.request_id,
                                 limits_.max_request_id_bytes);
  }
  if (error.ok()) {
    absl::MutexLock lock(&mu_);
    error = !broken_.ok() ? broken_ : absl::OkStatus();
    if (error.ok()) {
      Resource* r = FindCurrent(args.resource);
      absl::Status owner;
      if (r == nullptr || !r->lease || r->lease->token != args.token) {
        Reply(std::move(done), absl::StatusOr<ReleaseResult>(LeaseLost(
                                   "release", args.resource, args.token, r)));
      } else if (!(owner = CheckOwner("release", args.resource, *r->lease,
                                      args.caller))
                      .ok()) {
        Reply(std::move(done), absl::StatusOr<ReleaseResult>(owner));
      } else {
        HeldLease& lease = *r->lease;
        const bool retry =
            !args.request_id.empty() &&
            std::find(lease.request_ids.begin(), lease.request_ids.end(),
                      args.request_id) != lease.request_ids.end();
        if (!retry) {
          --lease.hold_count;
          RememberRequest(lease, args.request_id);
        }
        const uint32_t left = lease.hold_count;
        if (left == 0) {
          EndLease(args.resource, *r, /*expired=*/false);
        } else if (!retry) {
          Persist(args.resource, *r);
        }
        Reply(std::move(done), absl::StatusOr<ReleaseResult>(ReleaseResult{left}));
      }
      MaybeForget(args.resource);
    }
  }
  if (!error.ok()) done(error);
}

absl::Status LockManager::LeaseLost(absl::string_view op,
                                    const std::string& resource, uint64_t token,
                                    const Resource* r) const {
  const uint64_t holder_token = r != nullptr && r->lease ? r->lease->token : 0;
  std::string now_held =
      holder_token == 0 ? std::string("nobody holds it now")
                        : absl::StrCat("it is held with token ", holder_token);
  return LeaseLostError(
      absl::StrCat("lease lost: cannot ", op, " resource '", resource,
                   "' with token ", token, ": ", now_held,
                   ". Stop writing and acquire the lock again"),
      holder_token);
}

bool HeldBy(absl::string_view holder, absl::string_view caller) {
  return holder == caller ||
         (holder.size() > caller.size() && absl::StartsWith(holder, caller) &&
          holder[caller.size()] == '/');
}

absl::Status LockManager::CheckOwner(absl::string_view op, const std::string& resource,
                                     const HeldLease& lease, const std::string& caller) {
  if (caller.empty() || HeldBy(lease.holder, caller)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "cannot ", op, " resource '", resource, "' with token ", lease.token,
      ": the lease belongs to '", lease.holder, "', and your certificate says '",
      caller, "'; only the holder may renew or release its lease"));
}

// ---------------------------------------------------------------- Describe

void LockManager::Describe(std::string resource, Callback<ResourceInfo> done) {
  absl::Status error = ValidateName("resource", resource, limits_.max_resource_bytes);
  if (error.ok()) {
    absl::MutexLock lock(&mu_);
    error = !broken_.ok() ? broken_ : absl::OkStatus();
    if (error.ok()) {
      ResourceInfo info;
      const absl::Time now = clock_->Now();
      if (Resource* r = FindCurrent(resource)) {
        if (r->lease) {
          info.held = true;
          info.holder = r->lease->holder;
          info.token = r->lease->token;
          info.remaining = r->lease->expiry - now;
          info.hold_count = r->lease->hold_count;
        } else if (now < r->delay_until) {
          info.lock_delay_remaining = r->delay_until - now;
        }
        info.waiters = static_cast<uint32_t>(r->waiters.size());
      }
      Reply(std::move(done), absl::StatusOr<ResourceInfo>(std::move(info)));
      MaybeForget(resource);
    }
  }
  if (!error.ok()) done(error);
}

// ---------------------------------------------------------- Lease lifetime

LockManager::Resource* LockManager::FindCurrent(const std::string& name) {
  auto it = resources_.find(name);
  if (it == resources_.end()) return nullptr;
  Resource& r = it->second;
  // The expiry timer may not have run yet; a lease past its expiry is gone.
  if (r.lease && clock_->Now() >= r.lease->expiry) EndLease(name, r, /*expired=*/true);
  return &r;
}

void LockManager::EndLease(const std::string& name, Resource& r, bool expired) {
  FENCEGATE_LEASE_EVENT(expired ? "expire" : "release", name, r.lease->token,
                        r.lease->ttl);  // test builds only
  clock_->Cancel(r.lease->expiry_timer);
  if (expired) {
    // The expiry mark: a token of its own, so the expired holder is fenced
    // out and the next grant (a larger token) still passes.
    const uint64_t mark = ++last_token_;
    MoveFence(FenceEvent{FenceEvent::Kind::kExpired, name, r.lease->token, mark});
  }
  r.lease.reset();
  Persist(name, r);
  if (expired && limits_.lock_delay > absl::ZeroDuration()) {
    r.delay_until = clock_->Now() + limits_.lock_delay;
    SetTimer(r.delay_until, [name](LockManager& m) { m.OnDelayEnd(name); });
  }
  GrantWaiters(name, r);
}

void LockManager::OnLeaseTimer(const std::string& name, uint64_t token) {
  absl::MutexLock lock(&mu_);
  auto it = resources_.find(name);
  if (it == resources_.end() || !it->second.lease ||
      it->second.lease->token != token) {
    return;  // released, or a newer lease: its own timer covers it
  }
  if (clock_->Now() < it->second.lease->expiry) {
    ArmExpiry(name, *it->second.lease);  // renewed since this timer was set
    return;
  }
  it->second.lease->expiry_timer = 0;  // this one, now running
  EndLease(name, it->second, /*expired=*/true);
  MaybeForget(name);
}

void LockManager::OnDelayEnd(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = resources_.find(name);
  if (it == resources_.end()) return;
  GrantWaiters(name, it->second);
  MaybeForget(name);
}

void LockManager::ArmExpiry(const std::string& name, HeldLease& lease) {
  uint64_t token = lease.token;
  lease.expiry_timer = SetTimer(
      lease.expiry, [name, token](LockManager& m) { m.OnLeaseTimer(name, token); });
}

absl::Time LockManager::CappedExpiry(const HeldLease& lease,
                                     absl::Duration ttl) const {
  absl::Time expiry = clock_->Now() + ttl;
  if (limits_.max_hold > absl::ZeroDuration()) {
    expiry = std::min(expiry, lease.acquired_at + limits_.max_hold);
  }
  return expiry;
}

void LockManager::RememberRequest(HeldLease& lease, const std::string& request_id) {
  if (request_id.empty()) return;
  lease.request_ids.push_back(request_id);
  while (lease.request_ids.size() > limits_.remembered_request_ids) {
    lease.request_ids.pop_front();
  }
}

void LockManager::MaybeForget(const std::string& name) {
  auto it = resources_.find(name);
  if (it == resources_.end()) return;
  const Resource& r = it->second;
  if (!r.lease && r.waiters.empty() && clock_->Now() >= r.delay_until) {
    resources_.erase(it);
  }
}

AcquireResult LockManager::Acquired(const HeldLease& lease, absl::Duration ttl) {
  AcquireResult result;
  result.acquired = true;
  result.token = lease.token;
  result.ttl = ttl;
  result.hold_count = lease.hold_count;
  return result;
}

AcquireResult LockManager::NotAcquired(const Resource& r) {
  const absl::Time now = clock_->Now();
  AcquireResult result;
  if (r.lease) {
    result.reason = NotAcquiredReason::kHeld;
    result.holder_token = r.lease->token;
    result.retry_after = r.lease->expiry - now;
  } else if (now < r.delay_until) {
    result.reason = NotAcquiredReason::kLockDelay;
    result.retry_after = r.delay_until - now;
  } else {
    result.reason = NotAcquiredReason::kHeld;  // others are queued ahead
  }
  return result;
}

// ------------------------------------------------------------ Group commit

template <typename T>
void LockManager::Reply(Callback<T> done, absl::StatusOr<T> result) {
  CommitItem item;
  item.reply = [done = std::move(done), result = std::move(result)](
                   const absl::Status& commit) mutable {
    if (commit.ok()) {
      done(std::move(result));
    } else {
      done(commit);
    }
  };
  Enqueue(std::move(item));
}

void LockManager::Persist(const std::string& name, const Resource& r) {
  CommitItem item;
  item.persist = true;
  item.resource = name;
  if (r.lease) {
    item.lease = ToRecord(name, r.lease->holder, r.lease->token, r.lease->ttl,
                          r.lease->hold_count, r.lease->request_ids);
  }
  Enqueue(std::move(item));
}

void LockManager::MoveFence(FenceEvent event) {
  CommitItem item;
  item.fence = std::move(event);
  Enqueue(std::move(item));
}

void LockManager::PersistWaiter(const std::string& name, const Waiter& w, bool present) {
  CommitItem item;
  item.waiter_seq = w.seq;
  if (present) item.waiter = WaiterRecord{w.seq, name, w.holder, w.ttl, w.request_id};
  Enqueue(std::move(item));
}

void LockManager::Enqueue(CommitItem item) {
  item.epoch = epoch_;
  item.last_token = last_token_;
  // Before Create() finishes (loading the store) nothing is queued.
  if (commits_) commits_->Submit(std::move(item));
}

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
  absl::flat_hash_map<std::string, size_t> fence_of;
  // Waiter rows by seq; one parked and granted within the batch cancels out.
  absl::flat_hash_map<uint64_t, std::optional<WaiterRecord>> waiter_rows;
  std::vector<FenceEvent> events;
  for (CommitItem& item : batch) {
    if (item.epoch != epoch) continue;  // decided on state a failure discarded
    rows.last_token = std::max(rows.last_token, item.last_token);
    if (item.waiter_seq != 0) {
      auto it = waiter_rows.find(item.waiter_seq);
      if (it != waiter_rows.end() && it->second && !item.waiter) {
        waiter_rows.erase(it);
      } else {
        waiter_rows[item.waiter_seq] = std::move(item.waiter);
      }
    }
    if (item.fence) {
      auto [it, inserted] = fence_of.emplace(item.fence->resource, rows.fence_positions.size());
      if (inserted) {
        rows.fence_positions.push_back({item.fence->resource, item.fence->position});
      } else {
        rows.fence_positions[it->second].position = item.fence->position;
      }
      events.push_back(*std::move(item.fence));
    }
    if (!item.persist) continue;
    auto [it, inserted] = row_of.emplace(item.resource, rows.leases.size());
    if (inserted) {
      rows.leases.emplace_back(item.resource, std::move(item.lease));
    } else {
      rows.leases[it->second].second = std::move(item.lease);
    }
  }
  // A batch that changes nothing still goes to the store, empty: the replies
  // in it were decided from memory, and a store whose memory can go stale
  // (etcd: a deposed leader) confirms they are current. The counter only
  // moves with a change, so it has nothing to add then.
  for (auto& [seq, waiter] : waiter_rows) rows.waiters.emplace_back(seq, std::move(waiter));
  if (rows.leases.empty() && rows.fence_positions.empty()) rows.last_token = 0;
  if (FENCEGATE_PLANTED_BUG("lock_token_replied_before_commit")) {  // test builds only
    for (CommitItem& item : batch) {
      if (item.reply && item.epoch == epoch) std::exchange(item.reply, nullptr)(absl::OkStatus());
    }
  }
  absl::Status commit = store_->Commit(rows);
  if (commit.ok() && !rows.empty()) FENCEGATE_FAILPOINT("lock.after_commit");  // test builds only
  if (commit.ok() && feed_ != nullptr) feed_->Publish(events);
  if (!commit.ok()) {
    Recover(commit);
    commit = absl::UnavailableError(absl::StrCat(
        "the lock service could not commit this request (", commit.message(),
        "); nothing was applied; retry"));
  }
  const absl::Status stale = absl::UnavailableError(
      "the lock service's store failed before this request was committed; "
      "nothing was applied; retry");
  for (CommitItem& item : batch) {
    if (item.reply) item.reply(item.epoch == epoch ? commit : stale);
  }
}

void LockManager::Recover(const absl::Status& commit_error) {
  absl::MutexLock lock(&mu_);
  LogError("lock store commit failed: %s; reloading the last committed state",
           commit_error.ToString());
  ++epoch_;
  absl::Status status = LoadFromStore();
  if (!status.ok()) {
    broken_ = absl::UnavailableError(absl::StrCat(
        "the lock service's store failed and could not be reloaded (",
        status.message(), "); restart the lock service"));
    LogError("%s", broken_.ToString());
  }
}

absl::Status LockManager::LoadFromStore() {
  absl::StatusOr<LockStoreState> state = store_->Load();
  if (!state.ok()) return state.status();
  FENCEGATE_LEASE_EVENT("load", "", 0, absl::ZeroDuration());  // test builds only
  if (FENCEGATE_PLANTED_BUG("lock_leases_forgotten_on_restart")) state->leases.clear();  // test builds only
  const absl::Time now = clock_->Now();
  for (auto& [name, r] : resources_) {
    if (r.lease) clock_->Cancel(r.lease->expiry_timer);
    r.lease.reset();
  }
  last_token_ = state->last_token;
  for (LeaseRecord& record : state->leases) {
    FENCEGATE_LEASE_EVENT("restore", record.resource, record.token, record.ttl);  // test builds only
    HeldLease lease;
    lease.holder = std::move(record.holder);
    lease.token = record.token;
    lease.ttl = record.ttl;
    // The "delay restart" rule: held for a full TTL from now, and the
    // max_hold cap counts from now too (a lease re-armed past its cap would
    // take renewals that end it at once).
    lease.acquired_at = now;
    lease.expiry = CappedExpiry(lease, record.ttl);
    lease.hold_count = record.hold_count;
    lease.request_ids.assign(record.request_ids.begin(), record.request_ids.end());
    last_token_ = std::max(last_token_, lease.token);
    Resource& r = resources_[record.resource];
    r.lease = std::move(lease);
    ArmExpiry(record.resource, *r.lease);
  }
  // Waiters keep their places, detached until their clients retry.
  bool detached = false;
  for (WaiterRecord& record : state->waiters) {
    next_waiter_seq_ = std::max(next_waiter_seq_, record.seq + 1);
    Resource& r = resources_[record.resource];
    const std::string key = RequestKey(record.holder, record.request_id);
    if (r.by_request.count(key) > 0) continue;  // still parked here (a reload)
    auto place = std::find_if(r.waiters.begin(), r.waiters.end(),
                              [&](const Waiter& w) { return w.seq > record.seq; });
    LinkWaiter(r, place,
               Waiter{0, std::move(record.holder), record.ttl, std::move(record.request_id),
                      nullptr, 0, record.seq});
    detached = true;
  }
  if (detached) {
    SetTimer(now + limits_.waiter_reattach_grace,
             [](LockManager& m) { m.DropDetachedWaiters(); });
  }
  std::vector<std::string> names;
  for (auto& [name, r] : resources_) names.push_back(name);
  for (const std::string& name : names) {
    GrantWaiters(name, resources_[name]);
    MaybeForget(name);
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------- Lifecycle

void LockManager::Shutdown() {
  std::vector<Callback<AcquireResult>> parked;
  {
    absl::MutexLock lock(&mu_);
    shutting_down_ = true;
    // Their rows stay: the next leader, or this process restarted, keeps
    // their places for their retries.
    for (auto& [id, entry] : parked_) {
      clock_->Cancel(entry.second->timer);
      parked.push_back(std::move(entry.second->done));
      UnlinkWaiter(resources_[entry.first], entry.second);
    }
    parked_.clear();
  }
  for (auto& done : parked) done(ShuttingDownError());
}

void LockManager::Sync() {
  absl::Notification delivered;
  {
    absl::MutexLock lock(&mu_);
    CommitItem item;
    item.reply = [&delivered](const absl::Status&) { delivered.Notify(); };
    Enqueue(std::move(item));
  }
  delivered.WaitForNotification();
}

}  // namespace fencegate::lockservice
