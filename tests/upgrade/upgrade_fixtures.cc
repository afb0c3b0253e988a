#include "tests/upgrade/upgrade_fixtures.h"

#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/core/sqlite.h"

namespace fencegate::testing {

absl::StatusOr<std::string> ReadFixture(absl::string_view name) {
  const std::string path = absl::StrCat(FENCEGATE_UPGRADE_FIXTURES_DIR, "/", name);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the fixture ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::Status MakeSqliteFile(const std::string& path, absl::string_view fixture) {
  if (std::ifstream(path).good()) {
    return absl::AlreadyExistsError(absl::StrCat(path, " exists"));
  }
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);  // WAL
  if (!db.ok()) return db.status();
  return (*db)->Exec(fixture);
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

namespace {

// The first column of the first row of `sql` on `db` ("" if none).
absl::StatusOr<std::string> FirstValue(SqliteDb& db, const char* sql) {
  absl::StatusOr<SqliteStatement*> read = db.Prepared(sql);
  if (!read.ok()) return read.status();
  absl::StatusOr<bool> row = (*read)->Step();
  const std::string value = row.ok() && *row ? (*read)->ColumnText(0) : "";
  (*read)->Reset();
  if (!row.ok()) return row.status();
  return value;
}

}  // namespace

std::string SqliteFormatMarker(const std::string& path) {
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status().ToString();
  absl::StatusOr<std::string> tables = FirstValue(
      **db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
  if (!tables.ok()) return tables.status().ToString();
  if (*tables == "0") return "";
  absl::StatusOr<std::string> marker =
      FirstValue(**db, "SELECT value FROM meta WHERE key = 'format'");
  return marker.ok() ? *marker : marker.status().ToString();
}

absl::Status MarkSqliteFormat(const std::string& path, int64_t format) {
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  return (*db)->Exec(absl::StrCat(
      "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
      "INSERT INTO meta VALUES('format', ",
      format, ")"));
}

}  // namespace fencegate::testing
