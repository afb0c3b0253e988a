// The checker on small synthetic histories: each invariant holds on a clean
// history, each can fail, and maybe-applied outcomes are never flagged.
#include "tests/torture/history_checker.h"

#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/torture/history_builder.h"

namespace fencegate::torture {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Two holders one after the other, the second after a restart that kept
// the first's lease until it was released.
Builder CleanRun() {
  Builder b;
  b.Lease(Kind::kLoad, 0)
      .Acquire("w1", "r", 1, 10, 20)
      .Lease(Kind::kGrant, 15, "r", 1)
      .Read("w1", "r", 1, 0, 30, 40)
      .Write("w1", "r", 1, 1, "w1-1", 50, 60)
      .Lease(Kind::kLoad, 70)  // a restart: lease 1 comes back
      .Lease(Kind::kRestore, 71, "r", 1)
      .Lease(Kind::kRelease, 80, "r", 1)
      .Acquire("w2", "r", 2, 75, 95)
      .Lease(Kind::kGrant, 90, "r", 2)
      .Read("w2", "r", 2, 1, 100, 110)
      .Write("w2", "r", 2, 2, "w2-1", 120, 130)
      .Lease(Kind::kRelease, 140, "r", 2)
      .Final("r", 2, 2, {{"w1-1", 1}, {"w2-1", 2}});
  return b;
}

TEST(HistoryCheckerTest, CleanHistoryPasses) {
  CheckResult result = CleanRun().Check();
  EXPECT_TRUE(result.ok()) << Report(result);
  EXPECT_EQ(result.stats.acquires_ok, 2);
  EXPECT_EQ(result.stats.writes_ok, 2);
  EXPECT_EQ(result.stats.leases, 2);
  EXPECT_EQ(result.stats.lock_service_loads, 2);
}

TEST(HistoryCheckerTest, TokenGrantedTwiceIsCaught) {
  Builder b = CleanRun();
  b.Acquire("w3", "other", 2, 200, 210);  // token 2 again, on another resource
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kTokensUnique)) << Report(result);
  EXPECT_TRUE(result.Violates(kTokensIncreaseInRealTime)) << Report(result);
}

TEST(HistoryCheckerTest, SmallerTokenAfterALargerOneReturnedIsCaught) {
  Builder b;
  b.Acquire("w1", "a", 5, 0, 10).Acquire("w2", "b", 4, 20, 30);
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kTokensIncreaseInRealTime)) << Report(result);
  EXPECT_THAT(result.violations[0].detail, HasSubstr("w2's acquire of 'b' with token 4"));
}

TEST(HistoryCheckerTest, ConcurrentAcquiresMayReturnTokensInAnyOrder) {
  Builder b;
  b.Acquire("w1", "a", 5, 0, 30).Acquire("w2", "b", 4, 20, 40);  // overlapping calls
  EXPECT_TRUE(b.Check().ok()) << Report(b.Check());
}

TEST(HistoryCheckerTest, AcceptedWriteBelowAnAcknowledgedTokenIsCaught) {
  // w1 (token 1) was paused; w2 took over and read with token 2; w1's late
  // write with token 1 was accepted anyway.
  Builder b;
  b.Read("w1", "r", 1, 0, 0, 10)
      .Read("w2", "r", 2, 0, 20, 30)
      .Write("w1", "r", 1, 1, "w1-1", 40, 50)
      .Final("r", 1, 1, {{"w1-1", 1}});
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kFenceNeverBelowAcknowledged)) << Report(result);
}

TEST(HistoryCheckerTest, LateWriteRefusedIsFine) {
  Builder b;
  b.Read("w1", "r", 1, 0, 0, 10)
      .Read("w2", "r", 2, 0, 20, 30)
      .Write("w1", "r", 1, 1, "w1-1", 40, 50, Outcome::kRefused, /*max_token=*/2)
      .Write("w2", "r", 2, 1, "w2-1", 60, 70)
      .Final("r", 2, 1, {{"w2-1", 1}});
  EXPECT_TRUE(b.Check().ok()) << Report(b.Check());
}

