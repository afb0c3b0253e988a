# The gateway: fenced storage (see ../shared/DESIGN.md, "Gateway semantics").

# The core on a real SQLite file: semantics, group commit, bad input.
fencegate_cc_test(gateway_unit_tests
  SOURCES
    unit/gateway_fenced_store_test.cc
    unit/gateway_group_commit_test.cc
    unit/gateway_validation_test.cc
  DEPS fencegate_gatewaycore
  LABELS unit
  TEST_PREFIX "gateway.")

# The real fencegate-gateway binary: the wire, concurrency, kill -9.
fencegate_cc_test(gateway_integration_tests
  SOURCES
    integration/gateway_api_test.cc
    integration/gateway_durability_test.cc
  DEPS fencegate_grpc_common
  LABELS integration
  TEST_PREFIX "gateway.")
target_compile_definitions(gateway_integration_tests PRIVATE
  FENCEGATE_GATEWAY_BIN="$<TARGET_FILE:fencegate-gateway>")
add_dependencies(gateway_integration_tests fencegate-gateway)
