#include "common/build_info/build_info.h"

#include <errno.h>  // program_invocation_short_name (GNU)

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "fencegate_build_values.h"  // generated (cmake/build_info.cmake)

namespace fencegate {
namespace {

std::string& RecordedProgram() {
  static std::string* program = new std::string();
  return *program;
}

}  // namespace

absl::string_view ProjectVersion() { return FENCEGATE_VERSION; }

absl::string_view GitSha() { return FENCEGATE_GIT_SHA; }

void InitBuildInfo(absl::string_view program, absl::FlagsUsageConfig usage) {
  RecordedProgram() = std::string(program);
  usage.version_string = [] { return VersionLine() + "\n"; };
  // --help's "Flags from lockservice/server/main.cc:", not the build machine's
  // path. A main's own contains_help_flags sees the same short name.
  usage.normalize_filename = [](absl::string_view file) {
    absl::ConsumePrefix(&file, FENCEGATE_SOURCE_DIR "/");
    absl::ConsumePrefix(&file, "/");
    return std::string(file);
  };
  absl::SetFlagsUsageConfig(std::move(usage));
}

std::string ProgramName() {
  const std::string& recorded = RecordedProgram();
  return recorded.empty() ? std::string(program_invocation_short_name) : recorded;
}

std::string VersionLine() {
  const absl::string_view sha = GitSha();
  return absl::StrCat(ProgramName(), " ", ProjectVersion(),
                      sha.empty() ? " (git sha unknown: not built from a git checkout)"
                                  : absl::StrCat(" (git ", sha, ")"));
}

}  // namespace fencegate
