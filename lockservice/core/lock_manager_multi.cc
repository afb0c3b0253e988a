// Several resources at once (AcquireMany, lock_manager.h): granted all
// together in one decision, or parked in every resource's queue at once.
//
// Why no deadlock: a parked AcquireMany enters all its queues within one
// decision, under the manager's mutex, so any two calls stand in the same
// order in every queue they share. A call is granted only when it heads each
// of its queues (or re-enters its own lease there); the call that is first
// everywhere it stands cannot be waiting for one behind it, so the waits
// form no cycle.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lockservice/core/lock_call_validation.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_manager_internal.h"

namespace fencegate::lockservice {
namespace {

// Gathers one AcquireMany's per-resource replies, which are delivered in
// order on the commit thread, into its one reply.
class ManyReply {
 public:
  ManyReply(size_t count, Callback<MultiAcquireResult> done)
      : leases_(count), left_(count), done_(std::move(done)) {}

  void Set(size_t i, absl::StatusOr<AcquireResult> result) {
    if (!result.ok()) {
      if (error_.ok()) error_ = result.status();
    } else {
      leases_[i] = *std::move(result);
    }
    if (--left_ != 0) return;
    if (!error_.ok()) {
      done_(error_);
      return;
    }
    MultiAcquireResult all;
    all.acquired = true;
    all.leases = std::move(leases_);
    done_(std::move(all));
  }

 private:
  std::vector<AcquireResult> leases_;
  size_t left_;
  absl::Status error_;
  Callback<MultiAcquireResult> done_;
};

}  // namespace

void LockManager::AcquireMany(CallId id, MultiAcquireArgs args,
                              Callback<MultiAcquireResult> done) {
  absl::Status error = ValidateAcquireMany(
      args, limits_, std::min(limits_.max_multi_resources, kMaxMultiResources));
  if (error.ok()) error = CheckBacklog(commits_->PendingGroups(), limits_);
  if (error.ok()) {
    CommitArrival arrival = Arriving();  // the decision's items commit together
    DecisionLock lock(this);
    error = AcquireManyLocked(id, args, done);
  }
  if (!error.ok()) done(error);
}

absl::Status LockManager::AcquireManyLocked(CallId id, const MultiAcquireArgs& args,
                                            Callback<MultiAcquireResult>& done) {
  if (shutting_down_) return ShuttingDownError();
  if (!broken_.ok()) return broken_;
  auto forget_all = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const std::string& name : args.resources) MaybeForget(name);
  };
  std::vector<const std::string*> keys;
  std::vector<ResourceState*> rs;
  for (const std::string& name : args.resources) {
    ResourceState* r = FindCurrent(name);
    if (r == nullptr) {
      if (resources_.size() >= limits_.max_resources) {
        forget_all();
        return absl::ResourceExhaustedError(absl::StrCat(
            "the lock service tracks ", resources_.size(),
            " resources, its limit (--max_resources); release unused locks or "
            "raise the limit"));
      }
      r = &resources_[name];
    }
    AcquireArgs one;
    one.resource = name;
    one.holder = args.holder;
    one.mode = args.mode;
    if (absl::Status kind = r->CheckKind(one, clock_->Now()); !kind.ok()) {
      forget_all();
      return kind;
    }
    keys.push_back(&resources_.find(name)->first);
    rs.push_back(r);
  }
  size_t busy = 0;
  while (busy < rs.size() && FitsNow(*rs[busy], args.holder, args.mode, nullptr)) ++busy;
  if (busy == rs.size()) {
    Count(metrics_->grants[LockManagerMetrics::kImmediate]);
    EndDecision();  // the grant is a decision of its own (its size is bounded)
    GrantMany(keys, args.holder, args.mode, args.ttl, args.request_id, args.listener,
              std::move(done));
    return absl::OkStatus();
  }
  if (args.wait == absl::ZeroDuration()) {
    RefuseTryMany(args, rs, busy, std::move(done));
    forget_all();
    return absl::OkStatus();
  }
  for (size_t i = 0; i < rs.size(); ++i) {
    if (rs[i]->Waiting() >= limits_.max_waiters_per_resource) {
      forget_all();
      return absl::ResourceExhaustedError(absl::StrCat(
          "resource '", args.resources[i], "' already has ", rs[i]->Waiting(),
          " waiters, the limit (--max_waiters_per_resource); retry later or "
          "use a try-lock (wait_ms = 0)"));
    }
  }
  if (parked_.size() >= limits_.max_waiters_total) {
    forget_all();
    return absl::ResourceExhaustedError(absl::StrCat(
        "the lock service has ", parked_.size(),
        " waiting Acquire calls, its limit (--max_waiters_total); retry later"));
  }
  const absl::Time now = clock_->Now();
  auto call = std::make_unique<ParkedCalls::Many>();
  call->holder = args.holder;
  call->ttl = args.ttl;
  call->request_id = args.request_id;
  call->mode = args.mode;
  call->listener = args.listener;
  call->deadline = CompactTime(now + args.wait);
  call->parked_at = CompactTime(now);
  call->done = std::move(done);
  for (size_t i = 0; i < rs.size(); ++i) {
    // No request id in the queue: a parked AcquireMany is not persisted, so
    // no retry finds its places.
    auto w = LinkWaiter(*rs[i], rs[i]->EnsureQueue().end(),
                        Waiter{id, args.holder, args.ttl, "", nullptr, call->deadline, 0,
                               args.listener, CompactTime(now), args.mode,
                               /*many=*/true, 0});
    call->places.push_back({keys[i], w});
  }
  parked_.ParkMany(id, std::move(call));
  return absl::OkStatus();
}

