// libfencegate_disk_faults.so: an LD_PRELOAD library that fails a server's
// disk below SQLite, on the files of the databases named in
// FENCEGATE_DISK_FILES only (disk_control.h), and records what a power cut
// would take from them.
//
// Faults, switched by the test through the shared control block:
//   - full: write/pwrite to a tracked file returns ENOSPC, nothing written;
//   - fail_writes: the next N writes return EIO, nothing written;
//   - fail_fsyncs: the next N fsync/fdatasync return EIO and sync nothing.
//     As Linux does since its writeback errors became sticky only once
//     (PostgreSQL's "fsyncgate"), the pages are then treated as clean: the
//     next fsync succeeds, yet what the failed one did not sync is lost at
//     a power cut unless written again.
//
// Power cuts: before each write or truncate of a tracked file the bytes it
// replaces go to <file>.fg-undo, and the sync that made them durable is
// noted there (an fsync that succeeds with nothing lost before it empties
// the log). A test kills the server with SIGKILL, then power_cut.h puts
// back the bytes no successful fsync covered, as leveldb's fault-injection
// environment drops unsynced data. The page cache survives a SIGKILL, so a
// log written with plain write(2) is complete.
//
// Limits: paths must be given as the server opens them (absolute, as SQLite
// does); creating, renaming and unlinking files, and the directory's own
// fsync, are treated as durable at once; writes through mmap are not seen
// (SQLite writes its databases and WAL with pwrite; the -shm file is not
// tracked, SQLite rebuilds it from the WAL).
//
// Thread safety: every interposed call is thread-safe; the records of one
// file are kept in the order its writes happened (one mutex per file).
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "tests/disk/disk_control.h"

