# The gateway: fenced storage (see ../shared/DESIGN.md, "Gateway semantics").

# The core on each storage backend (a SQLite file; a PostgreSQL server
# started by the test): semantics, group commit, bad input, and what only
# PostgreSQL has (several gateways on one database, lost connections).
fencegate_cc_test(gateway_unit_tests
  SOURCES
    unit/gateway_fence_cache_test.cc
    unit/gateway_fenced_store_test.cc
    unit/gateway_group_commit_test.cc
    unit/gateway_metrics_test.cc
    unit/gateway_postgres_setup_test.cc
    unit/gateway_postgres_test.cc
    unit/gateway_session_test.cc
    unit/gateway_test_backends.cc
    unit/gateway_validation_test.cc
    unit/group_commit_queue_test.cc
    unit/session_harness.cc
  DEPS fencegate_gatewaycore fencegate_gateway_postgres fencegate_postgres_harness
    fencegate_stream_harness
  LABELS unit
  TEST_PREFIX "gateway.")

# The real fencegate-gateway binary: the wire, concurrency, kill -9; and two
# of them on one PostgreSQL server started by the test.
fencegate_cc_test(gateway_integration_tests
  SOURCES
    integration/gateway_api_test.cc
    integration/gateway_durability_test.cc
    integration/gateway_postgres_durability_test.cc
    integration/gateway_postgres_test.cc
  DEPS fencegate_grpc_common fencegate_postgres_harness
  LABELS integration
  TEST_PREFIX "gateway.")
target_compile_definitions(gateway_integration_tests PRIVATE
  FENCEGATE_GATEWAY_BIN="$<TARGET_FILE:fencegate-gateway>")
add_dependencies(gateway_integration_tests fencegate-gateway)

# The SQL fencing API (docs/sql-fencing.md) on a PostgreSQL server started by
# the test: installed by the real CLI, on a user's own table, shared with a
# real gateway, signed tokens, bad input, every interleaving of two
# holders' transactions at each isolation level, the client library's
# RunFenced, and examples/orders.
fencegate_cc_test(sql_fencing_tests
  SOURCES
    integration/sql_fencing_client_test.cc
    integration/sql_fencing_example_test.cc
    integration/sql_fencing_race_test.cc
    integration/sql_fencing_test.cc
  DEPS fencegate_client fencegate_grpc_common fencegate_common fencegate_sql_api
    fencegate_postgres_harness
  LABELS integration
  TEST_PREFIX "sql.")
target_compile_definitions(sql_fencing_tests PRIVATE
  FENCEGATE_GATEWAY_BIN="$<TARGET_FILE:fencegate-gateway>"
  FENCEGATE_LOCKSERVICE_BIN="$<TARGET_FILE:fencegate-lockservice>"
  FENCEGATE_ORDERS_BIN="$<TARGET_FILE:fencegate-orders>"
  FENCEGATE_CLI_BIN="$<TARGET_FILE:fencegate>")
add_dependencies(sql_fencing_tests fencegate-gateway fencegate-lockservice fencegate-orders
  fencegate)
