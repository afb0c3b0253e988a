# fencegate_cc_test(NAME SOURCES ... DEPS ... [LABELS ...] [TEST_PREFIX p])
# One gtest binary per area: linking gRPC is slow on 2 cores, so keep them few.
# TEST_PREFIX is put before every discovered test name, so that
# `ctest -R <prefix>` selects an area (e.g. "gateway.").
function(fencegate_cc_test name)
  cmake_parse_arguments(T "" "TEST_PREFIX" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_DEPS} fencegate_testing GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name}
    TEST_PREFIX "${T_TEST_PREFIX}"
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${T_LABELS}")
endfunction()
