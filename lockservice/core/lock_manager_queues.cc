// Wait queues: retries that take a place over, cancellation, wait timeouts, the drop of
// loaded waiters whose clients did not come back, and serving the queue.
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/base/log.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_manager_internal.h"

namespace fencegate::lockservice {

void LockManager::Supersede(Waiter& w) {
  if (w.id == 0) return;
  // Still parked: the client gave up on that call and retried.
  parked_.Unpark(w);
  decision_.Reply(std::move(w.done),
                  absl::StatusOr<AcquireResult>(absl::CancelledError(
                      "superseded by a retry with the same request_id")));
  w.id = 0;
  w.listener = nullptr;
}

void LockManager::Reattach(CallId id, const AcquireArgs& args, ResourceState& r,
                           WaitQueue::iterator w, Callback<AcquireResult>& done) {
  Supersede(*w);
  w->id = id;
  w->ttl = args.ttl;
  w->listener = args.listener;
  w->campaign = args.campaign ? std::make_unique<std::string>(*args.campaign) : nullptr;
  w->done = std::move(done);
  w->parked_at = CompactTime(clock_->Now());
  parked_.Park(id, {&resources_.find(args.resource)->first, w},
               clock_->Now() + args.wait);
  GrantWaiters(args.resource, r);  // it may head a free queue
}

void LockManager::EraseWaiter(ResourceState& r, WaitQueue::iterator w) {
  if (w->seq != 0) decision_.DeleteWaiter(*w);
  UnlinkWaiter(r, w);
}

void LockManager::DropDetachedWaiters() {
  DecisionLock lock(this);
  std::vector<std::string> names;
  for (auto& [name, r] : resources_) {
    if (r.queue == nullptr) continue;
    for (auto w = r.queue->begin(); w != r.queue->end();) {
      auto next = std::next(w);
      if (w->id == 0) {
        LogInfo(
            "dropping the waiter of '%s' for '%s': its client did not retry within "
            "%s (--waiter_reattach_grace)",
            w->holder, name, absl::FormatDuration(limits_.waiter_reattach_grace));
        EraseWaiter(r, w);
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
    EndDecision();  // one per resource
  }
}

void LockManager::CancelAcquire(CallId id) {
  Callback<AcquireResult> done;
  {
    DecisionLock lock(this);
    const std::optional<ParkedCalls::Place> place = parked_.Find(id);
    if (!place) {
      EndParkedMany(id,
                    absl::CancelledError("the Acquire call was cancelled by the client"));
      return;
    }
    const std::string name = *place->resource;  // MaybeForget may drop the key
    const WaitQueue::iterator waiter = place->waiter;
    parked_.Unpark(*waiter);
    done = std::move(waiter->done);
    ResourceState& r = resources_.find(name)->second;
    EraseWaiter(r, waiter);
    GrantWaiters(name, r);  // it may have held back readers behind it
    MaybeForget(name);
  }
  done(absl::CancelledError("the Acquire call was cancelled by the client"));
}

void LockManager::OnWaitTimer() {
  {
    absl::MutexLock lock(&mu_);
    parked_.TimerFired();
  }
  // One decision per call whose wait ran out, as for expiries.
  for (;;) {
    DecisionLock lock(this);
    const DeadlineIndex::Entry due = parked_.Due(clock_->Now());
    if (due.resource == nullptr) {
      parked_.ArmTimer();
      return;
    }
    const std::optional<ParkedCalls::Place> place = parked_.Find(due.id);
    if (!place) {
      if (parked_.FindMany(due.id) != nullptr) {
        EndParkedMany(due.id, absl::OkStatus());  // its wait ran out
        continue;
      }
      // Cannot happen (a call leaves the index when it leaves parked_);
      // never loop on it.
      parked_.DropDeadline(due.deadline, due.id);
      continue;
    }
    const std::string name = *place->resource;  // MaybeForget may drop the key
    const WaitQueue::iterator waiter = place->waiter;
    parked_.Unpark(*waiter);
    Callback<AcquireResult> done = std::move(waiter->done);
    ResourceState& r = resources_.find(name)->second;
    EraseWaiter(r, waiter);
    Count(metrics_->not_granted[LockManagerMetrics::kWaitTimeout]);
    decision_.Reply(std::move(done),
                    absl::StatusOr<AcquireResult>(r.NotAcquired(clock_->Now())));
    GrantWaiters(name, r);  // it may have held back readers behind it
    MaybeForget(name);
  }
}

void LockManager::GrantWaiters(const std::string& name, ResourceState& r) {
  for (bool first = true; r.Waiting() != 0; first = false) {
    // A loaded waiter whose client has not retried yet keeps its turn: the
    // queue waits for it (at most waiter_reattach_grace).
    Waiter& next = r.queue->front();
    if (next.many) {
      // An AcquireMany: granted with all its resources, or it holds the
      // queue until it is.
      if (GrantParkedMany(next.id)) continue;
      break;
    }
    if (next.id == 0 || !CanGrant(r, next.holder, next.mode)) break;
    // The first grant joins the decision that freed the resource; each
    // later one is a decision of its own (a run of shared waiters may be
    // long, and a decision's items are bounded).
    if (!first) EndDecision();
    // Copy, not move, what the grant needs: EraseWaiter() finds the waiter's
    // index entry by its holder and request id.
    const std::string holder = next.holder;
    const std::string request_id = next.request_id;
    const absl::Duration ttl = next.ttl;
    const LeaseMode mode = next.mode;
    LeaseListener* const listener = next.listener;
    const std::unique_ptr<std::string> campaign = std::move(next.campaign);
    const absl::Duration waited = clock_->Now() - next.parked_at.get();
    Observe(metrics_->wait_seconds, absl::ToDoubleSeconds(waited));
    Count(metrics_->grants[LockManagerMetrics::kWaited]);
    Callback<AcquireResult> done = TellingWaited(std::move(next.done), waited);
    parked_.Unpark(next);
    EraseWaiter(r, r.queue->begin());
    // A shared holder's parked call for its own lease is a reentrant one.
    if (HeldLease* held = r.ReentrantLease(holder, mode)) {
      Reenter(name, r, *held, ttl, request_id, std::move(done), listener,
              campaign != nullptr);
    } else {
      Grant(name, r, holder, mode, ttl, request_id, std::move(done), listener,
            campaign.get());
    }
    GrantHolderWaiters(name, r, holder);
  }
  // Loaded state (a restart) may hold leases whose holders have parked
  // calls that were never served.
  if (r.lease) GrantHolderWaiters(name, r, r.lease->holder);
}

void LockManager::GrantHolderWaiters(const std::string& name, ResourceState& r,
                                     const std::string& holder_name) {
  if (r.queue == nullptr || !r.queue->MayHaveWaitersOf(holder_name)) return;
  const std::string holder = holder_name;  // it may live in a lease that goes
  for (auto w = r.queue->begin(); w != r.queue->end();) {
    auto next = std::next(w);
    if (w->id == 0 || w->many || w->holder != holder) {
      w = next;
      continue;
    }
    HeldLease* held = r.ReentrantLease(holder, w->mode);
    const bool downgrade = held == nullptr && w->mode == LeaseMode::kShared && r.lease &&
                           r.lease->holder == holder &&
                           CanGrant(r, holder, LeaseMode::kShared);
    if (held != nullptr || downgrade) {
      // Each grant is a decision of its own (a holder may have many parked
      // calls; the state between two of them is whole).
      EndDecision();
      // As in GrantWaiters(): copy what EraseWaiter() still reads.
      const absl::Duration ttl = w->ttl;
      const std::string request_id = w->request_id;
      LeaseListener* const listener = w->listener;
      const bool campaign = w->campaign != nullptr;
      Callback<AcquireResult> done =
          TellingWaited(std::move(w->done), clock_->Now() - w->parked_at.get());
      parked_.Unpark(*w);
      EraseWaiter(r, w);
      if (held != nullptr) {
        Reenter(name, r, *held, ttl, request_id, std::move(done), listener, campaign);
      } else {
        Grant(name, r, holder, LeaseMode::kShared, ttl, request_id, std::move(done),
              listener);
      }
    }
    w = next;
  }
}

}  // namespace fencegate::lockservice
