// The checker's rules for the kinds of lock (docs/semantics.md, "Kinds of
// lock") on small synthetic histories: shared leases and permits may
// overlap each other and nothing else, a semaphore never has more than N
// permits out, a refused Acquire leaves its holder nothing, and a reader
// paused past its lease is refused, never served an overwritten value.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/torture/history_builder.h"
#include "tests/torture/history_checker.h"

namespace fencegate::torture {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr LeaseMode kShared = LeaseMode::kShared;
constexpr LeaseMode kPermit = LeaseMode::kPermit;

// Readers 1 and 2 share the lease; a writer takes it after both let go.
Builder ReadersThenWriter() {
  Builder b;
  b.Lease(Kind::kLoad, 0)
      .Acquire("w1", "r", 1, 10, 20)
      .AcquiredAs(kShared, "w1-1")
      .Lease(Kind::kGrant, 15, "r", 1)
      .LeaseAs(kShared, "w1-1")
      .Acquire("w2", "r", 2, 12, 22)
      .AcquiredAs(kShared, "w2-1")
      .Lease(Kind::kGrant, 17, "r", 2)
      .LeaseAs(kShared, "w2-1")
      .Read("w1", "r", 1, 0, 30, 40)
      .ReadAs(kShared)
      .Read("w2", "r", 2, 0, 32, 42)
      .ReadAs(kShared)
      .Lease(Kind::kRelease, 50, "r", 1)
      .Lease(Kind::kExpire, 60, "r", 2)
      .Acquire("w3", "r", 4, 55, 70)
      .AcquiredAs(LeaseMode::kExclusive, "w3-1")
      .Lease(Kind::kGrant, 65, "r", 4)
      .LeaseAs(LeaseMode::kExclusive, "w3-1")
      .Read("w3", "r", 4, 0, 72, 74)
      .Write("w3", "r", 4, 1, "w3-1", 76, 80)
      .Lease(Kind::kRelease, 90, "r", 4)
      .Final("r", 4, 1, {{"w3-1", 1}});
  return b;
}

TEST(HistoryCheckerKindsTest, SharedLeasesMayOverlapEachOther) {
  CheckResult result = ReadersThenWriter().Check();
  EXPECT_THAT(result.violations, IsEmpty()) << Report(result);
  EXPECT_EQ(result.stats.shared_leases, 2);
}

TEST(HistoryCheckerKindsTest, SharedLeaseBesideAnExclusiveOneIsCaught) {
  Builder b = ReadersThenWriter();
  b.Lease(Kind::kGrant, 66, "r", 5).LeaseAs(kShared, "w5-1");  // during token 4
  CheckResult result = b.Check();
  ASSERT_TRUE(result.Violates(kLeasesDoNotOverlap)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("the shared lease with token 5"));
}

TEST(HistoryCheckerKindsTest, ExclusiveLeaseBesideASharedOneIsCaught) {
  Builder b = ReadersThenWriter();
  b.Lease(Kind::kGrant, 45, "r", 3);  // exclusive, while shared 2 is held
  CheckResult result = b.Check();
  ASSERT_TRUE(result.Violates(kLeasesDoNotOverlap)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("the exclusive lease with token 3"));
}

// Permits 1, 2 overlap on a semaphore of 2; permit 3 comes when 1 is back.
Builder TwoPermits() {
  Builder b;
  b.Lease(Kind::kLoad, 0)
      .Acquire("w1", "sem", 1, 10, 20)
      .AcquiredAs(kPermit, "w1-1", 2)
      .Lease(Kind::kGrant, 15, "sem", 1)
      .LeaseAs(kPermit, "w1-1")
      .Acquire("w2", "sem", 2, 16, 25)
      .AcquiredAs(kPermit, "w2-1", 2)
      .Lease(Kind::kGrant, 18, "sem", 2)
      .LeaseAs(kPermit, "w2-1")
      .Lease(Kind::kRelease, 30, "sem", 1)
      .Acquire("w3", "sem", 3, 22, 35)
      .AcquiredAs(kPermit, "w3-1", 2)
      .Lease(Kind::kGrant, 30, "sem", 3)  // the moment permit 1 came back
      .LeaseAs(kPermit, "w3-1")
      .Lease(Kind::kRelease, 40, "sem", 2)
      .Lease(Kind::kRelease, 45, "sem", 3);
  return b;
}

TEST(HistoryCheckerKindsTest, NPermitsAtOncePass) {
  CheckResult result = TwoPermits().Check();
  EXPECT_THAT(result.violations, IsEmpty()) << Report(result);
  EXPECT_EQ(result.stats.permit_leases, 3);
}

TEST(HistoryCheckerKindsTest, PermitPastNIsCaught) {
  Builder b = TwoPermits();
  b.Lease(Kind::kGrant, 20, "sem", 4).LeaseAs(kPermit, "w4-1");  // 1 and 2 held
  b.Lease(Kind::kRelease, 21, "sem", 4);
  CheckResult result = b.Check();
  ASSERT_TRUE(result.Violates(kPermitsAtMostN)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("of 2 permits"));
  EXPECT_FALSE(result.Violates(kLeasesDoNotOverlap)) << Report(result);
}

// w2 asks for r and q together, finds q taken and is refused; the bug
// granted it r anyway (a partial set), which it holds until its TTL.
TEST(HistoryCheckerKindsTest, RefusedMultiAcquireThatKeptALeaseIsCaught) {
  Builder b;
  b.Lease(Kind::kLoad, 0)
      .Acquire("w1", "q", 1, 10, 20)
      .AcquiredAs(LeaseMode::kExclusive, "w1-1")
      .Lease(Kind::kGrant, 15, "q", 1)
      .LeaseAs(LeaseMode::kExclusive, "w1-1")
      .Acquire("w2", "r", 0, 30, 40, Outcome::kRefused)
      .AcquiredAs(LeaseMode::kExclusive, "w2-1")
      .Acquire("w2", "q", 0, 30, 40, Outcome::kRefused)
      .AcquiredAs(LeaseMode::kExclusive, "w2-1")
      .Lease(Kind::kGrant, 35, "r", 2)
      .LeaseAs(LeaseMode::kExclusive, "w2-1")
      .Lease(Kind::kRelease, 50, "q", 1)
      .Lease(Kind::kExpire, 1035, "r", 2);
  CheckResult result = b.Check();
  ASSERT_TRUE(result.Violates(kRefusedAcquireHoldsNothing)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("held for that holder"));
}

// A retry answered "not acquired" after the holder's earlier grant had
// expired unanswered (its reply lost) is not a partial grant.
TEST(HistoryCheckerKindsTest, RefusalAfterTheHoldersLeaseEndedIsNotFlagged) {
  Builder b;
  b.Lease(Kind::kLoad, 0)
      .Lease(Kind::kGrant, 15, "r", 1)
      .LeaseAs(LeaseMode::kExclusive, "w1-1")
      .Lease(Kind::kExpire, 1015, "r", 1)
      .Lease(Kind::kGrant, 1020, "r", 2)
      .LeaseAs(LeaseMode::kExclusive, "w2-1")
      .Acquire("w1", "r", 0, 10, 1030, Outcome::kRefused)
      .AcquiredAs(LeaseMode::kExclusive, "w1-1");
  CheckResult result = b.Check();
  EXPECT_FALSE(result.Violates(kRefusedAcquireHoldsNothing)) << Report(result);
}

// A reader takes shared token 1 and reads 0, pauses past its TTL; a writer
// gets 2 and stores 1; the reader wakes and reads again.
Builder PausedReader(Outcome second_read, uint64_t value_seen) {
  Builder b;
  b.Lease(Kind::kLoad, 0)
      .Acquire("w1", "r", 1, 10, 20)
      .AcquiredAs(kShared, "w1-1")
      .Lease(Kind::kGrant, 15, "r", 1)
      .LeaseAs(kShared, "w1-1")
      .Read("w1", "r", 1, 0, 30, 40)
      .ReadAs(kShared)
      .Lease(Kind::kExpire, 1015, "r", 1)
      .Acquire("w2", "r", 2, 1010, 1030)
      .Lease(Kind::kGrant, 1020, "r", 2)
      .Read("w2", "r", 2, 0, 1040, 1050)
      .Write("w2", "r", 2, 1, "w2-1", 1060, 1070)
      .Lease(Kind::kRelease, 1080, "r", 2)
      .Read("w1", "r", 1, value_seen, 2000, 2010, second_read, 2)
      .ReadAs(kShared)
      .Final("r", 2, 1, {{"w2-1", 1}});
  return b;
}

TEST(HistoryCheckerKindsTest, PausedReaderRefusedPasses) {
  CheckResult result = PausedReader(Outcome::kRefused, 0).Check();
  EXPECT_THAT(result.violations, IsEmpty()) << Report(result);
}

// Served from a stale copy: the value the writer overwrote.
TEST(HistoryCheckerKindsTest, PausedReaderServedAnOverwrittenValueIsCaught) {
  CheckResult result = PausedReader(Outcome::kOk, 0).Check();
  ASSERT_TRUE(result.Violates(kReadsSeeNoOverwrittenValue)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("shared fenced read with token 1"));
}

// Served the newer writer's value: the gateway skipped the fence.
TEST(HistoryCheckerKindsTest, PausedReaderServedTheNewerWritersValueIsCaught) {
  CheckResult result = PausedReader(Outcome::kOk, 1).Check();
  ASSERT_TRUE(result.Violates(kSharedReadSeesNoNewerWrite)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("w2's write of w2-1 with token 2"));
  EXPECT_FALSE(result.Violates(kReadsSeeNoOverwrittenValue)) << Report(result);
}

// A reader granted after the writer's lease reads what it wrote.
TEST(HistoryCheckerKindsTest, ReaderAfterTheWriterSeesItsValue) {
  Builder b = ReadersThenWriter();
  b.Acquire("w6", "r", 6, 95, 100)
      .AcquiredAs(kShared, "w6-1")
      .Lease(Kind::kGrant, 97, "r", 6)
      .LeaseAs(kShared, "w6-1")
      .Read("w6", "r", 6, 1, 110, 120)
      .ReadAs(kShared);
  CheckResult result = b.Check();
  EXPECT_THAT(result.violations, IsEmpty()) << Report(result);
}

// A shared read moves no fence: a later write with an older exclusive
// token is the fence invariants' business only if an exclusive token was
// acknowledged. Here reader 3 read while writer 2's lease had expired and
// writer 2 then wrote: the gateway was right to accept it (fence 2).
TEST(HistoryCheckerKindsTest, SharedReadIsNoEvidenceOfTheFence) {
  Builder b;
  b.Lease(Kind::kLoad, 0)
      .Acquire("w2", "r", 2, 10, 20)
      .Lease(Kind::kGrant, 15, "r", 2)
      .Read("w2", "r", 2, 0, 30, 40)
      .Lease(Kind::kExpire, 1015, "r", 2)
      .Acquire("w3", "r", 3, 1016, 1020)
      .AcquiredAs(kShared, "w3-1")
      .Lease(Kind::kGrant, 1017, "r", 3)
      .LeaseAs(kShared, "w3-1")
      .Read("w3", "r", 3, 0, 1030, 1040)
      .ReadAs(kShared)
      .Through("gateway-1")
      .Write("w2", "r", 2, 1, "w2-1", 1050, 1060)
      .Through("gateway-0")
      .Lease(Kind::kRelease, 1070, "r", 3)
      .Final("r", 2, 1, {{"w2-1", 1}});
  b.GrantTimeFencing("r", 2);
  CheckResult result = b.Check();
  EXPECT_THAT(result.violations, IsEmpty()) << Report(result);
}

}  // namespace
}  // namespace fencegate::torture