TEST(HistoryCheckerTest, FenceGoingBackOverACrashIsCaught) {
  Builder b;
  b.Read("w1", "r", 7, 0, 0, 10).Final("r", /*fence=*/0, 0, {});
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kFenceNeverBelowAcknowledged)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("the final read reported fence 0, below token 7"));
}

TEST(HistoryCheckerTest, RefusalReportingAnOldFenceIsCaught) {
  Builder b;
  b.Read("w2", "r", 5, 0, 0, 10)
      .Write("w1", "r", 3, 1, "w1-1", 20, 30, Outcome::kRefused, /*max_token=*/4)
      .Final("r", 5, 0, {});
  EXPECT_TRUE(b.Check().Violates(kFenceNeverBelowAcknowledged)) << Report(b.Check());
}

TEST(HistoryCheckerTest, WriteOverlappingANewerReadIsNotFlagged) {
  // The write was sent before the newer read returned: either order is legal.
  Builder b;
  b.Read("w1", "r", 1, 0, 0, 10)
      .Read("w2", "r", 2, 1, 20, 50)
      .Write("w1", "r", 1, 1, "w1-1", 30, 40)
      .Final("r", 2, 1, {{"w1-1", 1}});
  EXPECT_TRUE(b.Check().ok()) << Report(b.Check());
}

TEST(HistoryCheckerTest, UnknownWriteFoundAppliedRaisesTheFence) {
  // w2's write timed out but was applied (it is in the final log); w1's
  // older write, sent after that, must have been refused.
  Builder b;
  b.Write("w2", "r", 2, 1, "w2-1", 0, 10, Outcome::kUnknown)
      .Write("w1", "r", 1, 2, "w1-1", 20, 30)
      .Final("r", 1, 2, {{"w2-1", 1}, {"w1-1", 2}});
  EXPECT_TRUE(b.Check().Violates(kFenceNeverBelowAcknowledged)) << Report(b.Check());
}

TEST(HistoryCheckerTest, LostAcknowledgedWriteIsCaught) {
  Builder b;
  b.Write("w1", "r", 1, 1, "w1-1", 0, 10).Final("r", 1, 0, {});
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kAcknowledgedWritesSurvive)) << Report(result);
  EXPECT_TRUE(result.Violates(kNoLostUpdate)) << Report(result);
}

TEST(HistoryCheckerTest, AcknowledgedWriteWithAnotherValueIsCaught) {
  Builder b;
  b.Write("w1", "r", 1, 1, "w1-1", 0, 10).Final("r", 1, 1, {{"w1-1", 7}});
  EXPECT_TRUE(b.Check().Violates(kAcknowledgedWritesSurvive)) << Report(b.Check());
}

TEST(HistoryCheckerTest, TwoIncrementsFromTheSameReadAreALostUpdate) {
  // Both read 0 and wrote 1; both were acknowledged: the counter says 1.
  Builder b;
  b.Read("w1", "r", 1, 0, 0, 10)
      .Read("w2", "r", 2, 0, 20, 30)
      .Write("w2", "r", 2, 1, "w2-1", 35, 40)
      .Write("w1", "r", 2, 1, "w1-1", 36, 45)
      .Final("r", 2, 1, {{"w1-1", 1}, {"w2-1", 1}});
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kNoLostUpdate)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("value 1 was written by"));
}

TEST(HistoryCheckerTest, UnknownWritesWidenTheCounterRangeAndAreNotFlagged) {
  // Of three unknown increments one was applied, the others not; and one
  // whose worker was killed mid-call never completed.
  Builder b;
  b.Write("w1", "r", 1, 1, "w1-1", 0, 10)
      .Write("w2", "r", 2, 2, "w2-1", 20, 30, Outcome::kUnknown)
      .Write("w3", "r", 3, 3, "w3-1", 40, 50, Outcome::kUnknown)
      .Write("w4", "r", 4, 3, "w4-1", 60, kNever, Outcome::kUnknown)
      .Final("r", 4, 2, {{"w1-1", 1}, {"w2-1", 2}});
  CheckResult result = b.Check();
  EXPECT_TRUE(result.ok()) << Report(result);
  EXPECT_EQ(result.stats.writes_unknown, 3);
  EXPECT_EQ(result.stats.writes_unknown_applied, 1);
}

