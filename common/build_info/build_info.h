// Which build of fencegate is running: the project's version (CMake's
// project(VERSION), one for every binary and the client library) and the
// git commit the build tree was configured from (cmake/build_info.cmake;
// the values are generated into the build tree, never committed).
//
// Every main calls InitBuildInfo(program) before parsing its flags; then
// --version prints VersionLine() and exits 0, and the servers put
// VersionLine() in their start-up log line. Servers report the same values
// over gRPC (fencegate.v1.ServerInfo, common/server/server_info_service.h).
//
// Thread safety: InitBuildInfo() once, at the start of main(), before other
// threads run; the rest may be called from any thread.
#ifndef FENCEGATE_COMMON_BUILD_INFO_BUILD_INFO_H_
#define FENCEGATE_COMMON_BUILD_INFO_BUILD_INFO_H_

#include <string>

#include "absl/flags/usage_config.h"
#include "absl/strings/string_view.h"

namespace fencegate {

// The project version, e.g. "0.1.0".
absl::string_view ProjectVersion();

// The abbreviated commit, e.g. "1ad2ca2e430d", with "-dirty" appended when
// tracked files had uncommitted changes at configure time. Empty when
// unknown: built from a tree that is not a git checkout (a tarball).
absl::string_view GitSha();

// Records `program` (e.g. "fencegate-lockservice") as this process's name
// and makes absl's --version flag print VersionLine() and exit 0 (instead
// of Abseil's default text, which only says whether NDEBUG was defined).
// absl::SetFlagsUsageConfig replaces the whole configuration, so a main
// with usage settings of its own passes them in `usage` rather than
// setting them itself.
// REQUIRES: called before absl::ParseCommandLine, at most once.
void InitBuildInfo(absl::string_view program, absl::FlagsUsageConfig usage = {});

// The name InitBuildInfo() recorded; before that (tests that start servers
// in-process), the executable's file name.
std::string ProgramName();

// "fencegate-lockservice 0.1.0 (git 1ad2ca2e430d)", or with
// "(git sha unknown: not built from a git checkout)".
std::string VersionLine();

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_BUILD_INFO_BUILD_INFO_H_
