#include "tests/disk/power_cut.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fencegate::disk {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", strerror(errno)));
}

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Errno("cannot read", path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

struct Step {
  UndoRecord record;
  std::string old_bytes;  // what it replaced
  std::string new_bytes;  // kWrite: what it wrote (found by undoing)
  bool durable = false;
};

absl::StatusOr<std::vector<Step>> ParseLog(const std::string& log,
                                           const std::string& path) {
  std::vector<Step> steps;
  size_t at = 0;
  while (at < log.size()) {
    Step step;
    if (log.size() - at < sizeof(UndoRecord)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": a record cut short at byte ", at));
    }
    memcpy(&step.record, log.data() + at, sizeof(UndoRecord));
    at += sizeof(UndoRecord);
    if (log.size() - at < step.record.length) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": old bytes cut short at byte ", at));
    }
    step.old_bytes = log.substr(at, step.record.length);
    at += step.record.length;
    steps.push_back(std::move(step));
  }
  return steps;
}

// Which writes and truncates reached the disk: those a later fsync covered,
// unless an fsync failed in between (it dropped them).
void MarkDurable(std::vector<Step>& steps) {
  std::vector<Step*> pending;
  for (Step& step : steps) {
    switch (step.record.kind) {
      case UndoKind::kWrite:
      case UndoKind::kTruncate:
        pending.push_back(&step);
        break;
      case UndoKind::kSyncOk:
        for (Step* done : pending) done->durable = true;
        pending.clear();
        break;
      case UndoKind::kSyncFailed:
        pending.clear();
        break;
    }
  }
}

void Place(std::string& file, uint64_t offset, const std::string& bytes) {
  if (bytes.empty()) return;
  if (file.size() < offset + bytes.size()) file.resize(offset + bytes.size());
  file.replace(offset, bytes.size(), bytes);
}

}  // namespace

absl::Status PowerCutFile(const std::string& path) {
  const std::string undo_path = path + kUndoSuffix;
  if (access(undo_path.c_str(), F_OK) != 0) return absl::OkStatus();
  if (access(path.c_str(), F_OK) != 0) {
    unlink(undo_path.c_str());
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> log = ReadWhole(undo_path);
  if (!log.ok()) return log.status();
  absl::StatusOr<std::vector<Step>> steps = ParseLog(*log, undo_path);
  if (!steps.ok()) return steps.status();
  MarkDurable(*steps);
  absl::StatusOr<std::string> file = ReadWhole(path);
  if (!file.ok()) return file.status();
  // Back to the start of the log, newest first, noting what each write put
  // there; then forward again, applying only what reached the disk.
  std::string bytes = *std::move(file);
  for (auto it = steps->rbegin(); it != steps->rend(); ++it) {
    const UndoRecord& record = it->record;
    if (record.kind == UndoKind::kWrite) {
      if (record.offset < bytes.size()) {
        it->new_bytes = bytes.substr(record.offset, record.span);
      }
    } else if (record.kind != UndoKind::kTruncate) {
      continue;
    }
    bytes.resize(record.old_size);
    Place(bytes, record.offset, it->old_bytes);
  }
  for (const Step& step : *steps) {
    if (!step.durable) continue;
    if (step.record.kind == UndoKind::kWrite) Place(bytes, step.record.offset, step.new_bytes);
    if (step.record.kind == UndoKind::kTruncate) bytes.resize(step.record.offset);
  }
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return Errno("cannot rewrite", path);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      absl::Status error = Errno("cannot rewrite", path);
      close(fd);
      return error;
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) return Errno("cannot sync", path);
  if (unlink(undo_path.c_str()) != 0) return Errno("cannot remove", undo_path);
  return absl::OkStatus();
}

absl::Status PowerCutDatabase(const std::string& database) {
  for (const char* suffix : {"", "-wal", "-journal"}) {
    absl::Status status = PowerCutFile(database + suffix);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

std::string PreloadPath() { return FENCEGATE_DISK_FAULTS_PRELOAD; }

namespace {

// `path` as SQLite opens it: absolute, its directory's symbolic links
// resolved.
absl::StatusOr<std::string> AsOpened(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  char resolved[PATH_MAX];
  if (realpath(dir.c_str(), resolved) == nullptr) return Errno("cannot resolve", dir);
  return absl::StrCat(resolved, "/", path.substr(slash == std::string::npos ? 0 : slash + 1));
}

}  // namespace

absl::StatusOr<std::unique_ptr<DiskFaults>> DiskFaults::Create(
    const std::string& control_path, std::vector<std::string> databases) {
  for (std::string& database : databases) {
    absl::StatusOr<std::string> opened = AsOpened(database);
    if (!opened.ok()) return opened.status();
    database = *std::move(opened);
  }
  int fd = open(control_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", control_path);
  DiskControl initial{};
  initial.magic = kControlMagic;
  bool written = write(fd, &initial, sizeof(initial)) == sizeof(initial);
  void* mapped = written ? mmap(nullptr, sizeof(DiskControl), PROT_READ | PROT_WRITE,
                                MAP_SHARED, fd, 0)
                         : MAP_FAILED;
  close(fd);
  if (mapped == MAP_FAILED) return Errno("cannot map", control_path);
  return std::unique_ptr<DiskFaults>(new DiskFaults(
      control_path, std::move(databases), static_cast<DiskControl*>(mapped)));
}

DiskFaults::~DiskFaults() { munmap(control_, sizeof(DiskControl)); }

std::vector<std::string> DiskFaults::Env() const {
  return {absl::StrCat("LD_PRELOAD=", PreloadPath()),
          absl::StrCat(kFilesEnv, "=", absl::StrJoin(databases_, ":")),
          absl::StrCat(kControlEnv, "=", control_path_)};
}

void DiskFaults::SetFull(bool full) {
  __atomic_store_n(&control_->full, full ? 1 : 0, __ATOMIC_SEQ_CST);
}
void DiskFaults::FailNextFsyncs(int count) {
  __atomic_store_n(&control_->fail_fsyncs, count, __ATOMIC_SEQ_CST);
}
void DiskFaults::FailNextWrites(int count) {
  __atomic_store_n(&control_->fail_writes, count, __ATOMIC_SEQ_CST);
}
int DiskFaults::EnospcReturned() const {
  return __atomic_load_n(&control_->enospc_returned, __ATOMIC_SEQ_CST);
}
int DiskFaults::FsyncEioReturned() const {
  return __atomic_load_n(&control_->fsync_eio_returned, __ATOMIC_SEQ_CST);
}
int DiskFaults::WriteEioReturned() const {
  return __atomic_load_n(&control_->write_eio_returned, __ATOMIC_SEQ_CST);
}

absl::Status DiskFaults::PowerCut() const {
  for (const std::string& database : databases_) {
    absl::Status status = PowerCutDatabase(database);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace fencegate::disk
