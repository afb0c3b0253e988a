# fencegate_cc_test(NAME SOURCES ... DEPS ... [LABELS ...])
# One gtest binary per area: linking gRPC is slow on 2 cores, so keep them few.
function(fencegate_cc_test name)
  cmake_parse_arguments(T "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_DEPS} fencegate_testing GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${T_LABELS}")
endfunction()
