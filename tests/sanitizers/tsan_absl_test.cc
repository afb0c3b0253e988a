// Proves the TSan annotations of absl primitives (absl_tsan_annotations.cc)
// in the TSan build. Linked twice (tests/sanitizers/CMakeLists.txt):
//   tsan_absl_test              annotated: every enabled test must be clean,
//                               and each DISABLED_PlantedRace* test, run on
//                               its own, must be reported by TSan;
//   tsan_absl_test_unannotated  without the annotations: MutexOrdersTwoThreads
//                               must be reported, a race that is not there,
//                               which is why the annotations exist.
// No test sleeps: threads meet through the primitives under test.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <deque>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace {

constexpr int kRounds = 200;

// One thread writes under the mutex and sets a flag; another waits for the
// flag under the same mutex, then reads and writes. Ordered by the mutex
// alone: the threads are started before either touches the data.
TEST(TsanAbslTest, MutexOrdersTwoThreads) {
  absl::Mutex mu;
  int value = 0;
  bool ready = false;
  std::thread reader([&] {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&ready));
    value += 1;
  });
  std::thread writer([&] {
    absl::MutexLock lock(&mu);
    value = 41;
    ready = true;
  });
  writer.join();
  reader.join();
  EXPECT_EQ(value, 42);
}

// A queue like GroupCommitQueue's: the consumer Awaits a condition that the
// producers' Unlock() evaluates on their own threads.
TEST(TsanAbslTest, AwaitConditionEvaluatedByUnlockingThreads) {
  absl::Mutex mu;
  std::deque<std::vector<int>> queue;
  int consumed = 0;
  auto has_work = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return !queue.empty(); };
  std::thread consumer([&] {
    for (int i = 0; i < 2 * kRounds; ++i) {
      std::vector<int> item;
      {
        absl::MutexLock lock(&mu);
        mu.Await(absl::Condition(&has_work));
        item = std::move(queue.front());
        queue.pop_front();
      }
      consumed += item[0];  // the producer's write, read without the lock
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p) {
    producers.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::vector<int> item(8, 1);
        absl::MutexLock lock(&mu);
        queue.push_back(std::move(item));
      }
    });
  }
  for (std::thread& t : producers) t.join();
  consumer.join();
  EXPECT_EQ(consumed, 2 * kRounds);
}

TEST(TsanAbslTest, CondVarHandsOverInTurns) {
  absl::Mutex mu;
  absl::CondVar changed;
  int turn = 0;  // even: ping's turn, odd: pong's
  int log = 0;
  auto player = [&](int parity) {
    for (int i = 0; i < kRounds; ++i) {
      absl::MutexLock lock(&mu);
      while (turn % 2 != parity) changed.Wait(&mu);
      log = log * 3 + parity;
      ++turn;
      changed.SignalAll();
    }
  };
  std::thread ping(player, 0);
  std::thread pong(player, 1);
  ping.join();
  pong.join();
  EXPECT_EQ(turn, 2 * kRounds);
}

// Notify() publishes what was written before it, to waiters and to readers
// polling the inline HasBeenNotified().
TEST(TsanAbslTest, NotificationPublishesData) {
  for (int i = 0; i < kRounds; ++i) {
    absl::Notification done;
    std::vector<int> data;
    std::thread writer([&] {
      data.assign(16, i);
      done.Notify();
    });
    std::thread waiter([&] {
      done.WaitForNotification();
      EXPECT_EQ(data.size(), 16u);
    });
    std::thread poller([&] {
      while (!done.HasBeenNotified()) std::this_thread::yield();
      EXPECT_EQ(data.back(), i);
    });
    writer.join();
    waiter.join();
    poller.join();
  }
}

TEST(TsanAbslTest, ReaderLocksSeeTheWritersData) {
  absl::Mutex mu;
  std::vector<int> data;
  std::thread writer([&] {
    for (int i = 0; i < kRounds; ++i) {
      absl::MutexLock lock(&mu);
      data.push_back(i);
    }
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      size_t seen = 0;
      while (seen < kRounds) {
        absl::ReaderMutexLock lock(&mu);
        seen = data.size();
        if (seen > 0) EXPECT_EQ(data[seen - 1], static_cast<int>(seen) - 1);
      }
    });
  }
  writer.join();
  for (std::thread& t : readers) t.join();
}

