// The planted bug of the disk (docs/torture.md, "Planted bugs"), in the
// torture suite's server builds only: tests/torture/CMakeLists.txt links
// this file into fencegate-lockservice-torture and fencegate-gateway-torture.
//
// disk_fsync_retry: a server that retries a failed fsync and, when the
// retry succeeds, acknowledges, which PostgreSQL did until 2018. It is
// played below the stores, as a SQLite VFS that wraps the default one and
// becomes the default when this file is loaded: its xSync calls the real
// one again after a failure. Without the bug the wrapper only forwards. On
// Linux the retry "succeeds" because the failed fsync marked the pages it
// could not write clean (the disk-fault preload, tests/disk/, does the
// same), so what the commit wrote is lost at the next power cut although
// it was acknowledged: the checker must see a lost write or a token handed
// out twice.
//
// Thread safety: SQLite calls a file's methods from one connection's thread
// at a time; the VFS itself is registered once, before main().
#include <sqlite3.h>

#include <cstring>

#include "common/base/log.h"
#include "common/test_hooks/test_hooks.h"

namespace fencegate::test_hooks {
namespace {

sqlite3_vfs* real_vfs = nullptr;
sqlite3_vfs wrapper_vfs;

// A file of the wrapper: the real file's state follows it in memory.
struct WrappedFile {
  sqlite3_file base;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

WrappedFile* Wrapped(sqlite3_file* file) { return reinterpret_cast<WrappedFile*>(file); }
sqlite3_file* Real(sqlite3_file* file) { return Wrapped(file)->real(); }

int Sync(sqlite3_file* file, int flags) {
  int rc = Real(file)->pMethods->xSync(Real(file), flags);
  if (rc != SQLITE_OK && PlantedBug("disk_fsync_retry")) {
    LogWarning("PLANTED BUG disk_fsync_retry: fsync failed (%d); retrying it", rc);
    rc = Real(file)->pMethods->xSync(Real(file), flags);
  }
  return rc;
}

int Close(sqlite3_file* file) { return Real(file)->pMethods->xClose(Real(file)); }
int Read(sqlite3_file* file, void* data, int amount, sqlite3_int64 offset) {
  return Real(file)->pMethods->xRead(Real(file), data, amount, offset);
}
int Write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  return Real(file)->pMethods->xWrite(Real(file), data, amount, offset);
}
int Truncate(sqlite3_file* file, sqlite3_int64 size) {
  return Real(file)->pMethods->xTruncate(Real(file), size);
}
int FileSize(sqlite3_file* file, sqlite3_int64* size) {
  return Real(file)->pMethods->xFileSize(Real(file), size);
}
int Lock(sqlite3_file* file, int lock) { return Real(file)->pMethods->xLock(Real(file), lock); }
int Unlock(sqlite3_file* file, int lock) {
  return Real(file)->pMethods->xUnlock(Real(file), lock);
}
int CheckReservedLock(sqlite3_file* file, int* out) {
  return Real(file)->pMethods->xCheckReservedLock(Real(file), out);
}
int FileControl(sqlite3_file* file, int op, void* arg) {
  return Real(file)->pMethods->xFileControl(Real(file), op, arg);
}
int SectorSize(sqlite3_file* file) { return Real(file)->pMethods->xSectorSize(Real(file)); }
int DeviceCharacteristics(sqlite3_file* file) {
  return Real(file)->pMethods->xDeviceCharacteristics(Real(file));
}
int ShmMap(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  return Real(file)->pMethods->xShmMap(Real(file), region, size, extend, out);
}
int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
  return Real(file)->pMethods->xShmLock(Real(file), offset, n, flags);
}
void ShmBarrier(sqlite3_file* file) { Real(file)->pMethods->xShmBarrier(Real(file)); }
int ShmUnmap(sqlite3_file* file, int delete_flag) {
  return Real(file)->pMethods->xShmUnmap(Real(file), delete_flag);
}
int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  return Real(file)->pMethods->xFetch(Real(file), offset, amount, out);
}
int Unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  return Real(file)->pMethods->xUnfetch(Real(file), offset, page);
}

// Version 3, as the unix VFS's methods are; Open() checks.
const sqlite3_io_methods kMethods = {
    3,        Close,  Read,     Write,    Truncate,   Sync,     FileSize,
    Lock,     Unlock, CheckReservedLock,  FileControl, SectorSize,
    DeviceCharacteristics,    ShmMap,     ShmLock,    ShmBarrier, ShmUnmap,
    Fetch,    Unfetch,
};

int Open(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  WrappedFile* wrapped = Wrapped(file);
  wrapped->base.pMethods = nullptr;
  int rc = real_vfs->xOpen(real_vfs, name, wrapped->real(), flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  if (wrapped->real()->pMethods == nullptr || wrapped->real()->pMethods->iVersion < 3) {
    wrapped->real()->pMethods->xClose(wrapped->real());
    return SQLITE_CANTOPEN;
  }
  wrapped->base.pMethods = &kMethods;
  return SQLITE_OK;
}

// The rest of the VFS is the real one's.
int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return real_vfs->xDelete(real_vfs, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return real_vfs->xAccess(real_vfs, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return real_vfs->xFullPathname(real_vfs, name, size, out);
}
int Randomness(sqlite3_vfs*, int size, char* out) {
  return real_vfs->xRandomness(real_vfs, size, out);
}
int Sleep(sqlite3_vfs*, int micros) { return real_vfs->xSleep(real_vfs, micros); }
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return real_vfs->xCurrentTimeInt64(real_vfs, out);
}
int GetLastError(sqlite3_vfs*, int size, char* out) {
  return real_vfs->xGetLastError(real_vfs, size, out);
}

[[maybe_unused]] const bool registered = [] {
  real_vfs = sqlite3_vfs_find(nullptr);
  if (real_vfs == nullptr || real_vfs->iVersion < 2) return false;
  memset(&wrapper_vfs, 0, sizeof(wrapper_vfs));
  wrapper_vfs.iVersion = 2;
  wrapper_vfs.szOsFile = static_cast<int>(sizeof(WrappedFile)) + real_vfs->szOsFile;
  wrapper_vfs.mxPathname = real_vfs->mxPathname;
  wrapper_vfs.zName = "fencegate-planted-disk-bug";
  wrapper_vfs.xOpen = Open;
  wrapper_vfs.xDelete = Delete;
  wrapper_vfs.xAccess = Access;
  wrapper_vfs.xFullPathname = FullPathname;
  wrapper_vfs.xRandomness = Randomness;
  wrapper_vfs.xSleep = Sleep;
  wrapper_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  wrapper_vfs.xGetLastError = GetLastError;
  return sqlite3_vfs_register(&wrapper_vfs, /*makeDflt=*/1) == SQLITE_OK;
}();

}  // namespace
}  // namespace fencegate::test_hooks
