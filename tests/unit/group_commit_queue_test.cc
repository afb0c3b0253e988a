// GroupCommitQueue (common/core/group_commit.h) on its own: batches are taken
// when full or when nothing more is on its way (no Arrival held), and the
// writer waits only for the Arrivals held when it found work, so
// overlapping Arrivals cannot hold a batch back for ever; a full batch is
// cut between groups, never inside one; an Arrival ended with FlushHere()
// flushes on its own thread unless a flush runs. The writer is parked
// inside a flush to line items up; nothing sleeps.
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/core/group_commit.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/poll.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::PollUntil;
using ::testing::ElementsAre;

constexpr absl::Duration kSafetyNet = absl::Seconds(60);

// A queue of ints whose flushes are recorded, with the thread that ran
// each; a flush of item -1 parks the writer until Release(), and a flush of
// item 10 submits item 11.
class CommitRecorder {
 public:
  explicit CommitRecorder(size_t max_batch = 1024)
      : queue_([this](std::vector<int>& batch) { Flush(batch); }, max_batch) {}
  ~CommitRecorder() { Release(); }

  GroupCommitQueue<int>& queue() { return queue_; }

  // Parks the writer inside a flush; returns once it is there.
  void Park() {
    queue_.Submit(-1);
    parked_.WaitForNotification();
  }
  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }
  // Waits until `n` batches (the parking one included) were flushed.
  std::vector<std::vector<int>> WaitForBatches(size_t n) {
    absl::MutexLock lock(&mu_);
    auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return batches_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&done), kSafetyNet);
    return batches_;
  }
  size_t batches() {
    absl::MutexLock lock(&mu_);
    return batches_.size();
  }
  std::vector<std::thread::id> threads() {
    absl::MutexLock lock(&mu_);
    return threads_;
  }

 private:
  void Flush(std::vector<int>& batch) {
    {
      absl::MutexLock lock(&mu_);
      batches_.push_back(batch);
      threads_.push_back(std::this_thread::get_id());
    }
    if (batch.front() == 10) queue_.Submit(11);
    if (batch.front() == -1) {
      parked_.Notify();
      release_.WaitForNotification();
    }
  }

  absl::Notification parked_;
  absl::Notification release_;
  absl::Mutex mu_;
  std::vector<std::vector<int>> batches_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> threads_ ABSL_GUARDED_BY(mu_);
  GroupCommitQueue<int> queue_;  // last: its writer uses the members above
};

TEST(GroupCommitQueueTest, ALoneItemIsFlushedAtOnce) {
  CommitRecorder r;
  r.queue().Submit(1);
  EXPECT_THAT(r.WaitForBatches(1), ElementsAre(ElementsAre(1)));
}

TEST(GroupCommitQueueTest, ItemsOnTheirWayJoinTheBatchInsteadOfWaitingForTheNext) {
  CommitRecorder r;
  {
    auto arrival = r.queue().Arriving();
    r.queue().Submit(1);
    ASSERT_THAT(PollUntil([&] { return r.queue().WaitingForArrivals(); }, kSafetyNet,
                          "the writer waiting for the arrival"),
                IsOk());
    EXPECT_EQ(r.batches(), 0u);  // 1 waits for what is on its way
    r.queue().Submit(2);
    r.queue().Submit(3);
  }
  EXPECT_THAT(r.WaitForBatches(1), ElementsAre(ElementsAre(1, 2, 3)));
}

TEST(GroupCommitQueueTest, AFullBatchDoesNotWaitForArrivals) {
  CommitRecorder r(/*max_batch=*/3);
  auto arrival = r.queue().Arriving();
  for (int i = 1; i <= 4; ++i) r.queue().Submit(i);
  // 1-3 fill a batch and go; 4 waits for the arrival to end.
  EXPECT_THAT(r.WaitForBatches(1), ElementsAre(ElementsAre(1, 2, 3)));
  ASSERT_THAT(PollUntil([&] { return r.queue().WaitingForArrivals(); }, kSafetyNet,
                        "the writer waiting for the arrival"),
              IsOk());
  EXPECT_EQ(r.batches(), 1u);
  { auto ended = std::move(arrival); }
  EXPECT_THAT(r.WaitForBatches(2), ElementsAre(ElementsAre(1, 2, 3), ElementsAre(4)));
}

// With a rule of "no Arrival held at all", arrivals that keep overlapping
// (a busy server) would hold item 1 back for ever.
TEST(GroupCommitQueueTest, ArrivalsThatBeginLaterDoNotHoldTheBatchBack) {
  CommitRecorder r;
  auto first = std::make_unique<CommitArrival>(r.queue().Arriving());
  r.queue().Submit(1);
  ASSERT_THAT(PollUntil([&] { return r.queue().WaitingForArrivals(); }, kSafetyNet,
                        "the writer waiting for the first arrival"),
              IsOk());
  CommitArrival later = r.queue().Arriving();  // overlaps the first
  first.reset();
  EXPECT_THAT(r.WaitForBatches(1), ElementsAre(ElementsAre(1)));
}