void LockManager::ReplyTryManyRefused(const std::string& name, const ResourceState& r,
                                      Callback<MultiAcquireResult> done) {
  MultiAcquireResult refused;
  refused.busy_resource = name;
  refused.busy = r.NotAcquired(clock_->Now());
  Count(metrics_->not_granted[refused.busy.reason == NotAcquiredReason::kLockDelay
                                  ? LockManagerMetrics::kLockDelay
                                  : LockManagerMetrics::kHeld]);
  decision_.Reply(std::move(done),
                  absl::StatusOr<MultiAcquireResult>(std::move(refused)));
}

bool LockManager::FitsNow(ResourceState& r, const std::string& holder, LeaseMode mode,
                          const Waiter* w) const {
  if (r.ReentrantLease(holder, mode) != nullptr) return true;
  const bool ahead = w == nullptr ? r.Waiting() != 0 : &r.queue->front() != w;
  return !ahead && CanGrant(r, holder, mode);
}

void LockManager::GrantMany(const std::vector<const std::string*>& names,
                            const std::string& holder, LeaseMode mode, absl::Duration ttl,
                            const std::string& request_id, LeaseListener* listener,
                            Callback<MultiAcquireResult> done) {
  auto reply = std::make_shared<ManyReply>(names.size(), std::move(done));
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = *names[i];
    ResourceState& r = resources_.find(name)->second;
    Callback<AcquireResult> one = [reply, i](absl::StatusOr<AcquireResult> result) {
      reply->Set(i, std::move(result));
    };
    if (HeldLease* held = r.ReentrantLease(holder, mode)) {
      Reenter(name, r, *held, ttl, request_id, std::move(one), listener);
    } else {
      Grant(name, r, holder, mode, ttl, request_id, std::move(one), listener);
    }
  }
  EndDecision();
}

bool LockManager::GrantParkedMany(CallId id) {
  const ParkedCalls::Many* call = parked_.FindMany(id);
  if (call == nullptr) return false;
  for (const auto& [key, w] : call->places) {
    if (!FitsNow(resources_.find(*key)->second, call->holder, call->mode, &*w))
      return false;
  }
  EndDecision();  // the grant is a decision of its own (its size is bounded)
  std::unique_ptr<ParkedCalls::Many> granted = UnparkMany(id);
  const absl::Duration waited = clock_->Now() - granted->parked_at.get();
  Observe(metrics_->wait_seconds, absl::ToDoubleSeconds(waited));
  Count(metrics_->grants[LockManagerMetrics::kWaited]);
  std::vector<const std::string*> keys;
  for (const auto& [key, w] : granted->places) keys.push_back(key);
  GrantMany(keys, granted->holder, granted->mode, granted->ttl, granted->request_id,
            granted->listener, TellingWaited(std::move(granted->done), waited));
  // The queues it stood in may let others in now (readers behind a shared
  // AcquireMany). Nothing is forgotten here: the caller's loop still serves
  // one of them, and each is held now.
  for (const std::string* key : keys) GrantWaiters(*key, resources_.find(*key)->second);
  return true;
}

std::unique_ptr<ParkedCalls::Many> LockManager::UnparkMany(CallId id) {
  std::unique_ptr<ParkedCalls::Many> call = parked_.UnparkMany(id);
  if (call == nullptr) return nullptr;
  for (const auto& [key, w] : call->places)
    UnlinkWaiter(resources_.find(*key)->second, w);
  return call;
}

void LockManager::EndParkedMany(CallId id, absl::Status why) {
  const ParkedCalls::Many* parked = parked_.FindMany(id);
  if (parked == nullptr) return;
  // The first resource that holds it back, where it stands.
  size_t busy = 0;
  while (busy < parked->places.size()) {
    const auto& [key, w] = parked->places[busy];
    if (!FitsNow(resources_.find(*key)->second, parked->holder, parked->mode, &*w)) break;
    ++busy;
  }
  if (busy == parked->places.size()) busy = 0;
  std::unique_ptr<ParkedCalls::Many> call = UnparkMany(id);
  std::vector<std::string> names;
  for (const auto& [key, w] : call->places) names.push_back(*key);
  absl::StatusOr<MultiAcquireResult> result = MultiAcquireResult{};
  if (!why.ok()) {
    result = why;
  } else {
    // Its wait ran out: say which resource held it back.
    result->busy_resource = names[busy];
    result->busy = resources_.find(names[busy])->second.NotAcquired(clock_->Now());
    Count(metrics_->not_granted[LockManagerMetrics::kWaitTimeout]);
  }
  decision_.Reply(std::move(call->done), std::move(result));
  // It may have held back others at the heads of its queues.
  for (const std::string& name : names) {
    auto r = resources_.find(name);
    if (r != resources_.end()) GrantWaiters(name, r->second);
  }
  for (const std::string& name : names) MaybeForget(name);
}

}  // namespace fencegate::lockservice
