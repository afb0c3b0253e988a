#include "tests/torture/worker_control.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace fencegate::torture {
absl::StatusOr<std::unique_ptr<SharedWorkerControl>> SharedWorkerControl::Map(
    const std::string& path, bool create) {
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot open ", path, ": ", strerror(errno)));
  }
  if (create && ftruncate(fd, sizeof(WorkerControl)) != 0) {
    close(fd);
    return absl::InternalError(absl::StrCat("cannot size ", path, ": ", strerror(errno)));
  }
  void* memory =
      mmap(nullptr, sizeof(WorkerControl), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) {
    return absl::InternalError(absl::StrCat("cannot map ", path, ": ", strerror(errno)));
  }
  // A fresh file reads as zeros: every field starts at 0 (kStarting).
  return std::unique_ptr<SharedWorkerControl>(
      new SharedWorkerControl(static_cast<WorkerControl*>(memory)));
}

absl::StatusOr<std::unique_ptr<SharedWorkerControl>> SharedWorkerControl::Create(
    const std::string& path) {
  return Map(path, /*create=*/true);
}

absl::StatusOr<std::unique_ptr<SharedWorkerControl>> SharedWorkerControl::Attach(
    const std::string& path) {
  return Map(path, /*create=*/false);
}

SharedWorkerControl::~SharedWorkerControl() { munmap(control_, sizeof(WorkerControl)); }

}  // namespace fencegate::torture
