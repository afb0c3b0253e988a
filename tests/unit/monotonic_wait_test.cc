// Timed waits run on the monotonic clock, whatever the wall clock does.
//
// ctest runs these tests twice: as they are, and under libfaketime with the
// wall clock an hour ahead and the monotonic clock untouched
// (monotonic_waits_ignore_the_wall_clock, tests/CMakeLists.txt). A wait for
// an absolute wall-clock deadline, as absl::Mutex::AwaitWithTimeout does in
// Abseil 20220623, would there last an hour longer than asked, so a timer
// would fire an hour late and these tests would fail at their deadline.
#include "common/base/monotonic_wait.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "fencegate/clock.h"
#include "gtest/gtest.h"

namespace fencegate {
namespace {

// Generous: on a loaded machine a 50 ms timer may be late by seconds, but
// not by the hour a wall-clock wait would add.
constexpr absl::Duration kDeadline = absl::Seconds(60);

// Polls `done` on the monotonic clock (sleep_for is a relative, monotonic
// sleep) until it holds or kDeadline has passed.
bool PollMonotonic(const std::atomic<bool>& done) {
  const auto give_up = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(kDeadline);
  while (!done && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done;
}

TEST(MonotonicWaitTest, TimesOutOnTheMonotonicClock) {
  absl::Mutex mu;
  MonotonicWait wait;
  bool flag = false;
  std::atomic<bool> returned{false};
  bool result = true;
  std::thread waiter([&] {
    absl::MutexLock lock(&mu);
    result = wait.WaitFor(&mu, absl::Condition(&flag), absl::Milliseconds(50));
    returned = true;
  });
  EXPECT_TRUE(PollMonotonic(returned));
  waiter.join();
  EXPECT_FALSE(result);
}

TEST(MonotonicWaitTest, NotifyWakesAWaiterWhoseConditionNowHolds) {
  absl::Mutex mu;
  MonotonicWait wait;
  bool flag = false;
  std::atomic<bool> returned{false};
  bool result = false;
  std::thread waiter([&] {
    absl::MutexLock lock(&mu);
    result = wait.WaitFor(&mu, absl::Condition(&flag), absl::Hours(1));
    returned = true;
  });
  {
    absl::MutexLock lock(&mu);
    flag = true;
  }
  wait.Notify();
  EXPECT_TRUE(PollMonotonic(returned));
  waiter.join();
  EXPECT_TRUE(result);
}

TEST(RealClockTest, TimerFiresAtItsMonotonicDeadline) {
  std::unique_ptr<Clock> clock = NewRealClock();
  std::atomic<bool> fired{false};
  clock->RunAt(clock->Now() + absl::Milliseconds(50), [&] { fired = true; });
  EXPECT_TRUE(PollMonotonic(fired));
}

TEST(RealClockTest, EarlierTimerAddedWhileTheThreadSleepsFiresOnTime) {
  std::unique_ptr<Clock> clock = NewRealClock();
  std::atomic<bool> late{false};
  std::atomic<bool> early{false};
  clock->RunAt(clock->Now() + absl::Hours(1), [&] { late = true; });
  clock->RunAt(clock->Now() + absl::Milliseconds(50), [&] { early = true; });
  EXPECT_TRUE(PollMonotonic(early));
  EXPECT_FALSE(late);
}

}  // namespace
}  // namespace fencegate
