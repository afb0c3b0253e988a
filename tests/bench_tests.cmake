# The benchmark's smoke test: ./scripts/bench --quick against fencegate only,
# with this build's binaries (no install, no build, docs untouched), every
# variant of the fencegate instances in one run, so that the default pair's
# 35 points run once, not once per variant:
# - the default pair (SQLite lock service and gateway, unary and Session);
# - --metrics-ab: the pair with metrics off starts beside it, the scraper
#   runs, and the A/B comparison is printed (the grep below);
# - --store etcd: the lock service on an etcd of its own, and its standby,
#   serve the lock workloads;
# - --storage postgres: PostgreSQL starts from Debian's binaries, the
#   gateway on it and the SQL fencing API's writes (fenced and unfenced,
#   installed by the CLI's sql-install) serve the write workloads.
# Runs of 250 ms after 100 ms of warm-up (half of --quick's): a point only
# has to work. It asserts that every run completes without a failed
# operation and that the servers start and stop cleanly; it asserts nothing
# about speed.
add_test(NAME bench_smoke
  COMMAND bash -c "\"$0\" --quick --duration=250ms --warmup=100ms --systems=fencegate --metrics-ab --store=etcd --storage=postgres --build-dir=\"$1\" --no-docs --out=\"$2\" 2>\"$2.log\"; status=$?; cat \"$2.log\"; [ $status -eq 0 ] && grep -Eq 'lock_cycle +resources=1000 +clients=32 ' \"$2.log\""
    ${CMAKE_SOURCE_DIR}/scripts/bench ${CMAKE_BINARY_DIR}
    ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke.json)
# PROCESSORS 2: every bench smoke keeps a core busy or more (scripts/test
# runs the main tier at two ctest jobs per core).
set_tests_properties(bench_smoke PROPERTIES LABELS bench TIMEOUT 480 PROCESSORS 2 COST 900)

# The kinds of lock (issue 21): shared_cycle, rw_mix and multi_cycle
# (./scripts/bench --workloads=...) against the peers' recipes: etcd's
# RWMutex and sorted Mutexes, and Redisson's read-write lock and MultiLock
# where this build has the Redis driver (hiredis) and redis-server is
# installed (CI installs no Redis). It asserts that every run completes
# without a failed operation, the clients' check of readers/writers
# exclusion included; nothing about speed. (bench_smoke runs these points
# against fencegate, with the others.)
find_library(HIREDIS_LIBRARY hiredis)  # the same as bench/'s, found first here
find_program(FENCEGATE_REDIS_SERVER redis-server)
set(FENCEGATE_KINDS_PEERS etcd)
if(HIREDIS_LIBRARY AND FENCEGATE_REDIS_SERVER)
  string(APPEND FENCEGATE_KINDS_PEERS ",redis")
endif()
add_test(NAME bench_smoke_kinds
  COMMAND ${CMAKE_SOURCE_DIR}/scripts/bench --quick --duration=250ms --warmup=100ms --systems=${FENCEGATE_KINDS_PEERS}
          --workloads=shared_cycle,rw_mix,multi_cycle --build-dir=${CMAKE_BINARY_DIR}
          --no-docs --out=${CMAKE_CURRENT_BINARY_DIR}/bench_smoke_kinds.json)
set_tests_properties(bench_smoke_kinds PROPERTIES LABELS bench TIMEOUT 180 PROCESSORS 2)

fencegate_test_targets(LABELS bench TARGETS
  fencegate-loadgen fencegate-echo-server fencegate-lockservice fencegate-gateway fencegate)
# --scale (bench/scale.py), every part at 2,000 items, without the Redis
# anchor (CI installs no Redis): leases held by the loadgen's hold workload
# on a fresh lock service, its memory read, kill -9 and a restart on the
# same store, lock cycles with the leases held; 2,000 waiters parked (hot and
# spread) and counted on the service's waiters gauge; a gateway filled with
# 2,000 resources, restarted, fenced writes on it; the lock service on an
# etcd of its own (as bench_smoke's --store etcd). Then report.py render-scale puts
# the results into a copy of docs/benchmarks.md and draws the chart. It
# asserts that each step works, that leases and waiters cost some memory,
# and that the section and the chart come out; nothing about how much.
add_test(NAME bench_smoke_scale
  COMMAND bash -c "set -e; \"$0/scripts/bench\" --scale --scale-sizes=2000 --systems=fencegate --store=etcd --duration=500ms --warmup=100ms --build-dir=\"$1\" --no-docs --out=\"$2.json\"; cp \"$0/docs/benchmarks.md\" \"$2.md\"; python3 \"$0/bench/report.py\" render-scale --results=\"$2.json\" --markdown=\"$2.md\" --svg=\"$2.svg\"; grep -q '^| 2,000 | hot (1 resource) | ' \"$2.md\"; grep -q '^### The gateway on SQLite' \"$2.md\"; grep -q '^### Held leases, lock service on etcd' \"$2.md\"; grep -q '<polyline' \"$2.svg\""
    ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke_scale)
set_tests_properties(bench_smoke_scale PROPERTIES LABELS bench TIMEOUT 240 PROCESSORS 2)
