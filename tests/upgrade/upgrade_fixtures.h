// The 0.1.0 state fixtures of tests/upgrade/ (made by make_fixtures.sh from
// fencegate 0.1.0's binaries) and what the upgrade tests do with them:
// read one, turn a SQL dump into a SQLite file, compare a file's bytes.
//
// What every fixture holds is the same calls' state (make_fixtures.sh):
// the lock service's in lockservice-*-0.1.0.*, the gateway's in
// gateway-*-0.1.0.sql. kZeroOneZero* below is what a store must load.
//
// Thread safety: plain functions.
#ifndef FENCEGATE_TESTS_UPGRADE_UPGRADE_FIXTURES_H_
#define FENCEGATE_TESTS_UPGRADE_UPGRADE_FIXTURES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fencegate::testing {

// The text of tests/upgrade/`name`.
absl::StatusOr<std::string> ReadFixture(absl::string_view name);

// Makes the SQLite file `path` (which must not exist) from the SQL dump
// `fixture`, in WAL mode as the servers keep their files, and closes it:
// everything is in the file itself, no -wal file is left.
absl::Status MakeSqliteFile(const std::string& path, absl::string_view fixture);

// The bytes of the file at `path` ("" if it cannot be read).
std::string FileBytes(const std::string& path);

// The state format marker of the SQLite file at `path` (the meta row
// 'format') as another program reads it: "" if there is none, the error's
// text if it cannot be read.
std::string SqliteFormatMarker(const std::string& path);

// Marks the SQLite file at `path` as holding state format `format` (the
// meta row 'format', the table made if missing), as a later release would.
absl::Status MarkSqliteFormat(const std::string& path, int64_t format);

// The highest token fencegate 0.1.0 issued in the fixtures' lock state.
inline constexpr uint64_t kZeroOneZeroLastToken = 7;

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_UPGRADE_UPGRADE_FIXTURES_H_
