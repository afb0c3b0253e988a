#include "lockservice/core/lock_manager.h"

#include <malloc.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/core/validation.h"
#include "lockservice/core/lock_call_validation.h"
#include "lockservice/core/lock_manager_internal.h"

namespace fencegate::lockservice {
namespace {

const LockManagerMetrics kNoMetrics;

}  // namespace

LockManager::LockManager(LockStore* store, Clock* clock, const LockLimits& limits,
                         FenceFeed* feed, const LockManagerMetrics* metrics)
    : lifeline_(std::make_shared<Lifeline>()),
      test_store_(TestBuildStore(store)),
      store_(test_store_ != nullptr ? test_store_.get() : store),
      clock_(clock),
      limits_(limits),
      feed_(feed),
      metrics_(metrics != nullptr ? metrics : &kNoMetrics),
      parked_(clock,
              [this](absl::Time at) {
                return SetTimer(at, [](LockManager& m) { m.OnWaitTimer(); });
              }),
      expiries_(clock, [this](absl::Time at) {
        return SetTimer(at, [](LockManager& m) { m.OnExpiryTimer(); });
      }) {
  absl::MutexLock lock(&lifeline_->mu);
  lifeline_->manager = this;
}

absl::StatusOr<std::unique_ptr<LockManager>> LockManager::Create(
    LockStore* store, Clock* clock, const LockLimits& limits, FenceFeed* feed,
    const LockManagerMetrics* metrics) {
  std::unique_ptr<LockManager> manager(
      new LockManager(store, clock, limits, feed, metrics));
  {
    absl::MutexLock lock(&manager->mu_);
    absl::Status status = manager->LoadFromStore();
    if (!status.ok()) return status;
  }
  // The store's rows, read whole and freed (a million leases: ~250 MB),
  // stay in the process's heap unless given back: malloc keeps them for
  // reuse, and the resident memory after a restart would be the load's
  // peak, not the state's size.
  malloc_trim(0);
  LockManager* raw = manager.get();
  manager->commits_ = std::make_unique<GroupCommitQueue<CommitItem>>(
      [raw](std::vector<CommitItem>& batch) { raw->Flush(batch); }, limits.max_batch);
  return manager;
}

LockManager::~LockManager() {
  Shutdown();
  {
    // Waits for a timer callback under way and disarms the later ones, so
    // none decides while (or after) the queue below goes.
    absl::MutexLock lock(&lifeline_->mu);
    lifeline_->manager = nullptr;
  }
  commits_.reset();  // delivers every reply already decided
}

Clock::TimerId LockManager::SetTimer(absl::Time deadline,
                                     absl::AnyInvocable<void(LockManager&)> fn) {
  return clock_->RunAt(deadline, [lifeline = lifeline_, fn = std::move(fn)]() mutable {
    absl::ReaderMutexLock lock(&lifeline->mu);
    if (lifeline->manager != nullptr) fn(*lifeline->manager);
  });
}

// ---------------------------------------------------------------- Acquire

void LockManager::Acquire(CallId id, AcquireArgs args, Callback<AcquireResult> done) {
  absl::Status error = ValidateAcquire(args, limits_);
  if (error.ok()) error = CheckBacklog(commits_->PendingGroups(), limits_);
  if (error.ok()) {
    CommitArrival arrival = Arriving();  // the decision's items commit together
    DecisionLock lock(this);
    error = AcquireLocked(id, args, done);
  }
  if (!error.ok()) done(error);
}

absl::Status LockManager::AcquireLocked(CallId id, const AcquireArgs& args,
                                        Callback<AcquireResult>& done) {
  if (shutting_down_) return ShuttingDownError();
  if (!broken_.ok()) return broken_;
  ResourceState* r = FindCurrent(args.resource);
  if (r == nullptr) {
    if (resources_.size() >= limits_.max_resources) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the lock service tracks ", resources_.size(),
                       " resources, its limit (--max_resources); release unused locks or "
                       "raise the limit"));
    }
    r = &resources_[args.resource];
  }
  const absl::Time now = clock_->Now();
  if (absl::Status kind = r->CheckKind(args, now); !kind.ok()) {
    MaybeForget(args.resource);
    return kind;
  }

  HeldLease* held = r->ReentrantLease(args.holder, args.mode);
  // The exclusive holder takes a shared lease at once (a downgrade).
  const bool downgrade = held == nullptr && args.mode == LeaseMode::kShared && r->lease &&
                         r->lease->holder == args.holder &&
                         CanGrant(*r, args.holder, args.mode);
  if (held != nullptr || downgrade) {
    if (!args.request_id.empty()) {
      // A retry of this holder's queued call (one loaded from the store,
      // whose client is back): answered here, so its place goes.
      if (auto queued = r->FindParked(args.holder, args.request_id)) {
        Supersede(**queued);
        EraseWaiter(*r, *queued);
      }
    }
    if (held != nullptr) {
      Reenter(args.resource, *r, *held, args.ttl, args.request_id, std::move(done),
              args.listener, args.campaign.has_value());
    } else {
      Count(metrics_->grants[LockManagerMetrics::kImmediate]);
      Grant(args.resource, *r, args.holder, args.mode, args.ttl, args.request_id,
            std::move(done), args.listener, args.campaign ? &*args.campaign : nullptr);
    }
    // The queued call answered here may have held back those behind it.
    GrantWaiters(args.resource, *r);
    return absl::OkStatus();
  }
  if (!args.request_id.empty()) {
    if (auto parked = r->FindParked(args.holder, args.request_id)) {
      Reattach(id, args, *r, *parked, done);
      return absl::OkStatus();
    }
  }
  // A semaphore's size is fixed by its first request.
  if (args.mode == LeaseMode::kPermit) r->EnsureShared().permits = args.permits;
  if (r->Waiting() == 0 && CanGrant(*r, args.holder, args.mode)) {
    Count(metrics_->grants[LockManagerMetrics::kImmediate]);
    Grant(args.resource, *r, args.holder, args.mode, args.ttl, args.request_id,
          std::move(done), args.listener, args.campaign ? &*args.campaign : nullptr);
    return absl::OkStatus();
  }
  if (args.wait == absl::ZeroDuration()) {
    AcquireResult refused = r->NotAcquired(clock_->Now());
    Count(metrics_->not_granted[refused.reason == NotAcquiredReason::kLockDelay
                                    ? LockManagerMetrics::kLockDelay
                                    : LockManagerMetrics::kHeld]);
    decision_.Reply(std::move(done), absl::StatusOr<AcquireResult>(std::move(refused)));
    MaybeForget(args.resource);
    return absl::OkStatus();
  }
  if (r->Waiting() >= limits_.max_waiters_per_resource) {
    return absl::ResourceExhaustedError(
        absl::StrCat("resource '", args.resource, "' already has ", r->Waiting(),
                     " waiters, the limit (--max_waiters_per_resource); retry later or "
                     "use a try-lock (wait_ms = 0)"));
  }
  if (parked_.size() >= limits_.max_waiters_total) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the lock service has ", parked_.size(),
        " waiting Acquire calls, its limit (--max_waiters_total); retry later"));
  }
  // With a request id its place survives a restart or a failover
  // (docs/design.md, "The lock manager": wait queues).
  const uint64_t seq = args.request_id.empty() ? 0 : next_waiter_seq_++;
  auto waiter = LinkWaiter(
      *r, r->EnsureQueue().end(),
      Waiter{id, args.holder, args.ttl, args.request_id, std::move(done), CompactTime(),
             seq, args.listener, CompactTime(now), args.mode,
             /*many=*/false, args.permits,
             args.campaign ? std::make_unique<std::string>(*args.campaign) : nullptr});
  parked_.Park(id, {&resources_.find(args.resource)->first, waiter}, now + args.wait);
  if (seq != 0) decision_.PutWaiter(args.resource, *waiter);
  return absl::OkStatus();
}

