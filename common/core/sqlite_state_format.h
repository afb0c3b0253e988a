// The state format (state_format.h) of a store on one SQLite file: its
// marker, its migrations, and the check every open makes. Both servers'
// SQLite stores use it (lockservice/core/sqlite_lock_store.h,
// gateway/sqlite_storage.h).
//
// The marker is the row ('format', N) of the table
//   meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL)
// rather than `PRAGMA user_version`: a row goes with `sqlite3 .dump` (the
// header's user_version does not, so a file restored from a dump would
// read as 0.1.0's and be migrated again), it is read and written like any
// other row of the migration's transaction, and the lock service's file
// has had that table, read by key, since 0.1.0.
//
// Thread safety: OpenSqliteStateFormat() uses `db` alone; the caller keeps
// other users of that connection away.
#ifndef FENCEGATE_COMMON_CORE_SQLITE_STATE_FORMAT_H_
#define FENCEGATE_COMMON_CORE_SQLITE_STATE_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/core/sqlite.h"
#include "common/core/state_format.h"

namespace fencegate {

// One step of a store's migrations: brings the state from format `to - 1`
// to format `to`, inside the migration's transaction (it must not commit).
// The step to format 1 starts from unmarked state: any file 0.1.0 wrote, or
// a new, empty one.
struct SqliteMigration {
  int64_t to;
  absl::Status (*apply)(SqliteDb& db);
};

struct SqliteStateFormat {
  // Names the state in messages, e.g. the file's path.
  std::string state;
  // Every step, `to` = 1, 2, ... in order; the last one's `to` is the
  // format this version writes.
  absl::Span<const SqliteMigration> migrations;
};

// Reads the marker of `db`; refuses a newer format (FAILED_PRECONDITION,
// NewerStateFormatError) or a marker that is no format (DATA_LOSS) having
// written nothing; otherwise runs the steps past the marker (all of them
// without one) and writes the marker, all in one BEGIN IMMEDIATE
// transaction, so a failed migration leaves the file as it was. State
// already in the newest format is only read. Errors of SQLite as
// SqliteDb's.
// REQUIRES: `format.migrations` is not empty.
absl::StatusOr<StateFormatAtOpen> OpenSqliteStateFormat(SqliteDb& db,
                                                        const SqliteStateFormat& format);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_SQLITE_STATE_FORMAT_H_
