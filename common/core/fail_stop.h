// Fail-stop: what a server does when its disk fails under a commit.
//
// After a failed write or fsync the kernel may already have dropped the
// pages it could not write and report the next fsync as a success
// (PostgreSQL's "fsyncgate", 2018), and SQLite's WAL may hold the failed
// commit whole, to be found committed at the next start. Neither "nothing
// was applied" nor a retry can then be promised: the server logs why and
// exits at once, without running destructors (they would commit what is
// queued), so nothing more is acknowledged. The calls in flight see their
// connection end, an outcome their clients already treat as unknown. On
// restart the server recovers from what the disk holds (docs/operations.md,
// "Disk faults"). PostgreSQL answers such errors the same way (PANIC).
//
// Thread safety: FailStop may be called from any thread; it does not return.
#ifndef FENCEGATE_COMMON_CORE_FAIL_STOP_H_
#define FENCEGATE_COMMON_CORE_FAIL_STOP_H_

#include "absl/strings/string_view.h"

namespace fencegate {

// The exit status of a fail-stop: sysexits.h's EX_IOERR, so a supervisor
// (the systemd unit restarts on failure) and a test tell it from a crash.
inline constexpr int kFailStopExitCode = 74;

[[noreturn]] void FailStop(absl::string_view why);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_FAIL_STOP_H_
