# End-to-end tests (label e2e): the real server binaries, real client
# processes (fencegate-demo-client, the fencegate CLI), real ports, temp
# dirs. One binary: linking gRPC is slow on 2 cores.
add_executable(e2e_tests
  e2e/cli_elect_test.cc
  e2e/cli_run_test.cc
  e2e/cli_test.cc
  e2e/client_outage_test.cc
  e2e/client_reconnect_test.cc
  e2e/client_scenarios_test.cc
  e2e/e2e_fixture.cc
  e2e/fencing_scenarios_test.cc
  e2e/grant_time_fencing_test.cc
  e2e/lease_loss_test.cc
  e2e/lock_semantics_test.cc
  e2e/prometheus_test.cc
  e2e/scenario_file.cc
  e2e/signed_tokens_test.cc
  e2e/status_page_browser_test.cc
  e2e/tls_test.cc)
target_link_libraries(e2e_tests PRIVATE
  fencegate_demo_harness fencegate_client fencegate_testing fencegate_testing_http
  GTest::gmock GTest::gtest_main)
fencegate_test_code(e2e_tests)
target_compile_definitions(e2e_tests PRIVATE
  # prometheus_test.cc loads the alert rules; status_page_browser_test.cc
  # keeps its screenshots under the build tree.
  FENCEGATE_ALERTS_YML="${CMAKE_SOURCE_DIR}/docs/alerts.yml"
  FENCEGATE_BUILD_DIR="${CMAKE_BINARY_DIR}"
  FENCEGATE_LOCKSERVICE_BIN="$<TARGET_FILE:fencegate-lockservice>"
  FENCEGATE_GATEWAY_BIN="$<TARGET_FILE:fencegate-gateway>"
  FENCEGATE_CLI_BIN="$<TARGET_FILE:fencegate>"
  FENCEGATE_DEMO_CLIENT_BIN="$<TARGET_FILE:fencegate-demo-client>"
  # client_scenarios_test.cc plays the scenarios the Python client's
  # tests play too (clients/python/tests/test_scenarios.py).
  FENCEGATE_CLIENT_SCENARIOS_JSON="${CMAKE_SOURCE_DIR}/tests/scenarios/client_scenarios.json")
# Compiled alone: their anonymous namespaces have short, common names.
set_source_files_properties(e2e/client_scenarios_test.cc e2e/scenario_file.cc
  e2e/cli_run_test.cc e2e/cli_elect_test.cc PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
add_dependencies(e2e_tests
  fencegate-lockservice fencegate-gateway fencegate fencegate-demo-client)
gtest_discover_tests(e2e_tests
  DISCOVERY_TIMEOUT 60
  TEST_FILTER "-scenarios/*"
  PROPERTIES LABELS e2e TIMEOUT 120)
# The client scenarios (client_scenarios_test.cc; a gtest per scenario of
# tests/scenarios/client_scenarios.json, named after it) in one process:
# its servers start once (about 1 s) instead of once per scenario (20 s of
# test time for 18). The file is read when the binary runs, so a scenario
# added to it runs without a rebuild.
add_test(NAME e2e.client_scenarios
  COMMAND e2e_tests --gtest_filter=scenarios/*)
set_tests_properties(e2e.client_scenarios PROPERTIES LABELS e2e TIMEOUT 120)
fencegate_test_targets(LABELS e2e TARGETS e2e_tests fencegate-demo)

# The demo (what ./scripts/demo runs after building) must come out as
# expected: its exit status is the assertion, and it must write the diagram.
# The binary is run directly, with the arguments the script passes through,
# so the test never rebuilds or reconfigures the tree it runs from.
# It also says where the status pages were and what the gateway's
# stale-write counter read at the end (the acts' refused writes), and act 4
# (a PostgreSQL table fenced in SQL) was played, not skipped: CI has
# Debian's PostgreSQL.
add_test(NAME demo_plays_every_act
  COMMAND bash -c "mkdir -p \"$(dirname \"$1\")\" && \"$0\" --out=\"$1\" --color=false >\"$1.txt\" && grep -q '</svg>' \"$1\" && grep -q 'Status pages were at: lock service http://127.0.0.1:[0-9]*/' \"$1.txt\" && grep -q 'rpc=\"write\"} = [1-9]' \"$1.txt\" && grep -q 'as expected  Act 4: GC pause, fenced in your own PostgreSQL table' \"$1.txt\" || { cat \"$1.txt\"; exit 1; }"
    $<TARGET_FILE:fencegate-demo> ${CMAKE_CURRENT_BINARY_DIR}/demo/fencegate-demo.svg)
set_tests_properties(demo_plays_every_act PROPERTIES LABELS e2e TIMEOUT 180)
# The same demo over mutual TLS, with certificates made for the run.
add_test(NAME demo_over_mutual_tls
  COMMAND $<TARGET_FILE:fencegate-demo> --tls --color=false
    --out=${CMAKE_CURRENT_BINARY_DIR}/demo/fencegate-demo-tls.svg)
set_tests_properties(demo_over_mutual_tls PROPERTIES LABELS e2e TIMEOUT 180)
# scripts/demo itself: valid bash that execs that same binary.
add_test(NAME demo_script_runs_the_demo_binary
  COMMAND bash -c "bash -n \"$0\" && grep -q 'exec ./build/examples/demo/fencegate-demo \"\\$@\"' \"$0\""
    ${CMAKE_SOURCE_DIR}/scripts/demo)
set_tests_properties(demo_script_runs_the_demo_binary PROPERTIES LABELS e2e TIMEOUT 30)

# examples/leader (issue 35): three replicas under `fencegate run --elect`
# writing heartbeats fenced by their term in a private PostgreSQL; the
# leader frozen past its TTL, its late write refused, its run exiting 7.
# The script's exit status is the assertion; 77 (skipped) without
# PostgreSQL. About 10 s.
add_test(NAME e2e.leader_example
  COMMAND ${CMAKE_SOURCE_DIR}/examples/leader/run
    --lockservice-bin=$<TARGET_FILE:fencegate-lockservice> --cli-bin=$<TARGET_FILE:fencegate>)
set_tests_properties(e2e.leader_example PROPERTIES
  LABELS e2e TIMEOUT 90 SKIP_RETURN_CODE 77)

# Authorization by policy (--policy) with both real servers over mutual
# TLS: every permission allowed and refused, unary and on the Session
# streams, SIGHUP reloads, refused starts. A binary of its own, named so
# that `ctest -R policy` runs it with the policy's unit tests.
fencegate_cc_test(policy_e2e_tests
  SOURCES e2e/policy_election_test.cc e2e/policy_matrix_test.cc
  DEPS fencegate_demo_harness fencegate_grpc_base fencegate_testing_http
  LABELS e2e
  TEST_PREFIX "policy.")
target_compile_definitions(policy_e2e_tests PRIVATE
  FENCEGATE_LOCKSERVICE_BIN="$<TARGET_FILE:fencegate-lockservice>"
  FENCEGATE_GATEWAY_BIN="$<TARGET_FILE:fencegate-gateway>")
add_dependencies(policy_e2e_tests fencegate-lockservice fencegate-gateway)
