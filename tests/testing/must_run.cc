#include "tests/testing/must_run.h"

#include <utility>

#include "gtest/gtest.h"

namespace fencegate::testing {

ProgramResult MustRun(std::vector<std::string> argv, absl::Duration timeout,
                      std::vector<std::string> env) {
  const std::string what = argv.empty() ? "" : argv[0];
  ChildProcess::Options options;
  options.argv = std::move(argv);
  options.env = std::move(env);
  absl::StatusOr<ProgramResult> result = RunProgram(std::move(options), timeout);
  EXPECT_TRUE(result.ok()) << what << ": " << result.status();
  if (!result.ok()) return ProgramResult{};
  EXPECT_EQ(result->exit_code, 0) << what << " failed:\n"
                                  << result->stdout_text << result->stderr_text;
  return *result;
}

}  // namespace fencegate::testing
