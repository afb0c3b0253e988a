// The completion-queue loop's bursts (common/server/completion_queue_loop.h)
// and the group commit they drive (common/server/commit_bursts.h). Events
// are posted with grpc::Alarm at a deadline already past, which gRPC
// queues before Set() returns, so which events are ready together is
// known.
#include "common/server/completion_queue_loop.h"

#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/core/group_commit.h"
#include "common/server/commit_bursts.h"
#include "gmock/gmock.h"
#include "grpc/support/time.h"
#include "grpcpp/alarm.h"
#include "gtest/gtest.h"

namespace fencegate {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Logs the loop's calls, in order.
class Recorder final : public BurstHooks {
 public:
  void Begin() override { log.push_back("begin"); }
  void End() override { log.push_back("end"); }
  bool HeldOpen() override { return held; }
  std::vector<std::string> log;
  bool held = false;  // the torture's hold
};

// An event that logs its name and then runs `then`.
class Logged final : public CompletionQueueEvent {
 public:
  Logged(std::vector<std::string>* log, std::string name, std::function<void()> then = {})
      : log_(log), name_(std::move(name)), then_(std::move(then)) {}
  void On(bool ok) override {
    log_->push_back(ok ? name_ : name_ + " (not ok)");
    if (then_) then_();
  }

 private:
  std::vector<std::string>* const log_;
  const std::string name_;
  const std::function<void()> then_;
};

gpr_timespec Past() { return gpr_inf_past(GPR_CLOCK_MONOTONIC); }

TEST(CompletionQueueLoopTest,
     EventsReadyTogetherRunInOneBurstThatEndsBeforeTheLoopBlocks) {
  grpc::CompletionQueue cq;
  Recorder hooks;
  grpc::Alarm alarm_a, alarm_b, alarm_c;
  Logged a(&hooks.log, "a");
  Logged c(&hooks.log, "c", [&] { cq.Shutdown(); });
  // Posted by b while the burst runs, and ready at once: the same burst.
  Logged b(&hooks.log, "b", [&] { alarm_c.Set(&cq, Past(), &c); });
  alarm_a.Set(&cq, Past(), &a);
  alarm_b.Set(&cq, Past(), &b);
  RunCompletionQueueLoop(cq, &hooks);
  EXPECT_THAT(hooks.log, ElementsAre("begin", "a", "b", "c", "end"));
}

// A burst held open (the torture's failpoint hold) waits for an event that
// is not ready yet and takes it in; it ends once no longer held.
TEST(CompletionQueueLoopTest, AHeldBurstTakesInLaterEventsAndEndsWhenLetGo) {
  grpc::CompletionQueue cq;
  Recorder hooks;
  hooks.held = true;
  grpc::Alarm alarm_a, alarm_b;
  Logged b(&hooks.log, "b", [&] {
    hooks.held = false;
    cq.Shutdown();
  });
  Logged a(&hooks.log, "a", [&] {
    alarm_b.Set(&cq,
                gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                             gpr_time_from_millis(20, GPR_TIMESPAN)),
                &b);
  });
  alarm_a.Set(&cq, Past(), &a);
  RunCompletionQueueLoop(cq, &hooks);
  EXPECT_THAT(hooks.log, ElementsAre("begin", "a", "b", "end"));
}

TEST(CompletionQueueLoopTest, ABurstEndsAfterMaxBurstEventsEvenIfMoreAreReady) {
  grpc::CompletionQueue cq;
  Recorder hooks;
  Logged a(&hooks.log, "a"), b(&hooks.log, "b");
  Logged c(&hooks.log, "c", [&] { cq.Shutdown(); });
  grpc::Alarm alarm_a, alarm_b, alarm_c;
  alarm_a.Set(&cq, Past(), &a);
  alarm_b.Set(&cq, Past(), &b);
  alarm_c.Set(&cq, Past(), &c);
  CompletionQueueLoopOptions options;
  options.max_burst_events = 2;
  RunCompletionQueueLoop(cq, &hooks, options);
  EXPECT_THAT(hooks.log, ElementsAre("begin", "a", "b", "end", "begin", "c", "end"));
}

TEST(CompletionQueueLoopTest,
     WorkPostponedToTheBurstsEndRunsAfterEndAndBeforeTheNextBurst) {
  grpc::CompletionQueue cq;
  Recorder hooks;
  grpc::Alarm next_alarm;
  Logged next(&hooks.log, "next", [&] { cq.Shutdown(); });
  Logged a(&hooks.log, "a", [&] {
    EXPECT_TRUE(RunAfterBurst([&] {
      hooks.log.push_back("after a's burst");
      next_alarm.Set(&cq, Past(), &next);  // a new burst: this one has ended
    }));
  });
  grpc::Alarm alarm_a;
  alarm_a.Set(&cq, Past(), &a);
  RunCompletionQueueLoop(cq, &hooks);
  EXPECT_THAT(hooks.log, ElementsAre("begin", "a", "end", "after a's burst", "begin",
                                     "next", "end"));
}

TEST(CompletionQueueLoopTest, OutsideABurstNothingIsPostponed) {
  bool ran = false;
  EXPECT_FALSE(RunAfterBurst([&] { ran = true; }));
  EXPECT_FALSE(ran);
  // A loop without hooks has no bursts either.
  grpc::CompletionQueue cq;
  std::vector<std::string> log;
  Logged a(&log, "a", [&] {
    EXPECT_FALSE(RunAfterBurst([] {}));
    cq.Shutdown();
  });
  grpc::Alarm alarm_a;
  alarm_a.Set(&cq, Past(), &a);
  RunCompletionQueueLoop(cq, nullptr);
  EXPECT_THAT(log, ElementsAre("a"));
}

TEST(CommitBurstsTest, WhatABurstQueuedCommitsOnceWhenItEndsOnTheLoopsThread) {
  std::vector<std::vector<int>> batches;
  std::vector<std::thread::id> flushed_on;
  GroupCommitQueue<int> commits(
      [&](std::vector<int>& batch) {
        batches.push_back(batch);
        flushed_on.push_back(std::this_thread::get_id());
      },
      /*max_batch=*/100);
  CommitBursts bursts([&] { return commits.Arriving(); });
  bursts.Begin();
  // Three messages, each handled as a session does: its own Arrival,
  // ended with FlushHere() once its calls are queued.
  for (int item = 1; item <= 3; ++item) {
    CommitArrival message = commits.Arriving();
    commits.Submit(item);
    std::move(message).FlushHere();
  }
  EXPECT_TRUE(commits.WaitingForArrivals());  // the burst holds them
  EXPECT_THAT(batches, IsEmpty());
  bursts.End();
  EXPECT_THAT(batches, ElementsAre(ElementsAre(1, 2, 3)));
  EXPECT_THAT(flushed_on, ElementsAre(std::this_thread::get_id()));
}

TEST(CommitBurstsTest, AfterStopBurstsLetTheQueueAlone) {
  GroupCommitQueue<int> commits([](std::vector<int>&) {}, /*max_batch=*/100);
  int arrivals = 0;
  CommitBursts bursts([&] {
    ++arrivals;
    return commits.Arriving();
  });
  bursts.Begin();
  bursts.End();
  EXPECT_EQ(arrivals, 1);
  bursts.Stop();  // no burst under way: returns at once
  bursts.Begin();
  bursts.End();
  EXPECT_EQ(arrivals, 1);
}

}  // namespace
}  // namespace fencegate
