// MonotonicWait: timed waits on the monotonic clock for code that guards its
// state with an absl::Mutex.
//
// In Abseil 20220623 (Debian 12's), Mutex::AwaitWithTimeout and
// CondVar::WaitWithTimeout wait for an absolute CLOCK_REALTIME deadline: a
// wall-clock step backwards (NTP, an operator, a VM restore) stretches every
// wait in progress by the size of the step, so lease expiry, hand-offs and
// renewals would fire late. Lease logic must not depend on the wall clock
// (DESIGN.md), so every timed wait goes through this class instead: it
// waits on a std::condition_variable_any, whose wait_for runs on
// steady_clock (pthread_cond_clockwait with CLOCK_MONOTONIC).
//
// Unlike absl::Mutex::Await, a waiter here is woken only by Notify() (or its
// timeout): whoever changes state that a waiter's condition reads must call
// Notify() after the change, with or without the mutex held.
//
// Thread safety: thread-safe. The object must outlive its waiters.
#ifndef FENCEGATE_COMMON_BASE_MONOTONIC_WAIT_H_
#define FENCEGATE_COMMON_BASE_MONOTONIC_WAIT_H_

#include <condition_variable>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace fencegate {

class MonotonicWait {
 public:
  // With `mu` held: waits until `condition` holds or `timeout` has passed on
  // the monotonic clock, releasing `mu` while it waits. Returns whether the
  // condition holds. A timeout <= 0 only evaluates the condition; waits
  // longer than a day are cut to a day (callers loop anyway).
  bool WaitFor(absl::Mutex* mu, const absl::Condition& condition,
               absl::Duration timeout) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Wakes every waiter to re-evaluate its condition.
  void Notify() { cv_.notify_all(); }

 private:
  std::condition_variable_any cv_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_BASE_MONOTONIC_WAIT_H_
