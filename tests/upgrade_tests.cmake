# Upgrades (docs/upgrades.md): every store opens the state fencegate 0.1.0
# left (tests/upgrade/*-0.1.0.*, made by hand with make_fixtures.sh from
# 0.1.0's binaries; nothing here builds the old release), migrates it once
# and refuses a newer format, as do the real server binaries at start. The
# lock service's stores on SQLite and on a single-member etcd the test
# process starts (label etcd), the gateway's on SQLite and on a PostgreSQL
# server it starts (label unit). `ctest -R upgrade` runs them.
fencegate_cc_test(upgrade_tests
  SOURCES
    unit/store_under_test.cc
    upgrade/gateway_storage_upgrade_test.cc
    upgrade/lock_store_upgrade_test.cc
    upgrade/server_start_upgrade_test.cc
    upgrade/upgrade_fixtures.cc
  DEPS fencegate_lockcore fencegate_etcd_lockstore fencegate_etcd_testing
    fencegate_gatewaycore fencegate_gateway_postgres fencegate_postgres_harness
  LABELS unit
  TEST_PREFIX "upgrade."
  ETCD_TESTS "EtcdLockStoreUpgradeTest.*:ServerStartUpgradeTest.*Etcd*")
target_compile_definitions(upgrade_tests PRIVATE
  FENCEGATE_UPGRADE_FIXTURES_DIR="${CMAKE_CURRENT_SOURCE_DIR}/upgrade"
  FENCEGATE_LOCKSERVICE_BIN="$<TARGET_FILE:fencegate-lockservice>"
  FENCEGATE_GATEWAY_BIN="$<TARGET_FILE:fencegate-gateway>")
add_dependencies(upgrade_tests fencegate-lockservice fencegate-gateway)
fencegate_test_targets(LABELS unit etcd TARGETS fencegate-lockservice fencegate-gateway)
