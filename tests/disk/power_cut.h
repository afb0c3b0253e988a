// The harness's side of the disk-fault preload (disk_faults_preload.cc):
// the control file a test turns faults on with, the environment that loads
// the preload into a server, and the power cut itself.
//
// A power cut, after the server was killed with SIGKILL: every write to a
// tracked file that no successful fsync covered is undone, oldest last, so
// each byte holds what its last durable write put there (or what it held
// before the first tracked write); a write that a failed fsync left behind
// stays undone even if a later fsync succeeded, unless written again since.
// The file's size follows. The undo logs are then removed.
//
// Errors: INTERNAL naming the file for what cannot be read or written;
// INVALID_ARGUMENT for an undo log that does not parse.
//
// Thread safety: DiskFaults is not thread-safe; its setters act on the
// shared mapping and are seen by the server at its next call.
#ifndef FENCEGATE_TESTS_DISK_POWER_CUT_H_
#define FENCEGATE_TESTS_DISK_POWER_CUT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/disk/disk_control.h"

namespace fencegate::disk {

class DiskFaults {
 public:
  // Makes the control file at `control_path` for the databases `databases`
  // (absolute paths), no fault on.
  static absl::StatusOr<std::unique_ptr<DiskFaults>> Create(
      const std::string& control_path, std::vector<std::string> databases);
  ~DiskFaults();
  DiskFaults(const DiskFaults&) = delete;
  DiskFaults& operator=(const DiskFaults&) = delete;

  // "NAME=value" entries that load the preload into a child process.
  std::vector<std::string> Env() const;

  void SetFull(bool full);
  void FailNextFsyncs(int count);
  void FailNextWrites(int count);
  // What the preload returned so far.
  int EnospcReturned() const;
  int FsyncEioReturned() const;
  int WriteEioReturned() const;

  // The power cut of every tracked database (see above). Only once the
  // server is dead.
  absl::Status PowerCut() const;

 private:
  DiskFaults(std::string control_path, std::vector<std::string> databases,
             DiskControl* control)
      : control_path_(std::move(control_path)),
        databases_(std::move(databases)),
        control_(control) {}

  const std::string control_path_;
  const std::vector<std::string> databases_;
  DiskControl* const control_;
};

// The power cut of one file (see above); OK if it has no undo log. A file
// that no longer exists (SQLite removed its WAL at a clean close) loses
// its undo log and stays absent.
absl::Status PowerCutFile(const std::string& path);

// PowerCutFile of a database's file, WAL and rollback journal.
absl::Status PowerCutDatabase(const std::string& database);

// Where the preload is (the build tree's, set by CMake).
std::string PreloadPath();

}  // namespace fencegate::disk

#endif  // FENCEGATE_TESTS_DISK_POWER_CUT_H_
