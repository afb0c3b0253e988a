#include "cli/exit_codes.h"

namespace fencegate::cli {

ExitCode ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kAborted:
      return kExitAborted;
    case absl::StatusCode::kFailedPrecondition:  // LockClient: not acquired
      return kExitNotAcquired;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return kExitUsage;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnavailable;
    case absl::StatusCode::kPermissionDenied:
      return kExitDenied;
    default:
      return kExitError;
  }
}

absl::Status UsageError(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

const char* ExitCodeHelp() {
  return "Exit codes:\n"
         "  0  ok\n"
         "  1  any other error\n"
         "  2  refused (ABORTED): stale token, lease lost, or version mismatch;\n"
         "     acquire the lock again and redo the read-modify-write\n"
         "  3  not acquired: the lock is held by someone else (retry, or --wait)\n"
         "  4  usage: bad command, flag or value (also the server's "
         "INVALID_ARGUMENT)\n"
         "  5  unavailable: a server could not be reached or did not answer in time\n"
         "  6  denied: the token's signature is missing or wrong for the resource,\n"
         "     or the lease belongs to another certificate\n"
         "  7  lease lost (run): the lease ended while the command ran; the\n"
         "     command was stopped. Otherwise run exits with the command's code\n"
         "     (126: it could not be started; 127: it was not found; 128+n:\n"
         "     killed by signal n)\n";
}

}  // namespace fencegate::cli