TEST(HistoryCheckerTest, CounterAboveEveryPossibleIncrementIsCaught) {
  Builder b;
  b.Write("w1", "r", 1, 1, "w1-1", 0, 10).Final("r", 1, 2, {{"w1-1", 1}, {"x", 2}});
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kNoLostUpdate)) << Report(result);
  EXPECT_TRUE(result.Violates(kAppendLogExact)) << Report(result);  // nobody wrote "x"
}

TEST(HistoryCheckerTest, RefusedWriteInTheLogIsCaught) {
  Builder b;
  b.Write("w1", "r", 1, 1, "w1-1", 0, 10, Outcome::kRefused, 2).Final("r", 2, 1, {{"w1-1", 1}});
  EXPECT_TRUE(b.Check().Violates(kAppendLogExact)) << Report(b.Check());
}

TEST(HistoryCheckerTest, MaybeAppliedAcquiresAndReadsAreNotFlagged) {
  Builder b;
  b.Acquire("w1", "r", 0, 0, 10, Outcome::kUnknown)
      .Acquire("w2", "r", 0, 5, kNever, Outcome::kUnknown)
      .Acquire("w3", "r", 0, 20, 30, Outcome::kRefused)
      .Read("w3", "r", 9, 0, 40, 50, Outcome::kUnknown)
      .Final("r", 0, 0, {});
  EXPECT_TRUE(b.Check().ok()) << Report(b.Check());
}

TEST(HistoryCheckerTest, OverlappingGrantIsCaught) {
  Builder b;
  b.Lease(Kind::kGrant, 0, "r", 1).Lease(Kind::kGrant, 10, "r", 2).Lease(Kind::kRelease, 20, "r", 1);
  EXPECT_TRUE(b.Check().Violates(kLeasesDoNotOverlap)) << Report(b.Check());
}

TEST(HistoryCheckerTest, AcknowledgedLeaseForgottenByARestartIsCaught) {
  Builder b;
  b.Acquire("w1", "r", 1, 0, 10)
      .Lease(Kind::kGrant, 5, "r", 1, /*ttl_ms=*/2000)
      .Lease(Kind::kLoad, 100)  // restart; lease 1 is not restored
      .Lease(Kind::kGrant, 200, "r", 2);
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kLeasesDoNotOverlap)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("forgotten by a restart"));
}

TEST(HistoryCheckerTest, UncommittedGrantLostInACrashIsNotFlagged) {
  // Nobody was told about lease 1 (its commit never happened); a restart
  // drops it and the resource is free at once.
  Builder b;
  b.Lease(Kind::kGrant, 5, "r", 1)
      .Lease(Kind::kLoad, 100)
      .Lease(Kind::kGrant, 101, "r", 1)
      .Acquire("w2", "r", 1, 90, 110);
  EXPECT_TRUE(b.Check().ok()) << Report(b.Check());
}

TEST(HistoryCheckerTest, RestoredLeaseStillHeldAfterARestart) {
  Builder b;
  b.Lease(Kind::kGrant, 0, "r", 1)
      .Lease(Kind::kLoad, 100)
      .Lease(Kind::kRestore, 100, "r", 1)
      .Lease(Kind::kGrant, 150, "r", 2);  // while 1 is held again
  EXPECT_TRUE(b.Check().Violates(kLeasesDoNotOverlap)) << Report(b.Check());
}

TEST(HistoryCheckerTest, ReleaseUndoneByACrashBringsTheLeaseBack) {
  // The release of 1 never committed: the restart restores 1; meanwhile the
  // grant of 2 (also uncommitted) is gone. No overlap.
  Builder b;
  b.Lease(Kind::kGrant, 0, "r", 1)
      .Lease(Kind::kRelease, 50, "r", 1)
      .Lease(Kind::kGrant, 50, "r", 2)
      .Lease(Kind::kLoad, 100)
      .Lease(Kind::kRestore, 100, "r", 1)
      .Lease(Kind::kRelease, 120, "r", 1)
      .Lease(Kind::kGrant, 120, "r", 2);
  CheckResult result = b.Check();
  EXPECT_TRUE(result.ok()) << Report(result);
  EXPECT_EQ(result.stats.leases, 4);
}

// ------------------------------------------------ a replicated lock service

