// FakeClock: a Clock whose time moves only when a test says so. AdvanceBy()
// runs every timer that falls due, in deadline order, on the calling thread,
// with Now() equal to each timer's deadline while it runs. So lease expiry,
// wait timeouts and hand-offs are tested without sleeping.
//
// Thread safety: thread-safe; callbacks run without the clock's lock held.
#ifndef FENCEGATE_TESTS_TESTING_FAKE_CLOCK_H_
#define FENCEGATE_TESTS_TESTING_FAKE_CLOCK_H_

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/base/timer_queue.h"
#include "fencegate/clock.h"

namespace fencegate::testing {

class FakeClock final : public Clock {
 public:
  // Starts at an arbitrary fixed point, far from the epoch.
  FakeClock() = default;

  absl::Time Now() override;
  TimerId RunAt(absl::Time deadline, absl::AnyInvocable<void()> fn) override;
  void Cancel(TimerId id) override;

  // Moves time forward by `d`, firing due timers (also those they set).
  void AdvanceBy(absl::Duration d);
  // Timers set and neither fired nor cancelled.
  size_t PendingTimers();
  // The earliest deadline of those timers, if any.
  std::optional<absl::Time> NextDeadline();

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::FromUnixSeconds(1000000);
  TimerQueue timers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_FAKE_CLOCK_H_
