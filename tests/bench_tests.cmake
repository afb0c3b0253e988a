# The benchmark's smoke test: ./scripts/bench --quick against fencegate only,
# with this build's binaries (no install, no build, docs untouched). It
# asserts that every run completes without a failed operation and that the
# servers start and stop cleanly; it asserts nothing about speed.
add_test(NAME bench_smoke
  COMMAND ${CMAKE_SOURCE_DIR}/scripts/bench --quick --systems=fencegate
          --build-dir=${CMAKE_BINARY_DIR} --no-docs
          --out=${CMAKE_CURRENT_BINARY_DIR}/bench_smoke.json)
set_tests_properties(bench_smoke PROPERTIES LABELS bench TIMEOUT 180)
