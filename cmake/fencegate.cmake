# fencegate_test_targets(LABELS label... TARGETS target...)
# Says, where a test is declared, which targets it runs: its binary and the
# binaries it starts. Each label gets an aggregate target
# fencegate_tests_<label> that builds exactly those of every test with that
# label, so a build tree that runs only some labels (the sanitized trees of
# ./scripts/test) builds only what `ctest -L <label>` runs. TARGETS may be
# empty (a test of scripts only). Tests declared in a directory with a
# LABELS property (tests/torture) count under those labels too.
function(fencegate_test_targets)
  cmake_parse_arguments(T "" "" "LABELS;TARGETS" ${ARGN})
  get_directory_property(directory_labels LABELS)
  foreach(label IN LISTS T_LABELS directory_labels)
    if(NOT TARGET fencegate_tests_${label})
      add_custom_target(fencegate_tests_${label})
    endif()
    if(T_TARGETS)
      add_dependencies(fencegate_tests_${label} ${T_TARGETS})
    endif()
  endforeach()
endfunction()

# Unity builds: each target's sources are compiled CMAKE_UNITY_BUILD_BATCH_SIZE
# to a translation unit, so gRPC's, protobuf's, Abseil's and gtest's headers
# are parsed once per batch rather than once per file: measured on four unit
# test files, 21.9 s of CPU as one unit against 47.8 s one by one. On by
# default, since every build the two scripts start is a fresh one; while
# editing, -DFENCEGATE_UNITY_BUILD=OFF recompiles only the file that changed.
# A file's anonymous namespace is then shared with the others of its batch:
# names there must not collide across a target's files.
option(FENCEGATE_UNITY_BUILD "Compile each target's sources in batches" ON)
set(CMAKE_UNITY_BUILD ${FENCEGATE_UNITY_BUILD})
if(NOT DEFINED CMAKE_UNITY_BUILD_BATCH_SIZE)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)
endif()