// Leader a grants token 1 and is deposed (paused); b loads (a new term) and
// grants token 2. a's late events, after b's load, were never committed:
// an unacknowledged grant, a release, an expiry. No violation.
Builder HandOver() {
  Builder b;
  b.LeaseOn("ls-a", Kind::kLoad, 0)
      .Acquire("w1", "r", 1, 10, 20)
      .LeaseOn("ls-a", Kind::kGrant, 15, "r", 1, 1000)
      .LeaseOn("ls-b", Kind::kLoad, 3000)  // a's lease expired meanwhile? it is restored
      .LeaseOn("ls-b", Kind::kRestore, 3001, "r", 1, 1000)
      .LeaseOn("ls-a", Kind::kGrant, 3100, "q", 2, 1000)    // a resumes: never committed
      .LeaseOn("ls-a", Kind::kRelease, 3200, "r", 1, 1000)  // nor this
      .LeaseOn("ls-b", Kind::kExpire, 4001, "r", 1, 1000)
      .Acquire("w2", "r", 3, 4000, 4100)
      .LeaseOn("ls-b", Kind::kGrant, 4050, "r", 3, 1000)
      .Acquire("w3", "q", 4, 4200, 4300)
      .LeaseOn("ls-b", Kind::kGrant, 4250, "q", 4, 1000)
      .Final("r", 0, 0, {})
      .Final("q", 0, 0, {});
  return b;
}

TEST(HistoryCheckerTest, DeposedLeadersUncommittedEventsAreNotFlagged) {
  CheckResult result = HandOver().Check();
  EXPECT_TRUE(result.ok()) << Report(result);
  EXPECT_EQ(result.stats.leaders, 2);
  EXPECT_EQ(result.stats.deposed_leases, 0);
}

TEST(HistoryCheckerTest, DeposedLeadersAcknowledgedGrantOverlapsTheNewLeaders) {
  // a, deposed at b's load, grants q/2 and a client is told so; b grants
  // q/5 within q/2's TTL.
  Builder b = HandOver();
  b.Acquire("w4", "q", 2, 3050, 3150)
      .Acquire("w5", "q", 5, 3400, 3600)
      .LeaseOn("ls-b", Kind::kGrant, 3500, "q", 5, 1000)
      .LeaseOn("ls-b", Kind::kRelease, 3700, "q", 5, 1000);
  CheckResult result = b.Check();
  ASSERT_TRUE(result.Violates(kLeasesDoNotOverlap)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("granted while another instance led"));
  EXPECT_EQ(result.stats.deposed_leases, 1);
}

TEST(HistoryCheckerTest, NewLeaderReissuingAnAcknowledgedTokenIsCaught) {
  // a grants r/5, acknowledged; b loads a state without it (a's commit came
  // too late) and grants q/5 again: tokens go back across leaders.
  Builder b;
  b.LeaseOn("ls-a", Kind::kLoad, 0)
      .LeaseOn("ls-a", Kind::kGrant, 10, "r", 5, 1000)
      .LeaseOn("ls-b", Kind::kLoad, 3000)
      .LeaseOn("ls-b", Kind::kGrant, 3500, "q", 5, 1000)
      .Acquire("w1", "r", 5, 5, 3600)  // acknowledged while b already led
      .Acquire("w2", "q", 5, 3400, 3550)
      .Final("r", 0, 0, {})
      .Final("q", 0, 0, {});
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kTokensIncreaseAcrossLeaders)) << Report(result);
}

TEST(HistoryCheckerTest, NewLeaderContinuingFromEveryAcknowledgedTokenPasses) {
  Builder b;
  b.LeaseOn("ls-a", Kind::kLoad, 0)
      .LeaseOn("ls-a", Kind::kGrant, 10, "r", 5, 1000)
      .LeaseOn("ls-a", Kind::kRelease, 20, "r", 5, 1000)
      .LeaseOn("ls-a", Kind::kGrant, 30, "r", 6, 1000)  // never committed: a was cut off
      .LeaseOn("ls-b", Kind::kLoad, 3000)
      .LeaseOn("ls-b", Kind::kGrant, 3500, "r", 6,
               1000)  // 6 again: fine, 6 was never told
      .Acquire("w1", "r", 5, 5, 15)
      .Acquire("w2", "r", 6, 3400, 3550)
      .Final("r", 0, 0, {});
  CheckResult result = b.Check();
  EXPECT_TRUE(result.ok()) << Report(result);
}

