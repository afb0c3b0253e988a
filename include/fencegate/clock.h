// Clock: the one source of time for lease logic, and a way to be called back
// at a deadline. The OS sits behind this small interface so tests can swap it
// (tests/testing/fake_clock.h) and drive expiry without sleeping.
//
// Times are points on a monotonic timeline expressed as absl::Time. They are
// not wall-clock times: they only make sense compared with each other and
// with Now() of the same clock, and wall-clock jumps do not move them.
//
// Thread safety: all methods may be called from any thread concurrently.
#ifndef FENCEGATE_CLOCK_H_
#define FENCEGATE_CLOCK_H_

#include <cstdint>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"

namespace fencegate {

class Clock {
 public:
  using TimerId = uint64_t;

  virtual ~Clock() = default;

  // The current point on the monotonic timeline.
  virtual absl::Time Now() = 0;

  // Calls `fn` once, on a thread of the clock's choosing, at or after
  // `deadline`. Callbacks run without any lock of the clock held, one at a
  // time, in deadline order. Returns an id for Cancel().
  virtual TimerId RunAt(absl::Time deadline, absl::AnyInvocable<void()> fn) = 0;

  // Best effort: a callback that has not started yet will not run. One that
  // is already running or about to run may still run, so callbacks must
  // check that what they act on is still current.
  virtual void Cancel(TimerId id) = 0;
};

// The process's monotonic clock (std::chrono::steady_clock) with one timer
// thread, started by the first RunAt(). The only place that reads the system
// clock for lease logic. Destroying it stops the timer thread; pending
// callbacks are dropped.
std::unique_ptr<Clock> NewRealClock();

// A process-wide real clock, never destroyed (for clients that only read
// the time; servers own theirs).
Clock& SteadyClock();

}  // namespace fencegate

#endif  // FENCEGATE_CLOCK_H_
