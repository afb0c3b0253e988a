#include "common/core/sqlite_state_format.h"

#include <optional>

#include "absl/strings/str_cat.h"

namespace fencegate {
namespace {

// How many objects the file's schema has, and whether the table meta is one.
constexpr char kSchemaObjects[] =
    "SELECT count(*), coalesce(sum(type = 'table' AND name = 'meta'), 0) "
    "FROM sqlite_master";
constexpr char kReadMarker[] =
    "SELECT value, typeof(value) FROM meta WHERE key = 'format'";
constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL)";
constexpr char kWriteMarker[] =
    "INSERT INTO meta(key, value) VALUES('format', ?1) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value";

// Steps `stmt` once: true with a row to read. Resets it on error.
absl::StatusOr<bool> StepOnce(SqliteStatement& stmt) {
  absl::StatusOr<bool> row = stmt.Step();
  if (!row.ok()) stmt.Reset();
  return row;
}

struct Marker {
  bool empty = false;             // no table at all: a new file
  std::optional<int64_t> format;  // nullopt: no meta table, or no row
};

absl::StatusOr<Marker> ReadMarker(SqliteDb& db, const std::string& state) {
  absl::StatusOr<SqliteStatement*> schema = db.Prepared(kSchemaObjects);
  if (!schema.ok()) return schema.status();
  absl::StatusOr<bool> row = StepOnce(**schema);
  if (!row.ok()) return row.status();
  Marker marker;
  marker.empty = !*row || (*schema)->ColumnInt(0) == 0;
  const bool has_meta = *row && (*schema)->ColumnInt(1) > 0;
  (*schema)->Reset();
  if (!has_meta) return marker;

  absl::StatusOr<SqliteStatement*> read = db.Prepared(kReadMarker);
  if (!read.ok()) return read.status();
  SqliteStatement& stmt = **read;
  row = StepOnce(stmt);
  if (!row.ok()) return row.status();
  if (!*row) {
    stmt.Reset();
    return marker;
  }
  const std::string type = stmt.ColumnText(1);
  const int64_t value = stmt.ColumnInt(0);
  const std::string text = stmt.ColumnText(0);
  stmt.Reset();
  if (type != "integer" || value < 1) {
    return UnreadableStateFormatError(state, "the row 'format' of its table meta", text);
  }
  marker.format = value;
  return marker;
}

absl::Status WriteMarker(SqliteDb& db, int64_t format) {
  absl::Status status = db.Exec(kCreateMeta);
  if (!status.ok()) return status;
  absl::StatusOr<SqliteStatement*> write = db.Prepared(kWriteMarker);
  if (!write.ok()) return write.status();
  return (*write)->Bind(1, format).Run();
}

}  // namespace

absl::StatusOr<StateFormatAtOpen> OpenSqliteStateFormat(SqliteDb& db,
                                                        const SqliteStateFormat& format) {
  const int64_t newest = format.migrations.back().to;
  absl::StatusOr<Marker> marker = ReadMarker(db, format.state);
  if (!marker.ok()) return marker.status();
  if (marker->format.has_value() && *marker->format > newest) {
    return NewerStateFormatError(format.state, *marker->format, newest);
  }
  if (marker->format == newest) return StateFormatAtOpen{marker->format, newest};

  // Under the write lock, read the marker again: another process may have
  // migrated the file meanwhile (the servers' state lock keeps a second
  // server away, but not every tool).
  absl::Status status = db.Exec("BEGIN IMMEDIATE");
  if (!status.ok()) return status;
  marker = ReadMarker(db, format.state);
  if (!marker.ok()) {
    status = marker.status();
  } else if (marker->format.has_value() && *marker->format > newest) {
    status = NewerStateFormatError(format.state, *marker->format, newest);
  } else if (marker->format != newest) {
    for (const SqliteMigration& step : format.migrations) {
      if (marker->format.has_value() && step.to <= *marker->format) continue;
      status = step.apply(db);
      if (!status.ok()) {
        status = absl::Status(status.code(),
                              absl::StrCat(format.state, ": migrating to state format ",
                                           step.to, ": ", status.message()));
        break;
      }
    }
    if (status.ok()) status = WriteMarker(db, newest);
  }
  if (status.ok()) status = db.Exec("COMMIT");
  if (!status.ok()) {
    db.Exec("ROLLBACK").IgnoreError();
    return status;
  }
  return StateFormatAtOpen{marker->format, newest, marker->empty};
}

}  // namespace fencegate
