// RunSummary's lines say what is true of the run directory: "kept" only
// when it is (a planted bug's expected catch is failed, yet its directory
// is removed).
#include "tests/torture/run_summary.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fencegate::torture {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RunResult FailedRun() {
  RunResult result;
  result.run_dir = "/tmp/fencegate-torture-1/seed-7";
  result.check.violations.push_back(
      Violation{"no-lost-update", "counter 3, 4 increments"});
  return result;
}

TEST(RunSummaryTest, AFailedRunWhoseDirectoryWasRemovedDoesNotClaimItWasKept) {
  std::ostringstream out;
  RunSummary summary(out);
  Schedule schedule;
  schedule.seed = 7;
  summary.Add(schedule, FailedRun(), absl::Seconds(30), /*run_dir_kept=*/false);
  EXPECT_THAT(out.str(), HasSubstr("VIOLATION no-lost-update"));
  EXPECT_THAT(out.str(), HasSubstr("[FAIL]"));
  EXPECT_THAT(out.str(), Not(HasSubstr("kept")));
  EXPECT_THAT(summary.failed_seeds(), ::testing::ElementsAre(7u));
}

TEST(RunSummaryTest, AKeptDirectoryIsNamed) {
  std::ostringstream out;
  RunSummary summary(out);
  summary.Add(Schedule{}, FailedRun(), absl::Seconds(30), /*run_dir_kept=*/true);
  EXPECT_THAT(out.str(),
              HasSubstr("  run directory kept: /tmp/fencegate-torture-1/seed-7\n"));

  // Also a passing run kept with --keep.
  std::ostringstream passing_out;
  RunSummary passing(passing_out);
  RunResult passed;
  passed.run_dir = "/tmp/fencegate-torture-1/seed-8";
  passing.Add(Schedule{}, passed, absl::Seconds(30), /*run_dir_kept=*/true);
  EXPECT_THAT(passing_out.str(), HasSubstr("[PASS]"));
  EXPECT_THAT(passing_out.str(),
              HasSubstr("run directory kept: /tmp/fencegate-torture-1/seed-8"));
}

}  // namespace
}  // namespace fencegate::torture
