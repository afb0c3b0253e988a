// The random-sequence checks can fail. This binary links the same sequence
// runners as sequence_tests, but with the cores' test builds (the torture
// suite's, tests/torture/CMakeLists.txt), and ctest runs it once per planted
// bug a core-level sequence can meet (--planted_bug=NAME,
// common/test_hooks/test_hooks.h): each test passes only if one of its
// sequences reports a violation. Without --planted_bug there is nothing to
// catch, and the tests fail.
#include <iostream>

#include "absl/flags/parse.h"
#include "gtest/gtest.h"
#include "tests/testing/random_sequences.h"
#include "tests/unit/fence_sequence.h"
#include "tests/unit/lock_sequence.h"

namespace fencegate {
namespace {

// Sequences to try before giving up; each bug is caught within a few.
constexpr int kAttempts = 1000;
constexpr char kBinary[] = "build/tests/sequence_planted_bug_tests --planted_bug=...";

void ExpectCaught(absl::string_view filter,
                  absl::FunctionRef<absl::Status(uint64_t seed)> run) {
  const testing::SequencePlan plan = testing::PlanShardFromEnv(0, 1, kAttempts);
  absl::Status caught = testing::RunSequences(plan, kBinary, filter, run);
  ASSERT_FALSE(caught.ok()) << "none of " << plan.count
                            << " sequences caught the planted bug";
  std::cout << "caught, as it must be:\n" << caught.message().substr(0, 3000) << "\n";
}

TEST(PlantedBug, LockSequencesCatchIt) {
  ExpectCaught("PlantedBug.LockSequencesCatchIt",
               [](uint64_t seed) { return lockservice::LockSequence(seed).Run(); });
}

TEST(PlantedBug, FenceSequencesCatchIt) {
  ExpectCaught("PlantedBug.FenceSequencesCatchIt",
               [](uint64_t seed) { return gateway::FenceSequence(seed).Run(); });
}

}  // namespace
}  // namespace fencegate

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  absl::ParseCommandLine(argc, argv);  // --planted_bug
  return RUN_ALL_TESTS();
}
