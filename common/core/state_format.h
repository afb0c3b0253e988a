// State formats: every store records the format of the durable state it
// keeps (a number that grows whenever what a release writes would be
// misread by an older one), so that a server migrates older state once and
// refuses state newer than it knows. docs/upgrades.md lists the formats.
//
// Numbering. Format 1 is what fencegate 0.1.0 wrote ("the 0.1.0 format"),
// which carried no marker: state without a marker, including a new empty
// store, is format 1. Each store numbers its own formats (the lock
// service's SQLite file, its etcd keys, the gateway's SQLite file and its
// PostgreSQL schema), and each store's first migration step, to format 1,
// must hold on any 0.1.0 state and on empty state alike.
//
// At open a store reads its marker and
//   - newer than it knows: refuses with NewerStateFormatError(), writing
//     nothing;
//   - older, or none: runs its migration steps from there and writes the
//     marker, in one transaction (what it found is in StateFormatAtOpen);
//   - its own: only reads.
//
// Thread safety: plain values and functions.
#ifndef FENCEGATE_COMMON_CORE_STATE_FORMAT_H_
#define FENCEGATE_COMMON_CORE_STATE_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fencegate {

// The format of state that carries no marker: what fencegate 0.1.0 wrote.
inline constexpr int64_t kUnmarkedStateFormat = 1;

// What a store's open found of the state's format, and what it made of it.
struct StateFormatAtOpen {
  // The marker as found; nullopt: none (0.1.0's state, or a new store).
  std::optional<int64_t> marked;
  // The format the state is in now: the store's own.
  int64_t format = 0;
  // The store was empty: this open made it in `format`, migrating nothing.
  bool created = false;

  // Whether this open migrated state (stamping unmarked state included).
  bool migrated() const { return !created && marked != format; }
  // For logs: "format 1", "format 1 (new)", "format 1 (migrated from the
  // 0.1.0 format, which had no marker)", "format 3 (migrated from format 2)".
  std::string Describe() const;
};

// FAILED_PRECONDITION, nothing having been written: "<state> has state
// format <found>; this <program> <version> reads formats up to <newest>;
// upgrade the binary or restore a backup ...". `state` names the file,
// schema or key, e.g. "/var/lib/fencegate/locks.db". The program is
// ProgramName(), the version the project's (common/build_info/build_info.h).
absl::Status NewerStateFormatError(absl::string_view state, int64_t found,
                                   int64_t newest);

// DATA_LOSS: the marker `where` of `state` holds `text`, which is not a
// format number (1 or more).
absl::Status UnreadableStateFormatError(absl::string_view state, absl::string_view where,
                                        absl::string_view text);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_STATE_FORMAT_H_
