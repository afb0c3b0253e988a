// StateLock: one server process per SQLite state. A server takes it before
// it opens its database and holds it for its whole life; a second server
// pointed at the same database fails to start instead of serving beside the
// first (two lock services on one database would each keep their own view
// in memory and hand one lock, with one token, to two holders).
//
// The lock is an exclusive flock(2) on the lock file "<db>.lock" beside the
// database, created if missing (mode 0644 less the umask, owned by the
// server's user: in the packaged units, fencegate's state directory). The
// holder writes its PID into the file, so the refusal can name it. The
// kernel drops the lock when the process ends, however it ends (kill -9
// included), so a restart after a crash is never blocked; the file itself
// stays (removing it would let two processes lock two different files of
// one name).
//
// flock locks belong to an open file description, not to a process, so a
// second StateLock on the same path in the same process is refused too.
// The descriptor is close-on-exec: children do not inherit the lock.
//
// Thread safety: Acquire() is thread-safe; a StateLock is not shared.
#ifndef FENCEGATE_COMMON_CORE_STATE_LOCK_H_
#define FENCEGATE_COMMON_CORE_STATE_LOCK_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fencegate {

class StateLock {
 public:
  // The lock file of the database at `db_path`.
  static std::string LockFileFor(absl::string_view db_path);

  // Locks LockFileFor(db_path) for `program` (for messages). Errors:
  // FAILED_PRECONDITION naming the database, the lock file and the PID
  // that holds it when another process (or StateLock) has it;
  // PERMISSION_DENIED or INTERNAL naming the lock file when it cannot be
  // opened or locked.
  static absl::StatusOr<StateLock> Acquire(absl::string_view db_path,
                                           absl::string_view program);

  StateLock(StateLock&& other) noexcept;
  StateLock& operator=(StateLock&& other) noexcept;
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;
  // Releases the lock (closes the descriptor); the file stays.
  ~StateLock();

  const std::string& path() const { return path_; }

 private:
  StateLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  std::string path_;
  int fd_ = -1;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_STATE_LOCK_H_