TEST(GroupCommitQueueTest, ArrivalsHeldWhenTheWriterFoundWorkAreWaitedFor) {
  CommitRecorder r;
  r.Park();
  // Both begin while the writer is busy flushing: on their way when it
  // comes back for the next batch.
  auto a = std::make_unique<CommitArrival>(r.queue().Arriving());
  auto b = std::make_unique<CommitArrival>(r.queue().Arriving());
  r.queue().Submit(1);
  r.Release();
  ASSERT_THAT(PollUntil([&] { return r.queue().WaitingForArrivals(); }, kSafetyNet,
                        "the writer waiting for the arrivals"),
              IsOk());
  a.reset();
  r.queue().Submit(2);  // b's item
  EXPECT_EQ(r.batches(), 1u);
  b.reset();
  EXPECT_THAT(r.WaitForBatches(2), ElementsAre(ElementsAre(-1), ElementsAre(1, 2)));
}

// A full batch is cut between groups, never inside one: a group that
// would overflow the batch goes whole into the next, and a group larger
// than max_batch is a batch of its own.
TEST(GroupCommitQueueTest, AFullBatchIsCutBetweenGroupsNeverInsideOne) {
  CommitRecorder r(/*max_batch=*/3);
  r.Park();
  std::vector<int> group = {2, 3};
  r.queue().Submit(1);
  r.queue().SubmitGroup(group);  // 1 + 2 fit; the group does not
  EXPECT_TRUE(group.empty());
  group = {4, 5, 6, 7};  // larger than max_batch
  r.queue().SubmitGroup(group);
  r.queue().Submit(8);
  r.Release();
  EXPECT_THAT(r.WaitForBatches(4),
              ElementsAre(ElementsAre(-1), ElementsAre(1, 2, 3), ElementsAre(4, 5, 6, 7),
                          ElementsAre(8)));
}

TEST(GroupCommitQueueTest, GroupsAndSingleItemsShareABatchThatFitsThemAll) {
  CommitRecorder r(/*max_batch=*/3);
  r.Park();
  std::vector<int> group = {1, 2};
  r.queue().SubmitGroup(group);
  r.queue().Submit(3);
  r.queue().Submit(4);
  r.Release();
  EXPECT_THAT(r.WaitForBatches(3),
              ElementsAre(ElementsAre(-1), ElementsAre(1, 2, 3), ElementsAre(4)));
}

// Run to completion: the thread that handled the items commits them
// itself, before FlushHere() returns, instead of waking the writer.
TEST(GroupCommitQueueTest, AnArrivalEndedWithFlushHereFlushesOnItsOwnThread) {
  CommitRecorder r;
  CommitArrival arrival = r.queue().Arriving();
  r.queue().Submit(1);
  r.queue().Submit(2);
  std::move(arrival).FlushHere();
  EXPECT_THAT(r.WaitForBatches(1), ElementsAre(ElementsAre(1, 2)));
  EXPECT_THAT(r.threads(), ElementsAre(std::this_thread::get_id()));
}

// One flush at a time: behind a flush that runs, FlushHere() returns
// without flushing, and the batch goes when that flush is done.
TEST(GroupCommitQueueTest, FlushHereLeavesTheBatchToAFlushAlreadyRunning) {
  CommitRecorder r;
  r.Park();
  CommitArrival arrival = r.queue().Arriving();
  r.queue().Submit(1);
  std::move(arrival).FlushHere();
  EXPECT_EQ(r.batches(), 1u);  // only the parked one
  r.Release();
  EXPECT_THAT(r.WaitForBatches(2), ElementsAre(ElementsAre(-1), ElementsAre(1)));
  EXPECT_NE(r.threads()[1], std::this_thread::get_id());
}

// Items queued while FlushHere()'s flush ran, with no Arrival held, are
// flushed by the same thread before it returns.
TEST(GroupCommitQueueTest, FlushHereAlsoFlushesWhatWasQueuedDuringItsFlush) {
  CommitRecorder r;
  CommitArrival arrival = r.queue().Arriving();
  r.queue().Submit(10);  // its flush submits 11
  std::move(arrival).FlushHere();
  EXPECT_THAT(r.WaitForBatches(2), ElementsAre(ElementsAre(10), ElementsAre(11)));
  EXPECT_THAT(r.threads(),
              ElementsAre(std::this_thread::get_id(), std::this_thread::get_id()));
}

}  // namespace
}  // namespace fencegate
