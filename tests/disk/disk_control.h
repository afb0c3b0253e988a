// The control block of the disk-fault preload (disk_faults_preload.cc): a
// small file the harness creates and the preload maps, shared between the
// test and the server it started, so the test turns faults on and off while
// the server runs, and reads what the preload did.
//
// Fields are read and written with atomic builtins on the shared mapping
// (MAP_SHARED of one file is coherent between processes on Linux).
//
// Thread safety: plain layout; see above for access.
#ifndef FENCEGATE_TESTS_DISK_DISK_CONTROL_H_
#define FENCEGATE_TESTS_DISK_DISK_CONTROL_H_

#include <cstdint>

namespace fencegate::disk {

// The environment the preload reads at load time.
//   FENCEGATE_DISK_FILES    ':'-separated absolute paths of databases; each
//                           stands for itself and its "-wal" and "-journal"
//                           files. Only their descriptors see faults and
//                           have their writes recorded for a power cut.
//   FENCEGATE_DISK_CONTROL  the control file (DiskControl), made beforehand.
inline constexpr char kFilesEnv[] = "FENCEGATE_DISK_FILES";
inline constexpr char kControlEnv[] = "FENCEGATE_DISK_CONTROL";

// What a power cut needs, beside each tracked file: the old bytes of every
// write since the file's last successful fsync (power_cut.h).
inline constexpr char kUndoSuffix[] = ".fg-undo";

inline constexpr uint32_t kControlMagic = 0x46474453;  // "FGDS"

struct DiskControl {
  uint32_t magic;
  // Set by the test:
  int32_t full;         // != 0: every write to a tracked file fails, ENOSPC
  int32_t fail_fsyncs;  // the next this many fsyncs of one fail, EIO
  int32_t fail_writes;  // the next this many writes to one fail, EIO
  // Counted by the preload:
  int32_t enospc_returned;
  int32_t fsync_eio_returned;
  int32_t write_eio_returned;
};

// One record of an undo log: a write (or truncate) with the bytes it
// replaced, or a sync. `length` bytes of old content follow a kWrite or a
// kTruncate: those of [offset, offset + span) that the file had.
enum class UndoKind : uint32_t {
  kWrite = 1,       // offset, span: what it wrote over
  kTruncate = 2,    // offset: the new size; span: what it cut off
  kSyncOk = 3,      // an fsync that succeeded
  kSyncFailed = 4,  // an fsync that failed: what it did not sync is lost
};

struct UndoRecord {
  UndoKind kind;
  uint32_t reserved;
  uint64_t offset;
  uint64_t span;
  uint64_t old_size;  // the file's size before
  uint64_t length;
};

}  // namespace fencegate::disk

#endif  // FENCEGATE_TESTS_DISK_DISK_CONTROL_H_
