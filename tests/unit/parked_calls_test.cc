// ParkedCalls (lockservice/core/parked_calls.h): parked Acquire and AcquireMany
// calls by id and by the end of their wait, and the one clock timer they
// share, on a FakeClock. No LockManager: the waiters sit in a WaitQueue of
// the test's own.
#include "lockservice/core/parked_calls.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"

namespace fencegate::lockservice {
namespace {

class ParkedCallsTest : public ::testing::Test {
 protected:
  // Queues a waiter for call `id` and parks it for `wait`.
  void ParkOne(uint64_t id, absl::Duration wait) {
    Waiter w;
    w.id = id;
    w.holder = "h" + std::to_string(id);
    parked_.Park(id, {&resource_, queue_.Link(queue_.end(), std::move(w))},
                 clock_.Now() + wait);
  }
  std::unique_ptr<ParkedCalls::Many> Many(uint64_t id, absl::Duration wait) {
    auto call = std::make_unique<ParkedCalls::Many>();
    Waiter w;
    w.id = id;
    w.many = true;
    call->places.push_back({&resource_, queue_.Link(queue_.end(), std::move(w))});
    call->deadline = CompactTime(clock_.Now() + wait);
    return call;
  }
  // What the manager's wait timer does: every call due, then the timer again.
  void OnTimer() {
    parked_.TimerFired();
    for (;;) {
      const DeadlineIndex::Entry due = parked_.Due(clock_.Now());
      if (due.resource == nullptr) break;
      fired_.push_back(due.id);
      if (std::optional<ParkedCalls::Place> place = parked_.Find(due.id)) {
        parked_.Unpark(*place->waiter);
      } else {
        parked_.UnparkMany(due.id);
      }
    }
    parked_.ArmTimer();
  }

  testing::FakeClock clock_;
  std::vector<uint64_t> fired_;
  ParkedCalls parked_{&clock_, [this](absl::Time at) {
                        return clock_.RunAt(at, [this] { OnTimer(); });
                      }};
  const std::string resource_ = "r";
  WaitQueue queue_;
};

TEST_F(ParkedCallsTest, OneTimerServesEveryCallAtItsEarliestDeadline) {
  ParkOne(1, absl::Seconds(30));
  ParkOne(2, absl::Seconds(10));
  ParkOne(3, absl::Seconds(20));
  EXPECT_EQ(clock_.PendingTimers(), 1u);
  EXPECT_EQ(clock_.NextDeadline(), clock_.Now() + absl::Seconds(10));
  clock_.AdvanceBy(absl::Seconds(25));
  EXPECT_EQ(fired_, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(clock_.PendingTimers(), 1u);  // for call 1
  clock_.AdvanceBy(absl::Seconds(5));
  EXPECT_EQ(fired_, (std::vector<uint64_t>{2, 3, 1}));
  EXPECT_EQ(clock_.PendingTimers(), 0u);
  EXPECT_EQ(parked_.size(), 0u);
}

TEST_F(ParkedCallsTest, TheTimerGoesWithTheLastCall) {
  ParkOne(1, absl::Seconds(10));
  ParkOne(2, absl::Seconds(20));
  parked_.Unpark(*parked_.Find(1)->waiter);
  EXPECT_FALSE(parked_.Find(1).has_value());
  // Armed early for call 2: it fires, finds nothing due, and arms again.
  EXPECT_EQ(clock_.PendingTimers(), 1u);
  parked_.Unpark(*parked_.Find(2)->waiter);
  EXPECT_EQ(clock_.PendingTimers(), 0u);
  clock_.AdvanceBy(absl::Minutes(1));
  EXPECT_TRUE(fired_.empty());
}

TEST_F(ParkedCallsTest, AnAcquireManyIsParkedFoundAndTimedLikeTheOthers) {
  ParkOne(1, absl::Seconds(30));
  parked_.ParkMany(7, Many(7, absl::Seconds(5)));
  EXPECT_EQ(parked_.size(), 2u);
  ASSERT_NE(parked_.FindMany(7), nullptr);
  EXPECT_EQ(parked_.FindMany(7)->places.size(), 1u);
  EXPECT_EQ(parked_.FindMany(1), nullptr);
  EXPECT_FALSE(parked_.Find(7).has_value());
  EXPECT_EQ(clock_.NextDeadline(), clock_.Now() + absl::Seconds(5));
  clock_.AdvanceBy(absl::Seconds(5));
  EXPECT_EQ(fired_, (std::vector<uint64_t>{7}));
  EXPECT_EQ(parked_.FindMany(7), nullptr);
  EXPECT_EQ(parked_.UnparkMany(7), nullptr);  // already out
}

TEST_F(ParkedCallsTest, TakeAllEmptiesItAndCancelsTheTimer) {
  ParkOne(1, absl::Seconds(10));
  parked_.ParkMany(2, Many(2, absl::Seconds(20)));
  auto [ones, many] = parked_.TakeAll();
  ASSERT_EQ(ones.size(), 1u);
  EXPECT_EQ(ones[0].waiter->id, 1u);
  EXPECT_EQ(*ones[0].resource, "r");
  ASSERT_EQ(many.size(), 1u);
  EXPECT_EQ(parked_.size(), 0u);
  EXPECT_EQ(clock_.PendingTimers(), 0u);
  clock_.AdvanceBy(absl::Minutes(1));
  EXPECT_TRUE(fired_.empty());
}

}  // namespace
}  // namespace fencegate::lockservice
