#include "common/core/sqlite.h"

#include "absl/strings/str_cat.h"
#include "common/core/fail_stop.h"

namespace fencegate {

absl::Status SqliteStatus(int rc, absl::string_view what,
                          absl::string_view detail) {
  std::string message = absl::StrCat("sqlite: ", what, ": ", detail);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    default:
      return absl::InternalError(message);
  }
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

namespace {

// SQLite binds a null pointer as SQL NULL, but an empty view need not point
// anywhere: it is empty text (or an empty blob) all the same.
const char* NonNull(absl::string_view value) {
  return value.data() != nullptr ? value.data() : "";
}

}  // namespace

SqliteStatement& SqliteStatement::BindText(int index, absl::string_view value) {
  sqlite3_bind_text(stmt_, index, NonNull(value), static_cast<int>(value.size()),
                    SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::BindBlob(int index, absl::string_view value) {
  sqlite3_bind_blob(stmt_, index, NonNull(value), static_cast<int>(value.size()),
                    SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

absl::StatusOr<bool> SqliteStatement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_.Failed(rc, sqlite3_sql(stmt_), sqlite3_errmsg(db_.handle()));
}

absl::Status SqliteStatement::Run() {
  absl::StatusOr<bool> row;
  do {
    row = Step();
    if (!row.ok()) return row.status();
  } while (*row);
  return absl::OkStatus();
}

int64_t SqliteStatement::ColumnInt(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::string SqliteStatement::ColumnText(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr) return std::string();
  return std::string(static_cast<const char*>(data), size);
}

bool SqliteStatement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path,
                                                         OnDiskError on_disk_error) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status = SqliteStatus(
        rc, absl::StrCat("open ", path),
        raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
    sqlite3_close(raw);
    return status;
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, path, on_disk_error));
  sqlite3_extended_result_codes(raw, 1);
  // WAL: readers do not block the writer. synchronous=FULL: a returned
  // COMMIT has been fsynced, so an acknowledged change survives power loss.
  // The busy timeout comes first: switching to WAL takes a lock, and two
  // processes opening a new file at once would otherwise get "database is
  // locked" instead of waiting for each other.
  absl::Status status = db->Exec(
      "PRAGMA busy_timeout=5000;"
      "PRAGMA journal_mode=WAL;"
      "PRAGMA synchronous=FULL;"
      "PRAGMA foreign_keys=ON;");
  if (!status.ok()) return status;
  return db;
}

SqliteDb::~SqliteDb() {
  cache_.clear();  // statements must be finalized before the connection
  sqlite3_close(db_);
}

absl::Status SqliteDb::Exec(absl::string_view sql) {
  std::string owned(sql);
  char* error = nullptr;
  int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return absl::OkStatus();
  absl::Status status = Failed(rc, owned, error ? error : sqlite3_errstr(rc));
  sqlite3_free(error);
  return status;
}

absl::StatusOr<SqliteStatement*> SqliteDb::Prepared(absl::string_view sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return Failed(rc, sql, sqlite3_errmsg(db_));
    it = cache_.emplace(std::string(sql), std::make_unique<SqliteStatement>(*this, stmt))
             .first;
  }
  it->second->Reset();
  return it->second.get();
}

absl::Status SqliteDb::Error(absl::string_view what) const {
  return Failed(sqlite3_extended_errcode(db_), what, sqlite3_errmsg(db_));
}

absl::Status SqliteDb::Failed(int rc, absl::string_view what,
                              absl::string_view detail) const {
  if ((rc & 0xff) == SQLITE_IOERR && rc != SQLITE_IOERR_NOMEM &&
      on_disk_error_ == OnDiskError::kFailStop) {
    FailStop(absl::StrCat("the disk failed under ", path_, " (sqlite: ", what, ": ",
                          detail, ")"));
  }
  if ((rc & 0xff) == SQLITE_FULL) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the disk holding ", path_, " is full (sqlite: ", what, ": ", detail, ")"));
  }
  return SqliteStatus(rc, what, detail);
}

}  // namespace fencegate
