// The fencegate CLI's exit codes: the contract scripts rely on. Each maps
// from the gRPC/absl status code the servers answered with (docs/errors.md).
//
//   0  ok
//   1  any other error (internal, overload, ...)
//   2  ABORTED: "sequencer check failed": a stale token at the gateway, a
//      lease that is lost (expired, released, or a newer holder), or an
//      --expected_version that did not match. Acquire the lock again and
//      redo the read-modify-write; do not retry unchanged.
//   3  not acquired: the lock is held by someone else (or held back by a
//      lock-delay) and --wait ran out or was 0.
//   4  usage: unknown command or flag, bad flag value, a required flag
//      missing, or a request the server refused as INVALID_ARGUMENT.
//   5  unavailable: a server could not be reached or did not answer in time
//      (UNAVAILABLE, DEADLINE_EXCEEDED), after the client's retries.
//   6  denied (PERMISSION_DENIED): the token's signature is missing or not
//      valid for the resource, or the lease belongs to another certificate.
//      Use the token exactly as acquire printed it.
//   7  lease lost (`fencegate run` only): the lease ended while the command
//      ran; the command was stopped (SIGTERM to its process group, SIGKILL
//      after --kill_after). Otherwise `run` exits with its command's code
//      (127: the command could not be started; 128+n: killed by signal n).
//      7 is outside what a shell gives a command (126, 127, 128+n) and
//      what commands commonly use for their own errors (1, 2).
//
// Thread safety: free functions on values.
#ifndef FENCEGATE_EXAMPLES_CLI_EXIT_CODES_H_
#define FENCEGATE_EXAMPLES_CLI_EXIT_CODES_H_

#include "absl/status/status.h"

namespace fencegate::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,
  kExitAborted = 2,
  kExitNotAcquired = 3,
  kExitUsage = 4,
  kExitUnavailable = 5,
  kExitDenied = 6,
  kExitLeaseLost = 7,
  // `fencegate run`, as a shell: the command was found but could not be
  // started (not executable, a bad interpreter: 126), or was not found (127).
  kExitNotExecutable = 126,
  kExitCannotRun = 127,
};

// The exit code for a command that ended with `status`.
ExitCode ExitCodeFor(const absl::Status& status);

// A usage error (exit 4) with `message`; the CLI adds a pointer to --help.
absl::Status UsageError(absl::string_view message);

// The table above, for `fencegate help`.
const char* ExitCodeHelp();

}  // namespace fencegate::cli

#endif  // FENCEGATE_EXAMPLES_CLI_EXIT_CODES_H_