// ------------------------------------------------- A waiter in its queue

WaitQueue::iterator LockManager::LinkWaiter(ResourceState& r, WaitQueue::iterator place,
                                            Waiter w) {
  ++waiters_;
  return r.EnsureQueue().Link(place, std::move(w));
}

void LockManager::UnlinkWaiter(ResourceState& r, WaitQueue::iterator w) {
  r.queue->Unlink(w);  // left empty, it goes in MaybeForget
  --waiters_;
}

// ---------------------------------------------------------------- Describe

void LockManager::Describe(std::string resource, Callback<ResourceInfo> done) {
  absl::Status error = ValidateName("resource", resource, limits_.max_resource_bytes);
  if (error.ok()) error = CheckBacklog(commits_->PendingGroups(), limits_);
  if (error.ok()) {
    DecisionLock lock(this);
    error = !broken_.ok() ? broken_ : absl::OkStatus();
    if (error.ok()) {
      ResourceInfo info;
      if (ResourceState* r = FindCurrent(resource)) info = r->Info(clock_->Now());
      decision_.Reply(std::move(done), absl::StatusOr<ResourceInfo>(std::move(info)));
      MaybeForget(resource);
    }
  }
  if (!error.ok()) done(error);
}

// ------------------------------------------------------------- Listeners