// w1 writes with token 7 through gateway gw-a; then w2 writes with the
// stale token 6 through `second_gateway`, and both writes are kept.
Builder StaleWriteThrough(const std::string& second_gateway) {
  Builder b;
  b.Write("w1", "r", 7, 1, "w1-1", 10, 20)
      .Through("gw-a")
      .Write("w2", "r", 6, 2, "w2-1", 30, 40)
      .Through(second_gateway)
      .Final("r", 7, 2, {{"w1-1", 1}, {"w2-1", 2}});
  return b;
}

TEST(HistoryCheckerTest, StaleWriteThroughAnotherGatewayIsCaught) {
  CheckResult result = StaleWriteThrough("gw-b").Check();
  EXPECT_TRUE(result.Violates(kStaleWriteThroughAnotherGateway)) << Report(result);
  EXPECT_TRUE(result.Violates(kFenceNeverBelowAcknowledged)) << Report(result);
}

TEST(HistoryCheckerTest, StaleWriteThroughTheSameGatewayIsOnlyTheFenceInvariants) {
  CheckResult result = StaleWriteThrough("gw-a").Check();
  EXPECT_FALSE(result.Violates(kStaleWriteThroughAnotherGateway)) << Report(result);
  EXPECT_TRUE(result.Violates(kFenceNeverBelowAcknowledged)) << Report(result);
}

TEST(HistoryCheckerTest, StaleIncrementThroughSqlIsCaughtAndCounted) {
  // What a SQL worker that skips fencegate_fence does: paused between its
  // read and its write, it commits after a newer holder's increment through
  // a gateway, writing the value that holder wrote.
  Builder b;
  b.Read("sql0", "r", 6, 0, 10, 20)
      .Through(kSqlPath)
      .Read("w1", "r", 7, 0, 30, 40)
      .Through("gw-a")
      .Write("w1", "r", 7, 1, "w1-1", 50, 60)
      .Through("gw-a")
      .Write("sql0", "r", 6, 1, "sql0-1", 70, 80)
      .Through(kSqlPath)
      .Write("sql0", "r", 6, 2, "sql0-2", 90, 95, Outcome::kRefused, 7)
      .Through(kSqlPath)
      .Final("r", 7, 1, {{"w1-1", 1}, {"sql0-1", 1}});
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kNoLostUpdate)) << Report(result);
  EXPECT_TRUE(result.Violates(kStaleWriteThroughAnotherGateway)) << Report(result);
  EXPECT_EQ(result.stats.writes_ok, 2);
  EXPECT_EQ(result.stats.sql_writes_ok, 1);
  EXPECT_EQ(result.stats.sql_writes_refused, 1);
  EXPECT_EQ(result.stats.sql_writes_unknown, 0);
}

TEST(HistoryCheckerTest, GrantTheFenceFeedNeverDeliveredIsCaught) {
  Builder plain;
  plain.Acquire("harness", "probe", 9, 10, 20).Final("probe", 9, 0, {});
  EXPECT_TRUE(plain.Check().ok()) << "plain fencing: the feed promises nothing";
  Builder missed;
  missed.Acquire("harness", "probe", 9, 10, 20)
      .Final("probe", 9, 0, {})  // a restart replayed the feed: too late
      .GrantTimeFencing("probe", 8);
  CheckResult result = missed.Check();
  EXPECT_TRUE(result.Violates(kGrantTimeFenceReachesGateways)) << Report(result);
  Builder unknown;  // no position at all for an acknowledged grant
  unknown.Acquire("harness", "probe", 9, 10, 20)
      .Final("probe", 9, 0, {})
      .GrantTimeFencing();
  EXPECT_TRUE(unknown.Check().Violates(kGrantTimeFenceReachesGateways));
  Builder reached;
  reached.Acquire("harness", "probe", 9, 10, 20)
      .Final("probe", 9, 0, {})
      .GrantTimeFencing("probe", 9);
  EXPECT_TRUE(reached.Check().ok()) << Report(reached.Check());
}

}  // namespace
}  // namespace fencegate::torture