# fencegate_generated_apart(target): protoc's files of `target` stay out of
# its unity batches (each .pb.cc defines the same file-level names). The
# ASan and TSan trees compile them without optimization, instrumented the
# same: lock.pb.cc in 2.6 s of CPU against 7.7 s at -O1 (about 70 s of the
# asan tree's build and 35 s of the tsan tree's); the fuzz tree keeps -O1,
# its targets parse wire bytes with them at full speed.
function(fencegate_generated_apart target)
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.pb\\.cc$")
  if(sources)
    set_source_files_properties(${sources} TARGET_DIRECTORY ${target}
      PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    if(FENCEGATE_SANITIZE STREQUAL "address,undefined" OR FENCEGATE_SANITIZE STREQUAL "thread")
      set_source_files_properties(${sources} TARGET_DIRECTORY ${target}
        PROPERTIES COMPILE_OPTIONS -O0)
    endif()
  endif()
endfunction()

# fencegate_test_code(target): compile settings of test code (the gtest
# binaries, the torture suite's tools, the libraries only tests link):
# FENCEGATE_TEST_CXX_FLAGS, in the main tree line tables only (-g1): a
# failure's backtrace still names file and line, and a test file compiles
# in about four fifths of the time full debug information takes (two at a
# time on 2 cores: 10.2 s against 13.1 s). The sanitized trees already
# compile everything so (cmake/sanitizers.cmake). Set it to -g to step
# through a test in a debugger. (A precompiled header of gtest, gRPC and
# Abseil was tried and dropped: alone a test file compiled a third faster
# with it, but two at a time, as the build runs, no faster.)
# (FENCEGATE_SANITIZE is set on the command line of a sanitized tree; it is
# not defined yet here in the main tree: cmake/sanitizers.cmake comes later.)
if(NOT FENCEGATE_SANITIZE AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  # -O1: a test file compiles in four fifths of the time -O2 takes (e2e's
  # first batch 10.0 s against 12.5 s; -O0 is slower, 11.3 s, gcc emitting
  # every inline template). The product's code keeps -O2.
  set(fencegate_test_cxx_flags_default -g1 -O1)
  # The tree with the tests (./scripts/build --tests, ./scripts/test) keeps
  # line tables only for the product's code too, unless the flags were
  # given: gcc generates the same code with either, backtraces and perf
  # still name functions, files and lines, the packages made from this tree
  # are stripped either way (cmake/package.cmake), and a lock-service unit
  # compiles in 15.9 s instead of 22.3 s. The product built alone
  # (./scripts/build, ./scripts/demo) keeps full debug information;
  # -DCMAKE_BUILD_TYPE=Debug steps through either in a debugger.
  if(FENCEGATE_BUILD_TESTS AND CMAKE_CXX_FLAGS_RELWITHDEBINFO STREQUAL "-O2 -g -DNDEBUG")
    set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O2 -g1 -DNDEBUG")
  endif()
elseif(FENCEGATE_SANITIZE STREQUAL "address,undefined" OR FENCEGATE_SANITIZE STREQUAL "thread")
  # The ASan and TSan trees compile test code without optimization: clang
  # instruments it the same, and a test file compiles in half the time
  # (lockservice_unit_tests' second unit: 16.5 s against 36.3 s at -O1); the
  # product's code under test keeps -O1. The sequence runners and models
  # (tests/sequence_tests.cmake), which are where the tests' own CPU time
  # goes, are not test code in this sense and keep -O1 too.
  set(fencegate_test_cxx_flags_default -O0)
else()
  set(fencegate_test_cxx_flags_default "")
endif()
set(FENCEGATE_TEST_CXX_FLAGS "${fencegate_test_cxx_flags_default}" CACHE STRING
    "Extra compile options of test code (default: -g1 -O1 in the main tree, -O0 in the ASan and TSan trees)")
function(fencegate_test_code target)
  target_compile_options(${target} PRIVATE ${FENCEGATE_TEST_CXX_FLAGS})
endfunction()

# fencegate_cc_test(NAME SOURCES ... DEPS ... [LABELS ...] [TEST_PREFIX p]
#                   [ETCD_TESTS gtest-filter])
# One gtest binary per area: linking gRPC is slow on 2 cores, so keep them few.
# TEST_PREFIX is put before every discovered test name, so that
# `ctest -R <prefix>` selects an area (e.g. "gateway."). The binary counts
# under LABELS for fencegate_tests_<label> (above). The tests that
# ETCD_TESTS selects (a --gtest_filter pattern: the etcd variants of the
# semantic suites, which start an etcd) get the label "etcd" instead, so
# that the fast tiers leave them out and `ctest -L etcd` runs them alone.
# Declare gtest binaries with this function: a binary that is not built
# leaves an unlabelled placeholder test, so `ctest -L` would skip its tests
# without a word.
# Every test of such a binary that starts a PostgreSQL server copies the
# cluster initdb made once in this tree (harness/postgres_server.h), rather
# than running initdb, about a second of CPU, in each test process.
set(fencegate_test_environment
    "FENCEGATE_PG_TEMPLATES=${CMAKE_BINARY_DIR}/pg-templates")
function(fencegate_cc_test name)
  cmake_parse_arguments(T "" "TEST_PREFIX;ETCD_TESTS" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_DEPS} fencegate_testing GTest::gmock GTest::gtest_main)
  fencegate_test_code(${name})
  if(T_ETCD_TESTS)
    gtest_discover_tests(${name}
      TEST_PREFIX "${T_TEST_PREFIX}"
      TEST_FILTER "-${T_ETCD_TESTS}"
      DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS "${T_LABELS}" ENVIRONMENT "${fencegate_test_environment}")
    gtest_discover_tests(${name}
      TEST_PREFIX "${T_TEST_PREFIX}"
      TEST_FILTER "${T_ETCD_TESTS}"
      DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS etcd ENVIRONMENT "${fencegate_test_environment}")
    fencegate_test_targets(LABELS etcd TARGETS ${name})
  else()
    gtest_discover_tests(${name}
      TEST_PREFIX "${T_TEST_PREFIX}"
      DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS "${T_LABELS}" ENVIRONMENT "${fencegate_test_environment}")
  endif()
  fencegate_test_targets(LABELS ${T_LABELS} TARGETS ${name})
endfunction()

# fencegate_check_not_linked(TARGET target FORBIDDEN lib...): fails the
# configure if `target` links any of `lib`, directly or through the tree's
# own libraries, or holds the objects of one ($<TARGET_OBJECTS:lib>, as the
# installed client library does). It keeps the layering of common/
# (common/CMakeLists.txt) honest: the cores link no gRPC and no server code,
# the client library no SQLite, no server code and no test hooks.
function(fencegate_collect_links target out)
  set(seen ${${out}})
  if(NOT TARGET ${target} OR target IN_LIST seen)
    return()
  endif()
  list(APPEND seen ${target})
  get_target_property(imported ${target} IMPORTED)
  if(NOT imported)
    get_target_property(deps ${target} LINK_LIBRARIES)
    if(NOT deps)
      set(deps "")
    endif()
    get_target_property(sources ${target} SOURCES)
    foreach(source IN LISTS sources)
      if(source MATCHES "^\\$<TARGET_OBJECTS:([^>]+)>$")
        list(APPEND deps ${CMAKE_MATCH_1})
      endif()
    endforeach()
    if(deps)
      foreach(dep IN LISTS deps)
        if(NOT dep IN_LIST seen)
          if(TARGET ${dep})
            fencegate_collect_links(${dep} seen)
          else()
            list(APPEND seen ${dep})
          endif()
        endif()
      endforeach()
    endif()
  endif()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(fencegate_check_not_linked)
  cmake_parse_arguments(C "" "TARGET" "FORBIDDEN" ${ARGN})
  set(links "")
  fencegate_collect_links(${C_TARGET} links)
  foreach(forbidden IN LISTS C_FORBIDDEN)
    if(forbidden IN_LIST links)
      message(FATAL_ERROR "${C_TARGET} links ${forbidden}, which its layer forbids: "
                          "drop that link, or move what it needs into a library the "
                          "layer may link (the rules: fencegate_check_not_linked in "
                          "the top CMakeLists.txt; the layers: common/CMakeLists.txt)")
    endif()
  endforeach()
endfunction()