namespace fencegate::disk {
namespace {

constexpr int kMaxFiles = 32;
constexpr int kMaxFds = 65536;
constexpr size_t kMaxPath = 4096;

struct TrackedFile {
  char path[kMaxPath];
  char undo_path[kMaxPath];
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  int undo_fd = -1;
  // The log may hold writes an fsync dropped (one failed since it was last
  // emptied): it is kept whole; else a successful fsync empties it.
  bool lost = false;
};

struct Real {
  int (*open)(const char*, int, ...);
  int (*open64)(const char*, int, ...);
  int (*openat)(int, const char*, int, ...);
  int (*openat64)(int, const char*, int, ...);
  int (*close)(int);
  ssize_t (*write)(int, const void*, size_t);
  ssize_t (*pwrite)(int, const void*, size_t, off_t);
  ssize_t (*pwrite64)(int, const void*, size_t, off64_t);
  ssize_t (*pread64)(int, void*, size_t, off64_t);
  int (*fsync)(int);
  int (*fdatasync)(int);
  int (*ftruncate)(int, off_t);
  int (*ftruncate64)(int, off64_t);
};

// Real's members, each resolved by its name.
#define FENCEGATE_REAL_FUNCTIONS(X)                                                  \
  X(open)                                                                            \
  X(open64) X(openat) X(openat64) X(close) X(write) X(pwrite) X(pwrite64) X(pread64) \
      X(fsync) X(fdatasync) X(ftruncate) X(ftruncate64)

Real real;
TrackedFile files[kMaxFiles];
int file_count = 0;
// The tracked file a descriptor is open on, plus one; 0 if none.
signed char fd_file[kMaxFds];
DiskControl* control = nullptr;

template <typename F>
void Resolve(F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
  if (slot == nullptr) {
    fprintf(stderr, "disk-fault preload: no %s in libc\n", name);
    abort();
  }
}

void Track(const char* path, const char* suffix) {
  if (file_count == kMaxFiles) return;
  TrackedFile& file = files[file_count++];
  snprintf(file.path, sizeof(file.path), "%s%s", path, suffix);
  snprintf(file.undo_path, sizeof(file.undo_path), "%s%s%s", path, suffix, kUndoSuffix);
  // A log left by an earlier process (no power cut since) may hold writes a
  // failed fsync dropped: keep it whole, as the page cache keeps them clean.
  struct stat st;
  file.lost = stat(file.undo_path, &st) == 0 && st.st_size > 0;
}

// Runs when the library loads, or before that at the first interposed
// call another library's constructor makes.
void Init() {
  static bool done = false;
  if (done) return;
  done = true;
#define FENCEGATE_RESOLVE(name) Resolve(real.name, #name);
  FENCEGATE_REAL_FUNCTIONS(FENCEGATE_RESOLVE)
#undef FENCEGATE_RESOLVE
  if (const char* list = getenv(kFilesEnv)) {
    char copy[kMaxPath * 4];
    snprintf(copy, sizeof(copy), "%s", list);
    char* save = nullptr;
    for (char* path = strtok_r(copy, ":", &save); path != nullptr;
         path = strtok_r(nullptr, ":", &save)) {
      Track(path, "");
      Track(path, "-wal");
      Track(path, "-journal");
    }
  }
  if (const char* path = getenv(kControlEnv)) {
    int fd = real.open(path, O_RDWR | O_CLOEXEC);
    void* mapped = fd < 0 ? MAP_FAILED
                          : mmap(nullptr, sizeof(DiskControl), PROT_READ | PROT_WRITE,
                                 MAP_SHARED, fd, 0);
    if (fd >= 0) real.close(fd);
    if (mapped == MAP_FAILED ||
        static_cast<DiskControl*>(mapped)->magic != kControlMagic) {
      fprintf(stderr, "disk-fault preload: cannot map the control file %s\n", path);
      abort();
    }
    control = static_cast<DiskControl*>(mapped);
  }
}

__attribute__((constructor)) void InitOnLoad() { Init(); }

// fd_file is read and written with atomics: a descriptor may be opened on
// one thread and written on another.
TrackedFile* FileOf(int fd) {
  if (fd < 0 || fd >= kMaxFds) return nullptr;
  const int file = __atomic_load_n(&fd_file[fd], __ATOMIC_ACQUIRE);
  return file == 0 ? nullptr : &files[file - 1];
}

void SetFileOf(int fd, int file) {
  if (fd >= 0 && fd < kMaxFds) {
    __atomic_store_n(&fd_file[fd], static_cast<signed char>(file), __ATOMIC_RELEASE);
  }
}

// Notes which tracked file `fd`, just opened on `path`, is (or none).
int Opened(int fd, const char* path) {
  if (fd < 0 || path == nullptr) return fd;
  int file = 0;
  for (int i = 0; i < file_count; ++i) {
    if (strcmp(files[i].path, path) == 0) file = i + 1;
  }
  SetFileOf(fd, file);
  return fd;
}

// Takes one from *counter if it is positive.
bool TakeOne(int32_t* counter) {
  int32_t left = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
  while (left > 0) {
    if (__atomic_compare_exchange_n(counter, &left, left - 1, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST)) {
      return true;
    }
  }
  return false;
}

void Count(int32_t* counter) { __atomic_add_fetch(counter, 1, __ATOMIC_SEQ_CST); }

// The fault a write meets, as an errno; 0 if none.
int WriteFault() {
  if (control == nullptr) return 0;
  if (__atomic_load_n(&control->full, __ATOMIC_SEQ_CST) != 0) {
    Count(&control->enospc_returned);
    return ENOSPC;
  }
  if (TakeOne(&control->fail_writes)) {
    Count(&control->write_eio_returned);
    return EIO;
  }
  return 0;
}

void WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = real.write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fprintf(stderr, "disk-fault preload: cannot write an undo log\n");
      abort();
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// Appends a record; a kWrite or kTruncate carries the file's bytes in
// [offset, offset + span) as they are now. Called with file.mu held.
void Record(TrackedFile& file, int fd, UndoKind kind, uint64_t offset, uint64_t span) {
  if (file.undo_fd < 0) {
    file.undo_fd = real.open(file.undo_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (file.undo_fd < 0) {
      fprintf(stderr, "disk-fault preload: cannot open %s\n", file.undo_path);
      abort();
    }
  }
  struct stat st;
  uint64_t size = fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  UndoRecord record{kind, 0, offset, span, size, 0};
  if (offset < size) record.length = span < size - offset ? span : size - offset;
  char* old = nullptr;
  if (record.length > 0) {
    old = static_cast<char*>(malloc(record.length));
    ssize_t n = real.pread64(fd, old, record.length, static_cast<off64_t>(offset));
    if (old == nullptr || n != static_cast<ssize_t>(record.length)) {
      fprintf(stderr, "disk-fault preload: cannot read %s before a write\n", file.path);
      abort();
    }
  }
  WriteAll(file.undo_fd, &record, sizeof(record));
  if (old != nullptr) {
    WriteAll(file.undo_fd, old, record.length);
    free(old);
  }
}

template <typename Op>
ssize_t TrackedWrite(int fd, uint64_t offset, size_t size, Op op) {
  TrackedFile* file = FileOf(fd);
  if (file == nullptr) return op();
  if (int fault = WriteFault()) {
    errno = fault;
    return -1;
  }
  pthread_mutex_lock(&file->mu);
  Record(*file, fd, UndoKind::kWrite, offset, size);
  ssize_t n = op();
  int saved = errno;
  pthread_mutex_unlock(&file->mu);
  errno = saved;
  return n;
}

int TrackedSync(int fd, int (*sync)(int)) {
  TrackedFile* file = FileOf(fd);
  if (file == nullptr) return sync(fd);
  pthread_mutex_lock(&file->mu);
  int result;
  int error = 0;
  if (control != nullptr && TakeOne(&control->fail_fsyncs)) {
    Count(&control->fsync_eio_returned);
    Record(*file, fd, UndoKind::kSyncFailed, 0, 0);
    file->lost = true;
    result = -1;
    error = EIO;
  } else {
    result = sync(fd);
    error = errno;
    if (result == 0 && !file->lost && file->undo_fd >= 0) {
      real.ftruncate(file->undo_fd, 0);  // all of it is durable now
    } else if (result == 0) {
      Record(*file, fd, UndoKind::kSyncOk, 0, 0);
    }
  }
  pthread_mutex_unlock(&file->mu);
  errno = error;
  return result;
}

int TrackedTruncate(int fd, uint64_t length, int (*op)(int, off64_t)) {
  TrackedFile* file = FileOf(fd);
  if (file == nullptr) return op(fd, static_cast<off64_t>(length));
  pthread_mutex_lock(&file->mu);
  Record(*file, fd, UndoKind::kTruncate, length, UINT64_MAX / 2);
  int result = op(fd, static_cast<off64_t>(length));
  int saved = errno;
  pthread_mutex_unlock(&file->mu);
  errno = saved;
  return result;
}

int Ftruncate64(int fd, off64_t length) { return real.ftruncate64(fd, length); }

mode_t ModeArg(int flags, va_list args) {
  return (flags & (O_CREAT | O_TMPFILE)) != 0 ? static_cast<mode_t>(va_arg(args, int)) : 0;
}

}  // namespace
}  // namespace fencegate::disk

using namespace fencegate::disk;  // NOLINT: the interposed C symbols below

extern "C" {

// open, open64, openat and openat64: the real call, then the descriptor is
// noted if it is a tracked file's. The mode is there only with O_CREAT or
// O_TMPFILE, as callers pass it only then.
#define FENCEGATE_INTERPOSE_OPEN(name, params, args) \
  int name params {                                  \
    Init();                                          \
    va_list rest;                                    \
    va_start(rest, flags);                           \
    const mode_t mode = ModeArg(flags, rest);        \
    va_end(rest);                                    \
    return Opened(real.name args, path);             \
  }

FENCEGATE_INTERPOSE_OPEN(open, (const char* path, int flags, ...), (path, flags, mode))
FENCEGATE_INTERPOSE_OPEN(open64, (const char* path, int flags, ...), (path, flags, mode))
FENCEGATE_INTERPOSE_OPEN(openat, (int dir, const char* path, int flags, ...),
                         (dir, path, flags, mode))
FENCEGATE_INTERPOSE_OPEN(openat64, (int dir, const char* path, int flags, ...),
                         (dir, path, flags, mode))

int close(int fd) {
  Init();
  SetFileOf(fd, 0);
  return real.close(fd);
}

ssize_t write(int fd, const void* data, size_t size) {
  Init();
  if (FileOf(fd) == nullptr) return real.write(fd, data, size);
  off64_t offset = lseek64(fd, 0, SEEK_CUR);
  return TrackedWrite(fd, static_cast<uint64_t>(offset), size,
                      [&] { return real.write(fd, data, size); });
}

ssize_t pwrite(int fd, const void* data, size_t size, off_t offset) {
  Init();
  return TrackedWrite(fd, static_cast<uint64_t>(offset), size,
                      [&] { return real.pwrite(fd, data, size, offset); });
}

ssize_t pwrite64(int fd, const void* data, size_t size, off64_t offset) {
  Init();
  return TrackedWrite(fd, static_cast<uint64_t>(offset), size,
                      [&] { return real.pwrite64(fd, data, size, offset); });
}

int fsync(int fd) {
  Init();
  return TrackedSync(fd, real.fsync); }

int fdatasync(int fd) {
  Init();
  return TrackedSync(fd, real.fdatasync); }

int ftruncate(int fd, off_t length) {
  Init();
  return TrackedTruncate(fd, static_cast<uint64_t>(length), Ftruncate64);
}

int ftruncate64(int fd, off64_t length) {
  Init();
  return TrackedTruncate(fd, static_cast<uint64_t>(length), Ftruncate64);
}

}  // extern "C"
