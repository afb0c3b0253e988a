#include "common/core/state_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fencegate {
namespace {

// The PID the holder wrote, or "unknown" (it may be between its lock and
// its write, or an older binary's file).
std::string HolderPid(int fd) {
  char buffer[32] = {};
  const ssize_t n = pread(fd, buffer, sizeof(buffer) - 1, 0);
  int pid = 0;
  if (n > 0 && absl::SimpleAtoi(absl::StripAsciiWhitespace(buffer), &pid) && pid > 0) {
    return absl::StrCat(pid);
  }
  return "unknown";
}

}  // namespace

std::string StateLock::LockFileFor(absl::string_view db_path) {
  return absl::StrCat(db_path, ".lock");
}

absl::StatusOr<StateLock> StateLock::Acquire(absl::string_view db_path,
                                             absl::string_view program) {
  std::string path = LockFileFor(db_path);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    std::string message = absl::StrCat("cannot open the state's lock file ", path, ": ",
                                       strerror(error), " (--db=", db_path, ")");
    if (error == EACCES || error == EPERM || error == EROFS) {
      return absl::PermissionDeniedError(message);
    }
    return absl::InternalError(message);
  }
  int rc;
  do {
    rc = flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      std::string pid = HolderPid(fd);
      close(fd);
      return absl::FailedPreconditionError(absl::StrCat(
          "the state ", db_path, " is in use by another server (PID ", pid,
          " holds its lock file ", path, "); two servers on one state would hand one "
          "lock to two holders. Stop that one first, or give ", program,
          " another --db"));
    }
    close(fd);
    return absl::InternalError(
        absl::StrCat("cannot lock the state's lock file ", path, ": ", strerror(error)));
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    close(fd);
    return absl::InternalError(
        absl::StrCat("cannot write the PID into the lock file ", path, ": ", strerror(error)));
  }
  return StateLock(std::move(path), fd);
}

StateLock::StateLock(StateLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

StateLock& StateLock::operator=(StateLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

StateLock::~StateLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace fencegate
