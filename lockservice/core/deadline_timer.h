// DeadlineTimer: the one clock timer that serves a DeadlineIndex
// (deadline_index.h), armed for its earliest deadline. The lock manager
// keeps two: one for its leases' expiries, one (in ParkedCalls) for the
// ends of its parked calls' waits.
//
// Thread safety: none; the lock manager's mu_ guards it. The callback the
// timer runs is the owner's, on the clock's thread (it takes the mutex).
#ifndef FENCEGATE_LOCKSERVICE_CORE_DEADLINE_TIMER_H_
#define FENCEGATE_LOCKSERVICE_CORE_DEADLINE_TIMER_H_

#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "fencegate/clock.h"
#include "lockservice/core/deadline_index.h"

namespace fencegate::lockservice {

class DeadlineTimer {
 public:
  // set_timer(at) arms a clock timer for `at` that runs the owner's
  // callback, and returns its id; `clock` cancels it. Both must outlive
  // this.
  DeadlineTimer(Clock* clock, absl::AnyInvocable<Clock::TimerId(absl::Time)> set_timer)
      : clock_(clock), set_timer_(std::move(set_timer)) {}

  // Arms the timer for `index`'s earliest deadline, unless it is armed at
  // or before it already (one that fires early finds nothing due and is
  // armed again).
  void Arm(const DeadlineIndex& index);
  // Cancels the timer once `index` is empty.
  void DisarmIfEmpty(const DeadlineIndex& index);
  // Called first by the callback: the timer armed is the one running now,
  // so the next Arm() arms a new one.
  void Fired() {
    id_ = 0;
    at_ = absl::InfiniteFuture();
  }

 private:
  Clock* clock_;
  absl::AnyInvocable<Clock::TimerId(absl::Time)> set_timer_;
  Clock::TimerId id_ = 0;  // 0: none armed
  absl::Time at_ = absl::InfiniteFuture();
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_DEADLINE_TIMER_H_
