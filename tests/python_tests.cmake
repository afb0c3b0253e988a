# The Python client (label python): clients/python/tests, pytest against the
# real fencegate-lockservice and fencegate-gateway of this build. The tests
# generate the client's gRPC stubs into a temporary directory themselves
# (clients/python/generate_stubs.py: protoc and grpc_python_plugin), so
# nothing is written into the source tree.
#
# Declared only when Debian's Python 3 has what the tests import (packages
# python3-grpcio, python3-protobuf, python3-pytest; protobuf-compiler-grpc
# for the stubs), checked at configure time; otherwise a message says why
# the label is empty. Its PostgreSQL tests (run_fenced) also need Debian's
# postgresql and python3-psycopg, and skip themselves without them. Not in
# the sanitized trees: the tests measure
# latencies (a pushed loss within 200 ms) that a sanitized server need not
# meet, and the servers are exercised there by the C++ suites.
if(FENCEGATE_SANITIZE)
  return()
endif()

# Debian's python3 and grpc_python_plugin, as clients/python/CMakeLists.txt
# found them for the stubs of the package.
set(fencegate_python /usr/bin/python3)
execute_process(
  COMMAND ${fencegate_python} -c "import grpc, google.protobuf, pytest"
  RESULT_VARIABLE fencegate_python_missing
  OUTPUT_QUIET ERROR_QUIET)
if(NOT fencegate_python_missing EQUAL 0 OR NOT FENCEGATE_GRPC_PYTHON_PLUGIN)
  message(STATUS "Python client tests (label python) skipped: they need "
    "${fencegate_python} with grpc, google.protobuf and pytest, and grpc_python_plugin "
    "(apt-get install python3-grpcio python3-protobuf python3-pytest protobuf-compiler-grpc)")
  return()
endif()

add_test(NAME python.client
  COMMAND ${fencegate_python} -m pytest -q -p no:cacheprovider
    --ignore=${PROJECT_SOURCE_DIR}/clients/python/tests/test_scenarios.py
    ${PROJECT_SOURCE_DIR}/clients/python/tests)
set_tests_properties(python.client PROPERTIES
  LABELS python
  # About 40 s on a quiet 2-core machine (test_quickstart.py: 9 s of it).
  TIMEOUT 180
  ENVIRONMENT
    "FENCEGATE_LOCKSERVICE_BIN=$<TARGET_FILE:fencegate-lockservice>;FENCEGATE_GATEWAY_BIN=$<TARGET_FILE:fencegate-gateway>")

# The scenarios both clients play (tests/scenarios/client_scenarios.json;
# the C++ client's runner is in e2e_tests): an entry of their own, so that
# `ctest -R scenario` runs both sides, and left out of python.client above.
add_test(NAME python.scenarios
  COMMAND ${fencegate_python} -m pytest -q -p no:cacheprovider
    ${PROJECT_SOURCE_DIR}/clients/python/tests/test_scenarios.py)
set_tests_properties(python.scenarios PROPERTIES
  LABELS python
  # About 5 s.
  TIMEOUT 120
  ENVIRONMENT
    "FENCEGATE_LOCKSERVICE_BIN=$<TARGET_FILE:fencegate-lockservice>;FENCEGATE_GATEWAY_BIN=$<TARGET_FILE:fencegate-gateway>")

# The tests must be able to fail: one entry per planted bug of
# clients/python/tests/planted_bugs.py, which copies the package to a
# temporary directory, plants the bug there (never in the tree) and passes
# only if the bug applied and the tests that must catch it failed against
# the copy. The names come from the script (--list), so a bug added there
# gets its entry at the next configure. 2 to 10 s each, about a minute for all twelve
# one after another on 2 cores busy with a C++ build.
set(fencegate_planted_bugs ${PROJECT_SOURCE_DIR}/clients/python/tests/planted_bugs.py)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${fencegate_planted_bugs})
execute_process(
  COMMAND ${fencegate_python} ${fencegate_planted_bugs} --list
  OUTPUT_VARIABLE fencegate_python_bugs
  RESULT_VARIABLE fencegate_python_bugs_failed
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT fencegate_python_bugs_failed EQUAL 0 OR fencegate_python_bugs STREQUAL "")
  message(FATAL_ERROR "${fencegate_planted_bugs} --list failed: ${fencegate_python_bugs}")
endif()
string(REPLACE "\n" ";" fencegate_python_bugs "${fencegate_python_bugs}")
foreach(bug IN LISTS fencegate_python_bugs)
  add_test(NAME python.planted_bug.${bug}
    COMMAND ${fencegate_python} ${fencegate_planted_bugs} ${bug})
  set_tests_properties(python.planted_bug.${bug} PROPERTIES
    LABELS python
    TIMEOUT 120
    ENVIRONMENT
      "FENCEGATE_LOCKSERVICE_BIN=$<TARGET_FILE:fencegate-lockservice>;FENCEGATE_GATEWAY_BIN=$<TARGET_FILE:fencegate-gateway>")
endforeach()

fencegate_test_targets(LABELS python TARGETS fencegate-lockservice fencegate-gateway)
