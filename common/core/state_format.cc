#include "common/core/state_format.h"

#include "absl/strings/str_cat.h"
#include "common/build_info/build_info.h"

namespace fencegate {

std::string StateFormatAtOpen::Describe() const {
  if (created) return absl::StrCat("format ", format, " (new)");
  if (!migrated()) return absl::StrCat("format ", format);
  if (!marked.has_value()) {
    return absl::StrCat("format ", format,
                        " (migrated from the 0.1.0 format, which had no marker)");
  }
  return absl::StrCat("format ", format, " (migrated from format ", *marked, ")");
}

absl::Status NewerStateFormatError(absl::string_view state, int64_t found,
                                   int64_t newest) {
  return absl::FailedPreconditionError(absl::StrCat(
      state, " has state format ", found, "; this ", ProgramName(), " ", ProjectVersion(),
      " reads formats up to ", newest,
      "; upgrade the binary or restore a backup taken before the newer release "
      "wrote it (nothing was changed; docs/upgrades.md)"));
}

absl::Status UnreadableStateFormatError(absl::string_view state, absl::string_view where,
                                        absl::string_view text) {
  return absl::DataLossError(
      absl::StrCat(state, ": its format marker (", where, ") holds '", text,
                   "', not a format number; restore a backup, or repair the marker "
                   "(docs/upgrades.md)"));
}

}  // namespace fencegate
