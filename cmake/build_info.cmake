# The git commit this build tree was configured from, for
# common/build_info/build_info.h.
#
# Found once, at configure time: a build tree keeps the commit of its last
# configure (re-run `cmake -S . -B build` to refresh it; ./scripts/package
# and CI configure fresh trees). Looking it up on every build instead would
# relink every binary after each commit, docs included, which on the shared
# 2-core machine costs minutes.
#
#   FENCEGATE_GIT_SHA    the abbreviated sha (12 hex digits), "-dirty" appended
#                        when tracked files had uncommitted changes at
#                        configure time; empty when the source tree is not a
#                        git checkout (a release tarball) or git is missing.
#                        A packager building from a tarball may pass
#                        -DFENCEGATE_GIT_SHA=<sha> to say where it came from.
#
# The values are written into the build tree (never committed) as
# generated/fencegate_build_values.h, which only common/build_info/build_info.cc
# reads.
set(FENCEGATE_GIT_SHA "" CACHE STRING
    "Git sha to report (empty: found at configure time, if this is a checkout)")

set(fencegate_git_sha "${FENCEGATE_GIT_SHA}")
if(fencegate_git_sha STREQUAL "")
  find_package(Git QUIET)
  if(GIT_FOUND)
    # --show-toplevel must be this source tree: a tarball unpacked inside
    # some other repository must not report that repository's commit.
    execute_process(
      COMMAND "${GIT_EXECUTABLE}" -C "${PROJECT_SOURCE_DIR}" rev-parse --show-toplevel
      OUTPUT_VARIABLE fencegate_git_toplevel OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE fencegate_git_result ERROR_QUIET)
    if(fencegate_git_result EQUAL 0)
      file(REAL_PATH "${fencegate_git_toplevel}" fencegate_git_toplevel)
      file(REAL_PATH "${PROJECT_SOURCE_DIR}" fencegate_source_dir)
    endif()
    if(fencegate_git_result EQUAL 0 AND fencegate_git_toplevel STREQUAL fencegate_source_dir)
      execute_process(
        COMMAND "${GIT_EXECUTABLE}" -C "${PROJECT_SOURCE_DIR}" rev-parse --short=12 HEAD
        OUTPUT_VARIABLE fencegate_git_sha OUTPUT_STRIP_TRAILING_WHITESPACE
        RESULT_VARIABLE fencegate_git_result ERROR_QUIET)
      if(NOT fencegate_git_result EQUAL 0)
        set(fencegate_git_sha "")
      else()
        execute_process(
          COMMAND "${GIT_EXECUTABLE}" -C "${PROJECT_SOURCE_DIR}" status --porcelain
                  --untracked-files=no
          OUTPUT_VARIABLE fencegate_git_changes OUTPUT_STRIP_TRAILING_WHITESPACE
          RESULT_VARIABLE fencegate_git_result ERROR_QUIET)
        if(fencegate_git_result EQUAL 0 AND NOT fencegate_git_changes STREQUAL "")
          string(APPEND fencegate_git_sha "-dirty")
        endif()
      endif()
    endif()
  endif()
endif()
if(fencegate_git_sha STREQUAL "")
  message(STATUS "fencegate ${PROJECT_VERSION}: not a git checkout, the git sha is unknown")
else()
  message(STATUS "fencegate ${PROJECT_VERSION}: git ${fencegate_git_sha}")
endif()

set(FENCEGATE_BUILD_VALUES_DIR "${PROJECT_BINARY_DIR}/generated")
configure_file("${PROJECT_SOURCE_DIR}/common/build_info/fencegate_build_values.h.in"
               "${FENCEGATE_BUILD_VALUES_DIR}/fencegate_build_values.h" @ONLY)
