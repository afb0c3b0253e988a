// Thin RAII wrappers over the SQLite C API, shared by both servers' stores.
//
// SqliteDb owns one connection and a cache of prepared statements. Open()
// sets WAL mode and synchronous=FULL, so a COMMIT that returned is on disk.
// Errors come back as absl::Status naming the SQL step and SQLite's message;
// a full disk as RESOURCE_EXHAUSTED naming the database's path. A store's
// writing connection is opened with OnDiskError::kFailStop: an I/O error
// on it (a failed write or fsync) stops the process (fail_stop.h) instead
// of returning.
//
// Thread safety: a SqliteDb and its statements are NOT thread-safe; each is
// used by one thread at a time (a store's group commit flushes one batch at
// a time: common/core/group_commit.h).
#ifndef FENCEGATE_COMMON_CORE_SQLITE_H_
#define FENCEGATE_COMMON_CORE_SQLITE_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fencegate {

class SqliteDb;

// One prepared statement. Bind parameters are 1-based, columns 0-based.
class SqliteStatement {
 public:
  SqliteStatement(const SqliteDb& db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& BindText(int index, absl::string_view value);
  SqliteStatement& BindBlob(int index, absl::string_view value);
  SqliteStatement& BindNull(int index);

  // Advances: true with a row to read, false when done.
  absl::StatusOr<bool> Step();
  // Steps to completion, for statements that return no rows.
  absl::Status Run();

  int64_t ColumnInt(int column) const;
  std::string ColumnText(int column) const;  // also reads BLOB columns
  bool ColumnIsNull(int column) const;

  // Clears bindings and rewinds; done automatically by SqliteDb::Prepared().
  void Reset();

 private:
  const SqliteDb& db_;
  sqlite3_stmt* stmt_;
};

class SqliteDb {
 public:
  // What an I/O error (SQLITE_IOERR_*, but for its out-of-memory code) on
  // this connection does: return INTERNAL, or stop the process.
  enum class OnDiskError { kReport, kFailStop };

  // Opens (creating if needed) the database at `path`; ":memory:" works for
  // tests. Applies WAL + synchronous=FULL + a busy timeout.
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(
      const std::string& path, OnDiskError on_disk_error = OnDiskError::kReport);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more SQL statements that return no rows.
  absl::Status Exec(absl::string_view sql);

  // A cached prepared statement for `sql`, reset and ready to bind. The
  // reference stays valid for the life of this SqliteDb.
  absl::StatusOr<SqliteStatement*> Prepared(absl::string_view sql);

  // Whether a transaction is open (SQLite rolls a whole transaction back
  // on some errors, e.g. a full disk: then this turns false).
  bool InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

  // Status for the connection's last error, prefixed with `what`.
  absl::Status Error(absl::string_view what) const;
  // Status for result code `rc` of `what` on this connection (see above:
  // a full disk names the path; an I/O error may stop the process).
  absl::Status Failed(int rc, absl::string_view what, absl::string_view detail) const;

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

 private:
  SqliteDb(sqlite3* db, std::string path, OnDiskError on_disk_error)
      : db_(db), path_(std::move(path)), on_disk_error_(on_disk_error) {}

  sqlite3* db_;
  std::string path_;
  OnDiskError on_disk_error_;
  absl::flat_hash_map<std::string, std::unique_ptr<SqliteStatement>> cache_;
};

// Maps an SQLite result code to the closest absl code (BUSY -> UNAVAILABLE,
// FULL -> RESOURCE_EXHAUSTED, CORRUPT -> DATA_LOSS, else INTERNAL).
absl::Status SqliteStatus(int rc, absl::string_view what, absl::string_view detail);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_SQLITE_H_
