// FaultInjector's disk faults (schedule.h: kDiskFull, kFsyncFailure,
// kWriteFailure), on servers under the disk-fault preload (server_node.h,
// tests/disk/power_cut.h), and the restarts every server fault ends with.
#include <sys/wait.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/core/fail_stop.h"
#include "tests/torture/fault_injector.h"

namespace fencegate::torture {

void FaultInjector::Restart(ServerNode& server) {
  absl::Status started = server.Start();
  if (!started.ok()) {
    Error(absl::StrCat("restarting the ", server.name(), " failed: ", started.ToString()));
  }
  if (server.disk() != nullptr) Count(&FaultTally::power_cuts);
}

std::string FaultInjector::DiskFull(const Fault& fault, ServerNode& server) {
  disk::DiskFaults* disk = server.disk();
  if (disk == nullptr) return "the server is not under the disk-fault preload";
  // Full from the first write that meets it (the workers may all be
  // waiting for the lock service, down after a power cut) for `duration`.
  const int before = disk->EnospcReturned();
  disk->SetFull(true);
  const absl::Time give_up = absl::Now() + reach_timeout_;
  while (disk->EnospcReturned() == before && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  if (disk->EnospcReturned() == before) {
    disk->SetFull(false);
    return "no write met the full disk";
  }
  absl::SleepFor(fault.duration);
  disk->SetFull(false);
  Count(&FaultTally::disk_fulls);
  return "";
}

std::string FaultInjector::DiskIoError(const Fault& fault, ServerNode& server) {
  disk::DiskFaults* disk = server.disk();
  if (disk == nullptr) return "the server is not under the disk-fault preload";
  const bool fsync = fault.kind == FaultKind::kFsyncFailure;
  auto failed = [&] { return fsync ? disk->FsyncEioReturned() : disk->WriteEioReturned(); };
  const int before = failed();
  fsync ? disk->FailNextFsyncs(1) : disk->FailNextWrites(1);
  const absl::Time give_up = absl::Now() + reach_timeout_;
  while (failed() == before && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  if (failed() == before) {
    fsync ? disk->FailNextFsyncs(0) : disk->FailNextWrites(0);
    return absl::StrCat("no ", fsync ? "fsync" : "write", " reached the disk");
  }
  Count(fsync ? &FaultTally::fsync_failures : &FaultTally::write_failures);
  // A commit's failure stops the server at once (common/core/fail_stop.h).
  // A checkpoint's does not: SQLite checkpoints again later, and the WAL
  // still holds every commit. Then it is killed: the power cut follows.
  absl::StatusOr<int> exit = server.WaitForExit(absl::Seconds(2));
  if (exit.ok()) {
    if (!WIFEXITED(*exit) || WEXITSTATUS(*exit) != kFailStopExitCode) {
      Error(absl::StrCat("the ", server.name(), " met a failed ", fsync ? "fsync" : "write",
                         " and died, but not by its fail-stop: ",
                         testing::DescribeWaitStatus(*exit), "\n", server.LogTail()));
    } else {
      Count(&FaultTally::fail_stops);
    }
  } else {
    server.Kill();
  }
  Restart(server);
  return "";
}

}  // namespace fencegate::torture