TEST(TsanAbslTest, TryLockTimedWaitsAndReleasableLocks) {
  absl::Mutex mu;
  int value = 0;
  bool set = false;
  absl::Notification started;
  std::thread other([&] {
    started.Notify();
    for (int i = 0; i < kRounds; ++i) {
      while (!mu.TryLock()) std::this_thread::yield();
      ++value;
      mu.Unlock();
    }
    absl::ReleasableMutexLock lock(&mu);
    set = true;
    lock.Release();
  });
  EXPECT_TRUE(started.WaitForNotificationWithTimeout(absl::Hours(1)));
  EXPECT_TRUE(mu.LockWhenWithTimeout(absl::Condition(&set), absl::Hours(1)));
  EXPECT_EQ(value, kRounds);
  value = 0;
  mu.Unlock();
  other.join();
  absl::MutexLock lock(&mu);
  EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&set), absl::Hours(1)));
  EXPECT_EQ(value, 0);
}

// Copies of an absl::Status share one representation; whichever thread
// drops the last copy frees it, after the other read it.
TEST(TsanAbslTest, StatusSharedAcrossThreadsIsFreedByItsLastCopy) {
  for (int i = 0; i < kRounds; ++i) {
    absl::Status status = absl::AbortedError("stale token");
    status.SetPayload("detail", absl::Cord("34"));
    absl::Status copy = status;
    std::thread other([copy = std::move(copy)]() mutable {
      EXPECT_TRUE(copy.GetPayload("detail").has_value());
      copy = absl::OkStatus();
    });
    EXPECT_TRUE(status.GetPayload("detail").has_value());
    status = absl::OkStatus();
    other.join();
  }
}

// ------------------------------------------------------------- planted
// Each must make TSan report a data race naming it.

// A count that threads raise and wait on without ordering each other for
// TSan: relaxed atomics are no happens-before to it, and it does not see
// the futex. Waits block: with yield loops instead, the planted races went
// unreported in 1 run of 14 (a spinning thread fills its TSan trace, which
// a report needs to show the earlier access' stack).
class UnorderedCount {
 public:
  void Raise() {
    count_.fetch_add(1, std::memory_order_relaxed);
    syscall(SYS_futex, &count_, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
  }
  void AwaitAtLeast(int n) {
    for (int seen; (seen = count_.load(std::memory_order_relaxed)) < n;)
      syscall(SYS_futex, &count_, FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
  }

 private:
  std::atomic<int> count_{0};  // FUTEX_* read it as the int it holds
  static_assert(sizeof(std::atomic<int>) == sizeof(int));
};

// Two threads write in turns, unordered for TSan, and both stay alive until
// both have written. In turns: TSan checks and records an access without a
// lock, so two accesses made at the same instant can miss each other (seen:
// 1 run in about 100). Alive: a thread that ended before the other began
// could lend it its TSan slot, and accesses under one slot are not checked
// against each other.
class InTurns {
 public:
  // Runs `write` as turn `turn` (0 or 1).
  template <typename Write>
  void Take(int turn, Write write) {
    done_.AwaitAtLeast(turn);
    write();
    done_.Raise();
    done_.AwaitAtLeast(2);
  }

 private:
  UnorderedCount done_;
};

TEST(TsanAbslTest, DISABLED_PlantedRaceWithoutALock) {
  int value = 0;
  InTurns turns;
  std::thread a([&] { turns.Take(0, [&] { value = 1; }); });
  std::thread b([&] { turns.Take(1, [&] { value = 2; }); });
  a.join();
  b.join();
  EXPECT_NE(value, 0);
}

// Two different mutexes order nothing: the annotations must not make every
// absl::Mutex one big lock.
TEST(TsanAbslTest, DISABLED_PlantedRaceUnderTwoMutexes) {
  absl::Mutex mu_a, mu_b;
  int value = 0;
  InTurns turns;
  std::thread a([&] {
    turns.Take(0, [&] {
      absl::MutexLock lock(&mu_a);
      value = 1;
    });
  });
  std::thread b([&] {
    turns.Take(1, [&] {
      absl::MutexLock lock(&mu_b);
      value = 2;
    });
  });
  a.join();
  b.join();
  EXPECT_NE(value, 0);
}

// The Status wrapper drops copies one at a time; that order must be no
// happens-before between threads: a write before one thread drops its
// Status races with a write after another drops another Status.
TEST(TsanAbslTest, DISABLED_PlantedRaceAcrossTwoStatuses) {
  int value = 0;
  UnorderedCount steps;
  std::thread a([&] {
    absl::Status status = absl::AbortedError("a");
    value = 1;
    status = absl::OkStatus();
    steps.Raise();
    steps.AwaitAtLeast(2);  // alive until b wrote (InTurns)
  });
  std::thread b([&] {
    absl::Status status = absl::AbortedError("b");
    steps.AwaitAtLeast(1);
    status = absl::OkStatus();
    value = 2;
    steps.Raise();
  });
  a.join();
  b.join();
  EXPECT_EQ(value, 2);
}

}  // namespace
