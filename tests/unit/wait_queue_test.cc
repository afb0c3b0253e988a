// WaitQueue (lockservice/core/wait_queue.h): the FIFO of parked Acquires and
// its two indexes change together. Every test runs on a short queue (scanned)
// and on one past kIndexFrom (indexed): fillers of other holders, with no
// request id, queued first.
#include "lockservice/core/wait_queue.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fencegate::lockservice {
namespace {

Waiter Parked(const std::string& holder, const std::string& request_id, uint64_t seq) {
  Waiter w;
  w.holder = holder;
  w.request_id = request_id;
  w.seq = seq;
  return w;
}

class WaitQueueTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    for (size_t i = 0; i < GetParam(); ++i) {
      queue_.Link(queue_.end(), Parked(absl::StrCat("filler-", i), "", 0));
    }
  }

  // The holders queued after the fillers, in order.
  std::vector<std::string> Holders() {
    std::vector<std::string> holders;
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (!absl::StartsWith(it->holder, "filler-")) holders.push_back(it->holder);
    }
    return holders;
  }

  WaitQueue queue_;
};

TEST_P(WaitQueueTest, KeepsArrivalOrderAndTakesAPlaceBeforeAnother) {
  queue_.Link(queue_.end(), Parked("a", "1", 1));
  auto c = queue_.Link(queue_.end(), Parked("c", "3", 3));
  queue_.Link(c, Parked("b", "2", 2));  // a loaded waiter back in its place
  EXPECT_EQ(Holders(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(queue_.size(), GetParam() + 3);
}

TEST_P(WaitQueueTest, FindsOnlyWaitersWithAPersistedPlace) {
  auto kept = queue_.Link(queue_.end(), Parked("a", "req-1", 7));
  queue_.Link(queue_.end(), Parked("b", "", 0));  // no request id: not persisted
  ASSERT_TRUE(queue_.Find("a", "req-1").has_value());
  EXPECT_EQ(*queue_.Find("a", "req-1"), kept);
  EXPECT_FALSE(queue_.Find("a", "req-2").has_value());
  EXPECT_FALSE(queue_.Find("b", "").has_value());
  // The key cannot be forged by moving bytes between holder and request id.
  queue_.Link(queue_.end(), Parked("x", "yz", 9));
  EXPECT_TRUE(queue_.Find("x", "yz").has_value());
  EXPECT_FALSE(queue_.Find("xy", "z").has_value());
}

TEST_P(WaitQueueTest, UnlinkForgetsTheWaiterInEveryIndex) {
  auto first = queue_.Link(queue_.end(), Parked("a", "1", 1));
  auto second = queue_.Link(queue_.end(), Parked("a", "2", 2));
  queue_.Link(queue_.end(), Parked("b", "3", 3));
  EXPECT_TRUE(queue_.MayHaveWaitersOf("a"));
  EXPECT_FALSE(queue_.MayHaveWaitersOf("nobody"));
  queue_.Unlink(first);
  EXPECT_FALSE(queue_.Find("a", "1").has_value());
  EXPECT_TRUE(queue_.Find("a", "2").has_value());
  EXPECT_TRUE(queue_.MayHaveWaitersOf("a"));  // its second call still waits
  queue_.Unlink(second);
  EXPECT_FALSE(queue_.MayHaveWaitersOf("a"));
  EXPECT_TRUE(queue_.MayHaveWaitersOf("b"));
  EXPECT_EQ(Holders(), (std::vector<std::string>{"b"}));
}

TEST_P(WaitQueueTest, AQueueThatGrowsPastTheScanIndexesWhatItHeldBefore) {
  queue_.Link(queue_.end(), Parked("early", "e", 1));
  for (size_t i = 0; i <= WaitQueue::kIndexFrom; ++i) {
    queue_.Link(queue_.end(), Parked(absl::StrCat("late-", i), "l", 2 + i));
  }
  EXPECT_TRUE(queue_.Find("early", "e").has_value());
  EXPECT_TRUE(queue_.MayHaveWaitersOf("early"));
  EXPECT_TRUE(queue_.Find("late-0", "l").has_value());
}

INSTANTIATE_TEST_SUITE_P(ScannedAndIndexed, WaitQueueTest,
                         ::testing::Values(size_t{0}, WaitQueue::kIndexFrom + 1));

}  // namespace
}  // namespace fencegate::lockservice
