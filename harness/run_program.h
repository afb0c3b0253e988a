// RunProgram: runs a program to completion (a ChildProcess) and collects
// what it wrote: the CLI in tests, the openssl tool for test certificates.
// The child is killed if it outlives `timeout`.
//
// Thread safety: free function.
#ifndef FENCEGATE_HARNESS_RUN_PROGRAM_H_
#define FENCEGATE_HARNESS_RUN_PROGRAM_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "harness/child_process.h"

namespace fencegate::testing {

struct ProgramResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string stdout_text;
  std::string stderr_text;
};

// argv[0]: the program's path, or a bare name (no '/'), looked up in $PATH
// (FindProgram, below). DEADLINE_EXCEEDED if it did not finish in
// time (it is killed then).
absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         const std::string& stdin_text = "");
// The same, with the child's options (its environment, namespace, user);
// stderr_path and the pipes are RunProgram's.
absl::StatusOr<ProgramResult> RunProgram(ChildProcess::Options options,
                                         absl::Duration timeout,
                                         const std::string& stdin_text = "");

// The path of the program `name` (e.g. "lintian") in the directories of
// $PATH, as a shell would find it; NOT_FOUND naming $PATH otherwise. For
// system tools a test runs, whose place it does not know.
absl::StatusOr<std::string> FindProgram(const std::string& name);

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_RUN_PROGRAM_H_
