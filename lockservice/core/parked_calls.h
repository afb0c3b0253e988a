// The calls parked in the lock manager's wait queues (docs/design.md, "The
// lock manager": wait queues): each parked Acquire (its place: the key of
// its resource in the manager's table and its waiter in that resource's
// queue), each parked AcquireMany (a place in every queue, and what its
// grant needs), found by call id for CancelAcquire; and every one of them
// by the end of its wait, for the one clock timer they share (owned here).
//
// The waiters themselves live in the resources' queues (ResourceState);
// the manager links and unlinks them there, and keeps this in step: a call
// is here exactly while its waiters are queued and its client waits.
//
// Thread safety: none; LockManager::mu_ guards it.
#ifndef FENCEGATE_LOCKSERVICE_CORE_PARKED_CALLS_H_
#define FENCEGATE_LOCKSERVICE_CORE_PARKED_CALLS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "fencegate/clock.h"
#include "fencegate/lease_mode.h"
#include "lockservice/core/compact_time.h"
#include "lockservice/core/deadline_index.h"
#include "lockservice/core/deadline_timer.h"
#include "lockservice/core/lock_calls.h"
#include "lockservice/core/wait_queue.h"

namespace fencegate::lockservice {

class ParkedCalls {
 public:
  using CallId = uint64_t;  // LockManager::CallId
  // Where a call waits: its resource's key in the manager's table (stable
  // while the resource has waiters), and its waiter in that queue.
  struct Place {
    const std::string* resource;
    WaitQueue::iterator waiter;
  };
  // A parked AcquireMany: its place in each of its resources' queues (each
  // a Waiter with `many` set and no callback), and what its grant needs.
  struct Many {
    std::vector<Place> places;  // in the order asked
    std::string holder;
    absl::Duration ttl;
    std::string request_id;
    LeaseMode mode = LeaseMode::kExclusive;
    LeaseListener* listener = nullptr;
    CompactTime deadline;  // its key in the deadlines, with its call id
    CompactTime parked_at;
    Callback<MultiAcquireResult> done;
  };

  // `set_timer(at)` arms a clock timer for `at` that runs the manager's
  // wait-timer callback and returns its id (DeadlineTimer); `clock`
  // cancels it. Both must outlive this.
  ParkedCalls(Clock* clock, absl::AnyInvocable<Clock::TimerId(absl::Time)> set_timer)
      : timer_(clock, std::move(set_timer)) {}

  // Calls parked, of both kinds (for --max_waiters_total).
  size_t size() const { return one_.size() + many_.size(); }

  // Parks the Acquire `id` at `place` until `deadline` (its waiter's
  // deadline is set to it), the timer early enough. Each call below that
  // takes calls out cancels the timer once none is left.
  void Park(CallId id, Place place, absl::Time deadline);
  // Where the Acquire `id` is parked, if it is.
  std::optional<Place> Find(CallId id) const;
  // Takes the Acquire parked as `w` out (its waiter stays queued).
  void Unpark(const Waiter& w);

  // Parks the AcquireMany `id` until call->deadline, its waiters already
  // queued at call->places.
  void ParkMany(CallId id, std::unique_ptr<Many> call);
  // The AcquireMany `id`, if parked.
  const Many* FindMany(CallId id) const;
  // Takes the AcquireMany `id` out and returns it (null if it is not
  // parked); its waiters stay queued.
  std::unique_ptr<Many> UnparkMany(CallId id);

  // The wait timer's callback calls TimerFired() first (the timer armed is
  // the one running), then takes each call Due() by now out, then calls
  // ArmTimer() for the next deadline.
  void TimerFired() { timer_.Fired(); }
  DeadlineIndex::Entry Due(absl::Time now) const { return deadlines_.Due(now); }
  void ArmTimer() { timer_.Arm(deadlines_); }
  // Drops the deadline entry (deadline, id) alone: one with no call (which
  // cannot happen), so that the timer never loops on it.
  void DropDeadline(CompactTime deadline, CallId id) { deadlines_.Remove(deadline, id); }

  // Takes every call out: the Acquires' places, and the AcquireMany calls.
  std::pair<std::vector<Place>, std::vector<std::unique_ptr<Many>>> TakeAll();

 private:
  absl::flat_hash_map<CallId, Place> one_;
  absl::flat_hash_map<CallId, std::unique_ptr<Many>> many_;
  DeadlineIndex deadlines_;  // every call above by the end of its wait
  DeadlineTimer timer_;      // for the earliest of them
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_PARKED_CALLS_H_