absl::Status LockManager::AddListener(LeaseListener* listener) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return ShuttingDownError();
  if (!broken_.ok()) return broken_;
  listeners_.Add(listener);
  return absl::OkStatus();
}

void LockManager::RemoveListener(LeaseListener* listener) {
  absl::MutexLock lock(&mu_);
  listeners_.Remove(listener);
}

// ------------------------------------------------------------ For metrics

LockStateFigures LockManager::Figures() {
  absl::MutexLock lock(&mu_);
  LockStateFigures figures;
  figures.leases_held = expiries_.size();
  figures.waiters = waiters_;
  figures.resources = resources_.size();
  figures.last_token = last_token_;
  return figures;
}

std::vector<ResourceSummary> LockManager::TopResources(absl::string_view prefix,
                                                       size_t limit) {
  std::vector<ResourceSummary> top;
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  for (const auto& [name, r] : resources_) {
    if (!absl::StartsWith(name, prefix)) continue;
    ResourceSummary s;
    s.resource = name;
    s.info = r.Info(now);
    top.push_back(std::move(s));
  }
  auto before = [](const ResourceSummary& a, const ResourceSummary& b) {
    if (a.info.waiters != b.info.waiters) return a.info.waiters > b.info.waiters;
    return a.resource < b.resource;
  };
  if (top.size() > limit) {
    std::partial_sort(top.begin(), top.begin() + limit, top.end(), before);
    top.resize(limit);
  } else {
    std::sort(top.begin(), top.end(), before);
  }
  return top;
}

// ------------------------------------------------------------- Lifecycle

void LockManager::Shutdown() { Shutdown(ShuttingDownError()); }

void LockManager::Shutdown(const absl::Status& why) {
  std::vector<Callback<AcquireResult>> parked;
  std::vector<Callback<MultiAcquireResult>> parked_many;
  std::vector<LeaseListener*> listeners;
  std::vector<ElectionObserver*> observers;
  {
    DecisionLock lock(this);
    shutting_down_ = true;
    listeners = listeners_.TakeAll();
    observers = elections_.TakeObservers();
    // Their rows stay: the next leader, or this process restarted, keeps
    // their places for their retries.
    auto [ones, many] = parked_.TakeAll();
    for (const ParkedCalls::Place& place : ones) {
      parked.push_back(std::move(place.waiter->done));
      UnlinkWaiter(resources_.find(*place.resource)->second, place.waiter);
    }
    for (std::unique_ptr<ParkedCalls::Many>& call : many) {
      for (const auto& [key, w] : call->places) {
        UnlinkWaiter(resources_.find(*key)->second, w);
      }
      parked_many.push_back(std::move(call->done));
    }
  }
  for (auto& done : parked) done(why);
  for (auto& done : parked_many) done(why);
  StopListeners(std::move(listeners), why);
  StopObservers(std::move(observers), why);
}

void LockManager::Sync() {
  absl::Notification delivered;
  {
    DecisionLock lock(this);
    decision_.Deliver([&delivered](const absl::Status&) { delivered.Notify(); });
  }
  delivered.WaitForNotification();
}

}  // namespace fencegate::lockservice
