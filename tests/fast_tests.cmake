# The fast tier (label fast; ./scripts/test --fast): while editing, the core
# semantics of both servers without any external process (no etcd, no
# PostgreSQL, no Chromium, no network namespace), each test binary in one
# process: the lock manager and its SQLite store, the fence core on SQLite,
# the Session streams' cores, the client library against in-process
# servers, the torture's history checker, the metrics module, and the
# random sequences at a tenth of their count. Its entries run tests that
# the other labels run too (one per process there), so ./scripts/test
# without --fast leaves the label out (ctest -LE fast).
if(FENCEGATE_SANITIZE)
  return()
endif()
function(fencegate_fast_test name binary filter)
  add_test(NAME fast.${name} COMMAND ${binary} --gtest_filter=${filter} --gtest_brief=1)
  set_tests_properties(fast.${name} PROPERTIES LABELS fast TIMEOUT 300)
  fencegate_test_targets(LABELS fast TARGETS ${binary})
endfunction()
fencegate_fast_test(lockservice_core lockservice_unit_tests
  "-*/Etcd:EtcdLockStoreTest.*:LeaderElectionTest.*")
fencegate_fast_test(gateway_core gateway_unit_tests "-*/Postgres:Postgres*")
fencegate_fast_test(client client_tests "*")
fencegate_fast_test(monotonic_waits monotonic_wait_tests "*")
fencegate_fast_test(history_checker torture_unit_tests "*")
fencegate_fast_test(metrics metrics_unit_tests "*")
fencegate_fast_test(sequences sequence_tests "*")
# A tenth of the 10,000 sequences (random_sequences_test.cc).
set_tests_properties(fast.sequences PROPERTIES ENVIRONMENT "FENCEGATE_SEQUENCES=1000")
