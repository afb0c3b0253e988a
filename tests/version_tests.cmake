# Every shipped or user-facing binary reports the one project version and
# the git sha (common/build_info/build_info.h), label install: each
# `<binary> --version` must print exactly VersionLine() and exit 0. Abseil's
# default, which the servers printed before, is "<program>\nDebug build
# (NDEBUG not #defined)" and fails these. A few milliseconds each.
# fencegate_version_test(NAME TARGET [ARGS...]): `TARGET ARGS` prints
# "<TARGET> <version> <suffix>" (every binary is named after its target)
# and nothing else, and exits 0.
function(fencegate_version_test name target)
  if(fencegate_git_sha STREQUAL "")
    set(fencegate_version_suffix "(git sha unknown: not built from a git checkout)")
  else()
    set(fencegate_version_suffix "(git ${fencegate_git_sha})")
  endif()
  set(args ${ARGN})
  if(NOT args)
    set(args --version)
  endif()
  add_test(NAME version.${name}
    COMMAND bash -c "out=$(\"$@\") && [ \"$out\" = \"$0\" ] || { echo \"got: $out\"; echo \"expected: $0\"; exit 1; }"
      "${target} ${PROJECT_VERSION} ${fencegate_version_suffix}"
      $<TARGET_FILE:${target}> ${args})
  set_tests_properties(version.${name} PROPERTIES LABELS install TIMEOUT 60)
  fencegate_test_targets(LABELS install TARGETS ${target})
endfunction()

fencegate_version_test(lockservice fencegate-lockservice)
fencegate_version_test(gateway fencegate-gateway)
fencegate_version_test(cli fencegate)
fencegate_version_test(cli_command fencegate version)
fencegate_version_test(demo fencegate-demo)
fencegate_version_test(demo_client fencegate-demo-client)
fencegate_version_test(loadgen fencegate-loadgen)
fencegate_version_test(echo_server fencegate-echo-server)
fencegate_version_test(torture fencegate-torture)
fencegate_version_test(torture_worker fencegate-torture-worker)
# (fencegate-microbench's is in bench/CMakeLists.txt, which comes later.)

# cmake/build_info.cmake outside a git checkout says the sha is unknown,
# instead of reporting the commit of a repository the tree sits in (this
# build tree is inside the checkout, or outside any); -DFENCEGATE_GIT_SHA
# overrides; and inside this checkout (when it is one) it finds a sha.
set(fencegate_no_git ${CMAKE_CURRENT_BINARY_DIR}/build_info_no_git)
add_test(NAME build_info.outside_git_the_sha_is_unknown
  COMMAND bash -c [[
set -eu
rm -rf "$1" && mkdir -p "$1/common/build_info"
cp "$2/common/build_info/fencegate_build_values.h.in" "$1/common/build_info/"
values="$1/generated/fencegate_build_values.h"
cmake -DPROJECT_SOURCE_DIR="$1" -DPROJECT_BINARY_DIR="$1" -DPROJECT_VERSION=9.8.7 -P "$2/cmake/build_info.cmake"
grep -qx '#define FENCEGATE_GIT_SHA ""' "$values"
grep -qx '#define FENCEGATE_VERSION "9.8.7"' "$values"
cmake -DFENCEGATE_GIT_SHA=0123abcd -DPROJECT_SOURCE_DIR="$1" -DPROJECT_BINARY_DIR="$1" -DPROJECT_VERSION=9.8.7 -P "$2/cmake/build_info.cmake"
grep -qx '#define FENCEGATE_GIT_SHA "0123abcd"' "$values"
if [ -e "$2/.git" ]; then
  cmake -DPROJECT_SOURCE_DIR="$2" -DPROJECT_BINARY_DIR="$1" -DPROJECT_VERSION=9.8.7 -P "$2/cmake/build_info.cmake"
  grep -Eqx '#define FENCEGATE_GIT_SHA "[0-9a-f]{12}(-dirty)?"' "$values"
fi
]] _ ${fencegate_no_git} ${PROJECT_SOURCE_DIR})
set_tests_properties(build_info.outside_git_the_sha_is_unknown PROPERTIES LABELS install TIMEOUT 60)
