// What a worker writes into its history's fields (worker.cc,
// worker_election.cc): numbers, errors, and the outcome an error means.
//
// Thread safety: pure functions.
#ifndef FENCEGATE_TESTS_TORTURE_WORKER_FIELDS_H_
#define FENCEGATE_TESTS_TORTURE_WORKER_FIELDS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/torture/history.h"

namespace fencegate::torture {

inline std::string Str(uint64_t v) { return absl::StrCat(v); }

inline std::string ErrorText(const absl::Status& status) {
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ", status.message());
}

// ABORTED is the server saying "no, nothing changed"; anything else that is
// not OK may or may not have been applied.
inline Outcome FailureOutcome(const absl::Status& status) {
  return status.code() == absl::StatusCode::kAborted ? Outcome::kRefused
                                                     : Outcome::kUnknown;
}

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_WORKER_FIELDS_H_
