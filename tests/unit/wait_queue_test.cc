// WaitQueue (lockservice/wait_queue.h): the FIFO of parked Acquires and its
// two indexes change together.
#include "lockservice/wait_queue.h"

#include <string>
#include <vector>

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

std::vector<std::string> Holders(WaitQueue& queue) {
  std::vector<std::string> holders;
  for (auto it = queue.begin(); it != queue.end(); ++it) holders.push_back(it->holder);
  return holders;
}

TEST(WaitQueueTest, KeepsArrivalOrderAndTakesAPlaceBeforeAnother) {
  WaitQueue queue;
  queue.Link(queue.end(), Parked("a", "1", 1));
  auto c = queue.Link(queue.end(), Parked("c", "3", 3));
  queue.Link(c, Parked("b", "2", 2));  // a loaded waiter back in its place
  EXPECT_EQ(Holders(queue), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(queue.front().holder, "a");
}

TEST(WaitQueueTest, FindsOnlyWaitersWithAPersistedPlace) {
  WaitQueue queue;
  auto kept = queue.Link(queue.end(), Parked("a", "req-1", 7));
  queue.Link(queue.end(), Parked("b", "", 0));  // no request id: not persisted
  ASSERT_TRUE(queue.Find("a", "req-1").has_value());
  EXPECT_EQ(*queue.Find("a", "req-1"), kept);
  EXPECT_FALSE(queue.Find("a", "req-2").has_value());
  EXPECT_FALSE(queue.Find("b", "").has_value());
  // The key cannot be forged by moving bytes between holder and request id.
  queue.Link(queue.end(), Parked("x", "yz", 9));
  EXPECT_TRUE(queue.Find("x", "yz").has_value());
  EXPECT_FALSE(queue.Find("xy", "z").has_value());
}

TEST(WaitQueueTest, UnlinkForgetsTheWaiterInEveryIndex) {
  WaitQueue queue;
  auto first = queue.Link(queue.end(), Parked("a", "1", 1));
  auto second = queue.Link(queue.end(), Parked("a", "2", 2));
  queue.Link(queue.end(), Parked("b", "3", 3));
  EXPECT_TRUE(queue.HasWaitersOf("a"));
  queue.Unlink(first);
  EXPECT_FALSE(queue.Find("a", "1").has_value());
  EXPECT_TRUE(queue.HasWaitersOf("a"));  // its second call still waits
  queue.Unlink(second);
  EXPECT_FALSE(queue.HasWaitersOf("a"));
  EXPECT_TRUE(queue.HasWaitersOf("b"));
  EXPECT_EQ(Holders(queue), (std::vector<std::string>{"b"}));
}

}  // namespace
}  // namespace fencegate::lockservice
