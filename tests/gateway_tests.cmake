# The gateway: fenced storage (see ../shared/DESIGN.md, "Gateway semantics").

# The core on a real SQLite file: semantics, group commit, bad input.
fencegate_cc_test(gateway_unit_tests
  SOURCES
    unit/gateway_fenced_store_test.cc
    unit/gateway_group_commit_test.cc
    unit/gateway_validation_test.cc
  DEPS fencegate_gatewaycore
  LABELS unit)
