// The checker's election rules (election_checker.h) on small synthetic
// histories: observers told changes in (term, seq) order agree, and every
// value told speaks for the term that said it; a deposed leader's late
// Proclaim applied to its successor's term, an observer told a change
// twice or out of order, and observers that disagree are each caught.
#include "tests/torture/election_checker.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/torture/history_builder.h"

namespace fencegate::torture {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kElection[] = "election";

// w1 leads in term 1 and proclaims; its term expires while it is paused;
// w2 leads in term 3 (2 is the expiry mark) and proclaims; w1's late
// Proclaim is refused. Two observers see it all.
Builder TwoTerms() {
  Builder b;
  b.Lease(Kind::kLoad, 0)
      .Acquire("w1", kElection, 1, 10, 20)
      .CampaignedAs("w1-1", "w1-1/0")
      .Lease(Kind::kGrant, 15, kElection, 1)
      .LeaseAs(LeaseMode::kExclusive, "w1-1")
      .Proclaim("w1", kElection, 1, "w1-1/1", 1, 22, 24)
      .Lease(Kind::kExpire, 1015, kElection, 1)
      .Acquire("w2", kElection, 3, 900, 1020)
      .CampaignedAs("w2-1", "w2-1/0")
      .Lease(Kind::kGrant, 1016, kElection, 3)
      .LeaseAs(LeaseMode::kExclusive, "w2-1")
      .Proclaim("w2", kElection, 3, "w2-1/1", 1, 1030, 1032)
      .Proclaim("w1", kElection, 1, "w1-1/2", 0, 1040, 1042, Outcome::kRefused)
      .Lease(Kind::kRelease, 1100, kElection, 3);
  for (const char* observer : {"w3", "w4"}) {
    b.Seen(observer, kElection, 1, 0, "w1-1", "w1-1/0")
        .Seen(observer, kElection, 1, 1, "w1-1", "w1-1/1")
        .Seen(observer, kElection, 1, 2)  // term 1 ends
        .Seen(observer, kElection, 3, 0, "w2-1", "w2-1/0")
        .Seen(observer, kElection, 3, 1, "w2-1", "w2-1/1");
  }
  return b;
}

TEST(ElectionCheckerTest, OrderedAgreeingObserversOfProclaimedValuesPass) {
  CheckResult result = TwoTerms().Check();
  EXPECT_THAT(result.violations, IsEmpty()) << Report(result);
  EXPECT_EQ(result.stats.terms, 2);
  EXPECT_EQ(result.stats.proclaims_ok, 2);
  EXPECT_EQ(result.stats.proclaims_refused, 1);
  EXPECT_EQ(result.stats.changes_observed, 10);
}

TEST(ElectionCheckerTest, AnObserverThatResumesFromTheStartOrFromNothingPasses) {
  // Told term 1's state again after a restart that forgot the ended term
  // (term 0: nobody leads, not known), then resuming in order.
  Builder b = TwoTerms();
  b.Seen("w5", kElection, 1, 1, "w1-1", "w1-1/1")
      .Seen("w5", kElection, 0, 0)
      .Seen("w5", kElection, 3, 1, "w2-1", "w2-1/1");
  CheckResult result = b.Check();
  EXPECT_THAT(result.violations, IsEmpty()) << Report(result);
}

TEST(ElectionCheckerTest, ADeposedLeadersProclaimInItsSuccessorsTermIsCaught) {
  // The late Proclaim with term 1 was applied to term 3 (and acknowledged).
  Builder b = TwoTerms();
  b.Proclaim("w1", kElection, 1, "w1-1/3", 2, 1050, 1052)
      .Seen("w3", kElection, 3, 2, "w2-1", "w1-1/3");
  CheckResult result = b.Check();
  ASSERT_TRUE(result.Violates(kElectionValuesFromTheirTerm)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("proclaimed it with term 1"));
}

TEST(ElectionCheckerTest, ARefusedProclaimThatWasToldIsCaught) {
  Builder b = TwoTerms();
  b.Seen("w3", kElection, 3, 2, "w2-1", "w1-1/2");  // w1's refused Proclaim
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kElectionValuesFromTheirTerm)) << Report(result);
}

TEST(ElectionCheckerTest, ATermsFirstValueFromAnotherCampaignIsCaught) {
  Builder b = TwoTerms();
  b.Seen("w5", kElection, 3, 0, "w2-1", "w1-1/0");
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kElectionValuesFromTheirTerm)) << Report(result);
}

TEST(ElectionCheckerTest, AnAcknowledgedProclaimToldWithAnotherValueIsCaught) {
  // w2's Proclaim answered seq 2, but its observers were told seq 2 said
  // something else (that they were told it at all checks out: w2 said it).
  Builder b = TwoTerms();
  b.Proclaim("w2", kElection, 3, "w2-1/2", 2, 1060, 1062)
      .Proclaim("w2", kElection, 3, "w2-1/3", 3, 1064, 1066)
      .Seen("w3", kElection, 3, 2, "w2-1", "w2-1/3");
  CheckResult result = b.Check();
  EXPECT_TRUE(result.Violates(kElectionValuesFromTheirTerm)) << Report(result);
}

TEST(ElectionCheckerTest, AChangeToldTwiceOrOutOfOrderIsCaught) {
  Builder twice = TwoTerms();
  twice.Seen("w3", kElection, 3, 1, "w2-1", "w2-1/1");
  EXPECT_TRUE(twice.Check().Violates(kElectionChangesInOrder));

  Builder back;
  back.Seen("w3", kElection, 3, 0, "w2-1", "w2-1/0")
      .Seen("w3", kElection, 1, 1, "w1-1", "w1-1/1");
  EXPECT_TRUE(back.Check().Violates(kElectionChangesInOrder));
}

TEST(ElectionCheckerTest, ObserversThatDisagreeAreCaught) {
  Builder b = TwoTerms();
  b.Seen("w5", kElection, 3, 0, "w9-1", "w2-1/0");  // another candidate
  CheckResult result = b.Check();
  ASSERT_TRUE(result.Violates(kElectionChangesInOrder)) << Report(result);
  EXPECT_THAT(Report(result), HasSubstr("observers disagree"));
}

}  // namespace
}  // namespace fencegate::torture
