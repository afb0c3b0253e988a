# Random operation sequences against both cores with crash-and-reopen
# (docs/sequences-and-bad-input.md): for each core a reference model and a runner that
# drives the real core and the model with the same seeded steps and compares
# them after every step. The runners hold no tests; each binary below links
# them with the cores it checks.
#
# The fence core's model is a library of its own: the gateway fuzz target
# (tests/fuzz/) judges the core by it too. Objects, so each binary links
# them with the build of the core it checks.
add_library(fencegate_fence_model OBJECT unit/fence_model.cc)
target_link_libraries(fencegate_fence_model PRIVATE fencegate_gatewaycore)  # headers only

add_library(fencegate_sequence_runners OBJECT
  unit/fence_sequence.cc
  unit/lock_model.cc
  unit/lock_sequence.cc)
target_link_libraries(fencegate_sequence_runners PRIVATE  # headers only
  fencegate_lockcore fencegate_gatewaycore fencegate_testing GTest::gmock)

# 10,000 sequences over the production cores, in ten shards (label
# sequence), and the plan's own tests (label unit). The shards are CPU
# work, most of it the cores' own: ./scripts/test runs all 10,000 in the
# main tree (-O2, about 3.5 s of CPU a shard) and the first 2,000 again in
# the ASan tree (FENCEGATE_SEQUENCES below), where a shard of 1,000 took
# 28 s, so that the same paths still run under ASan and UBSan.
add_executable(sequence_tests unit/random_sequences_test.cc
  $<TARGET_OBJECTS:fencegate_sequence_runners> $<TARGET_OBJECTS:fencegate_fence_model>)
target_link_libraries(sequence_tests PRIVATE fencegate_lockcore fencegate_gatewaycore
  fencegate_testing GTest::gmock GTest::gtest_main)
fencegate_test_code(sequence_tests)
set(fencegate_sequence_shard_count 5)  # per core
target_compile_definitions(sequence_tests PRIVATE
  FENCEGATE_SEQUENCE_SHARDS=${fencegate_sequence_shard_count})
set(fencegate_sequence_shards "*Sequences.MatchTheModelAcrossCrashes/*")
gtest_discover_tests(sequence_tests
  TEST_PREFIX "sequence."
  TEST_FILTER "-${fencegate_sequence_shards}"
  DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS unit)
# The shards by name, not discovered: ./scripts/test reads the labels at
# configure time, before any test binary is built, and would not see the
# label of a discovered test there.
if(FENCEGATE_SANITIZE)
  # 1,000 of each core's 5,000, 200 a shard.
  set(fencegate_sequence_properties LABELS sequence ENVIRONMENT FENCEGATE_SEQUENCES=1000)
else()
  # A shard keeps a core busy (the main tier runs two ctest jobs per core).
  set(fencegate_sequence_properties LABELS sequence PROCESSORS 2)
endif()
math(EXPR fencegate_last_shard "${fencegate_sequence_shard_count} - 1")
foreach(core Lock Fence)
  foreach(shard RANGE ${fencegate_last_shard})
    set(test "Shards/${core}Sequences.MatchTheModelAcrossCrashes/${shard}")
    add_test(NAME sequence.${test} COMMAND sequence_tests --gtest_filter=${test})
    set_tests_properties(sequence.${test} PROPERTIES ${fencegate_sequence_properties})
  endforeach()
endforeach()
fencegate_test_targets(LABELS unit sequence TARGETS sequence_tests)

# The checks must be able to fail: the same runners over the cores' test
# builds (tests/torture/), once per planted bug that a sequence of core calls
# can meet; each test passes only if a sequence reports a violation.
add_executable(sequence_planted_bug_tests
  unit/planted_bug_sequences_test.cc $<TARGET_OBJECTS:fencegate_sequence_runners>
  $<TARGET_OBJECTS:fencegate_fence_model>)
target_link_libraries(sequence_planted_bug_tests PRIVATE
  fencegate_lockcore-torture fencegate_gatewaycore-torture fencegate_testing
  GTest::gtest absl::flags_parse)
fencegate_test_code(sequence_planted_bug_tests)
foreach(bug lock_leases_forgotten_on_restart lock_token_replied_before_commit
    lock_shared_beside_exclusive lock_permit_past_n)
  add_test(NAME sequence.planted_bug.${bug}
    COMMAND sequence_planted_bug_tests --planted_bug=${bug}
      --gtest_filter=PlantedBug.LockSequencesCatchIt)
  set_tests_properties(sequence.planted_bug.${bug} PROPERTIES LABELS unit TIMEOUT 300)
endforeach()
fencegate_test_targets(LABELS unit TARGETS sequence_planted_bug_tests)
foreach(bug gateway_accepts_max_minus_one gateway_fence_only_in_memory
    gateway_fence_check_separate_transaction gateway_fenced_read_no_raise
    gateway_fence_cache_trusted)
  add_test(NAME sequence.planted_bug.${bug}
    COMMAND sequence_planted_bug_tests --planted_bug=${bug}
      --gtest_filter=PlantedBug.FenceSequencesCatchIt)
  set_tests_properties(sequence.planted_bug.${bug} PROPERTIES LABELS unit TIMEOUT 300)
endforeach()
