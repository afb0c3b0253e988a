# Disk faults below SQLite (docs/operations.md, "Disk faults"): an
# LD_PRELOAD library of our own fails the writes and fsyncs of chosen
# database files and records what a power cut takes back (tests/disk/).
# Label e2e (real servers, as the e2e tests): the main tier runs them, not
# the sanitized tiers, whose runtimes would have to be preloaded first. (A
# label of their own would not be seen: ./scripts/test picks the main
# tier's labels before the gtest binaries list their tests.) `ctest -R
# disk` runs them.
add_library(fencegate_disk_faults MODULE disk/disk_faults_preload.cc)
target_include_directories(fencegate_disk_faults PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(fencegate_disk_faults PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)

add_library(fencegate_disk_testing disk/power_cut.cc)
target_link_libraries(fencegate_disk_testing PUBLIC
  absl::status absl::statusor absl::strings)
target_include_directories(fencegate_disk_testing PUBLIC ${PROJECT_SOURCE_DIR})
target_compile_definitions(fencegate_disk_testing PRIVATE
  FENCEGATE_DISK_FAULTS_PRELOAD="$<TARGET_FILE:fencegate_disk_faults>")
add_dependencies(fencegate_disk_testing fencegate_disk_faults)

add_executable(fencegate_disk_probe disk/disk_probe.cc)

fencegate_cc_test(disk_tests
  SOURCES disk/disk_preload_test.cc disk/disk_server_test.cc
  DEPS fencegate_disk_testing fencegate_grpc_common
  LABELS e2e
  TEST_PREFIX "disk.")
target_compile_definitions(disk_tests PRIVATE
  FENCEGATE_DISK_PROBE="$<TARGET_FILE:fencegate_disk_probe>"
  FENCEGATE_GATEWAY_BIN="$<TARGET_FILE:fencegate-gateway>"
  FENCEGATE_LOCKSERVICE_BIN="$<TARGET_FILE:fencegate-lockservice>"
  FENCEGATE_GATEWAY_TORTURE_BIN="$<TARGET_FILE:fencegate-gateway-torture>"
  FENCEGATE_LOCKSERVICE_TORTURE_BIN="$<TARGET_FILE:fencegate-lockservice-torture>")
add_dependencies(disk_tests fencegate_disk_probe fencegate-gateway fencegate-lockservice
  fencegate-gateway-torture fencegate-lockservice-torture)
fencegate_test_targets(LABELS e2e TARGETS fencegate_disk_probe fencegate-gateway
  fencegate-lockservice fencegate-gateway-torture fencegate-lockservice-torture)
