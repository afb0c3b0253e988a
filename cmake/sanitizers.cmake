# FENCEGATE_SANITIZE: builds every target of this build directory with
# sanitizers (docs/fuzzing-and-sanitizers.md). One build directory per value:
#
#   (empty)             no sanitizer: the main build (./build, gcc)
#   address,undefined   ASan + UBSan: ./build-asan, runs the unit, etcd and
#                       integration tests (ctest -L 'unit|etcd|integration')
#   thread              TSan: ./build-tsan, runs the concurrency tests
#                       (ctest -L tsan); absl::Mutex is annotated for TSan
#                       by tests/sanitizers/absl_tsan_annotations.cc
#   fuzzer              libFuzzer + ASan + UBSan: ./build-fuzz, the fuzz
#                       targets of tests/fuzz (ctest -L fuzz)
#
# Sanitized builds use clang (libFuzzer exists only there; -fsanitize needs
# libclang-rt-14-dev). Every report is fatal: UBSan does not recover, and
# default options every executable carries (tests/sanitizers/) halt on the
# first report with a non-zero exit status.
set(FENCEGATE_SANITIZE "" CACHE STRING
    "Sanitizers for every target: empty, address,undefined, thread, or fuzzer")
set_property(CACHE FENCEGATE_SANITIZE PROPERTY STRINGS
             "" "address,undefined" "thread" "fuzzer")

if(FENCEGATE_SANITIZE STREQUAL "")
  return()
endif()

if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "FENCEGATE_SANITIZE needs clang: configure with "
                      "-DCMAKE_CXX_COMPILER=clang++-14 (./scripts/build --sanitize=...)")
endif()

set(fencegate_sanitizer_flags -fno-omit-frame-pointer)
if(FENCEGATE_SANITIZE STREQUAL "address,undefined")
  list(APPEND fencegate_sanitizer_flags
       -fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(FENCEGATE_SANITIZE STREQUAL "fuzzer")
  # Libraries get libFuzzer's coverage instrumentation; the fuzz targets
  # link libFuzzer itself (-fsanitize=fuzzer, tests/fuzz/CMakeLists.txt).
  list(APPEND fencegate_sanitizer_flags
       -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all)
elseif(FENCEGATE_SANITIZE STREQUAL "thread")
  list(APPEND fencegate_sanitizer_flags -fsanitize=thread)
else()
  message(FATAL_ERROR "FENCEGATE_SANITIZE='${FENCEGATE_SANITIZE}': expected "
                      "address,undefined, thread or fuzzer")
endif()
add_compile_options(${fencegate_sanitizer_flags})
add_link_options(${fencegate_sanitizer_flags})
# -O1 (what the sanitizers' docs advise) and line tables only (enough for
# symbolized reports): each sanitized build is a second build of the tree in
# CI on 2 cores, so it must compile and link fast. In the ASan and TSan
# trees test code and protoc's code take -O0 (cmake/fencegate.cmake:
# fencegate_test_code, fencegate_generated_apart).
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -gline-tables-only -DNDEBUG")

# Sanitizer reports name source lines; the runtimes find the symbolizer at
# this path (tests/sanitizers/sanitizer_options.cc bakes it in).
find_program(FENCEGATE_LLVM_SYMBOLIZER
  NAMES llvm-symbolizer-14 llvm-symbolizer
  PATHS /usr/lib/llvm-14/bin)

# Links the sanitizer support of tests/sanitizers (default options, and for
# TSan the absl annotations) into every executable defined in `dir` and
# below. Called once, after every target is defined. An executable with the
# property FENCEGATE_TSAN_UNANNOTATED gets the options only.
function(fencegate_link_sanitizer_support dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "EXECUTABLE")
      continue()
    endif()
    target_link_libraries(${target} PRIVATE fencegate_sanitizer_options)
    get_target_property(unannotated ${target} FENCEGATE_TSAN_UNANNOTATED)
    if(TARGET fencegate_tsan_absl AND NOT unannotated)
      target_link_libraries(${target} PRIVATE fencegate_tsan_absl)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    fencegate_link_sanitizer_support(${subdir})
  endforeach()
endfunction()
