// MustRun: RunProgram (run_program.h) for a gtest that needs the program to
// succeed: a failure to start, a timeout or a non-zero exit status is a
// test failure that says what ran and what it printed. Returns what it
// printed (empty on failure), so the test goes on to its own checks.
//
// Thread safety: free function, as gtest's assertions are.
#ifndef FENCEGATE_TESTS_TESTING_MUST_RUN_H_
#define FENCEGATE_TESTS_TESTING_MUST_RUN_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "harness/run_program.h"

namespace fencegate::testing {

// argv[0]: a path, or a bare name looked up in $PATH. `env`: "NAME=value"
// added to the child's environment.
ProgramResult MustRun(std::vector<std::string> argv,
                      absl::Duration timeout = absl::Minutes(10),
                      std::vector<std::string> env = {});

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_MUST_RUN_H_
