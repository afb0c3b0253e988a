// The unit tier's random operation sequences (issue 6): 10,000 seeded
// sequences with crash-and-reopen at random points, half against the lock
// core (lock_sequence.h), half against the fence core (fence_sequence.h),
// each compared step by step with a reference model. In shards, so that
// ctest -j2 runs them side by side. Seeds and replay: random_sequences.h,
// docs/sequences-and-bad-input.md.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/random_sequences.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/fence_sequence.h"
#include "tests/unit/lock_sequence.h"

namespace fencegate {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::PlanShard;
using ::fencegate::testing::PlanShardFromEnv;
using ::fencegate::testing::RunSequences;

// The ctest entries, one per shard, are made from the same number
// (tests/sequence_tests.cmake).
constexpr int kShards = FENCEGATE_SEQUENCE_SHARDS;
constexpr int kLockSequences = 5000;
constexpr int kFenceSequences = 5000;
constexpr char kBinary[] = "build/tests/sequence_tests";

class LockSequences : public ::testing::TestWithParam<int> {};

TEST_P(LockSequences, MatchTheModelAcrossCrashes) {
  EXPECT_THAT(RunSequences(PlanShardFromEnv(GetParam(), kShards, kLockSequences), kBinary,
                           "*LockSequences.*",
                           [](uint64_t seed) { return lockservice::LockSequence(seed).Run(); }),
              IsOk());
}

INSTANTIATE_TEST_SUITE_P(Shards, LockSequences, ::testing::Range(0, kShards));

class FenceSequences : public ::testing::TestWithParam<int> {};

TEST_P(FenceSequences, MatchTheModelAcrossCrashes) {
  EXPECT_THAT(RunSequences(PlanShardFromEnv(GetParam(), kShards, kFenceSequences), kBinary,
                           "*FenceSequences.*",
                           [](uint64_t seed) { return gateway::FenceSequence(seed).Run(); }),
              IsOk());
}

INSTANTIATE_TEST_SUITE_P(Shards, FenceSequences, ::testing::Range(0, kShards));

TEST(SequencePlan, ShardsSplitTheSeedsWithoutGapOrOverlap) {
  for (uint64_t total : {0, 1, 4, 5, 9, 5000}) {
    uint64_t next = 100;
    for (int shard = 0; shard < kShards; ++shard) {
      testing::SequencePlan plan = PlanShard(shard, kShards, 100, total);
      EXPECT_EQ(plan.first_seed, next) << "total " << total << " shard " << shard;
      next += plan.count;
    }
    EXPECT_EQ(next, 100 + total);
  }
  EXPECT_EQ(PlanShard(0, kShards, 7, 1).count, 1);  // a replay runs in shard 0
}

TEST(SequenceRng, TheSameSeedMakesTheSameChoices) {
  testing::SequenceRng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.Below(1000);
    EXPECT_EQ(x, b.Below(1000));
    differs |= x != c.Below(1000);
    EXPECT_LT(x, 1000u);
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace fencegate
