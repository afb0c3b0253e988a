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
# - --systems=loop: the event-loop clients (issue 32), fencegate through
#   its C++ client library's async calls and the streaming echo (and
#   hiredis' async client where redis-server is installed), the hand-off
#   among them (the python check below).
# Runs of 250 ms after 100 ms of warm-up (half of --quick's): a point only
# has to work. It asserts that every run completes without a failed
# operation, that the servers start and stop cleanly, and that fencegate's
# runs carry their writes per commit (read from the gateway's metrics); it
# asserts nothing about speed.
add_test(NAME bench_smoke
  COMMAND bash -c "\"$0\" --quick --duration=250ms --warmup=100ms --systems=fencegate,loop --metrics-ab --store=etcd --storage=postgres --build-dir=\"$1\" --no-docs --out=\"$2\" 2>\"$2.log\"; status=$?; cat \"$2.log\"; [ $status -eq 0 ] && grep -Eq 'lock_cycle +resources=1000 +clients=32 ' \"$2.log\" && grep -q '\"fencegate-loop\"' \"$2\" && grep -q '\"gateway_items_per_commit\"' \"$2\" && grep -q '\"echo-stream\"' \"$2\" && grep -q '\"echo-cq\"' \"$2\" && python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))[\"results\"]; sys.exit(0 if any(e[\"system\"] == \"fencegate-loop\" and e[\"workload\"] == \"handoff\" for e in r) else 1)' \"$2\""
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

# The Python client's system (issue 33): ./scripts/bench --systems=python,
# its two points (lock cycles and fenced writes, 32 asyncio tasks, 1,000
# resources) with bench/python/loadgen.py against this build's lock service,
# gateway and echo server (Echo.Stream) and an appendfsync-always Redis
# (fencegate.aio, redis.asyncio, grpc.aio); then report.py renders a copy
# of docs/benchmarks.md with the "Python client" table. It asserts that
# every run completes without a failed operation, that the Python load
# generator's lines aggregate beside the C++ one's, and that the table
# comes out; nothing about speed. Needs redis-server and Debian's
# python3-redis (CI installs no Redis: then there is no such test). Debian's
# python3 first on PATH, for the script's own python3 calls too: a pyenv
# shim there takes over a second a call, half of this test's time.
find_program(FENCEGATE_SYSTEM_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
set(FENCEGATE_PY_REDIS 1)
if(FENCEGATE_SYSTEM_PYTHON3)
  execute_process(COMMAND ${FENCEGATE_SYSTEM_PYTHON3} -c "import redis.asyncio, grpc.aio"
    RESULT_VARIABLE FENCEGATE_PY_REDIS OUTPUT_QUIET ERROR_QUIET)
endif()
if(FENCEGATE_REDIS_SERVER AND FENCEGATE_PY_REDIS EQUAL 0 AND FENCEGATE_PYTHON_STUBS_DIR)
  add_test(NAME bench_smoke_python
    COMMAND bash -c "set -e; export PATH=/usr/bin:$PATH; \"$0/scripts/bench\" --quick --duration=250ms --warmup=100ms --systems=python --build-dir=\"$1\" --no-docs --out=\"$2.json\"; cp \"$0/docs/benchmarks.md\" \"$2.md\"; python3 \"$0/bench/report.py\" render --results=\"$2.json\" --markdown=\"$2.md\" --svg=\"$2.svg\"; for s in 'python-fencegate (fencegate.aio)' 'python-redis (redis.asyncio, Redis always)' 'python-echo (grpc.aio stream, echo server)'; do grep -qF \"| $s | \" \"$2.md\"; done; grep -q '^| fenced write: python-fencegate / python-redis (ops/s) | [0-9]' \"$2.md\""
      ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke_python)
  set_tests_properties(bench_smoke_python PROPERTIES LABELS bench TIMEOUT 120 PROCESSORS 2)
else()
  message(STATUS "No bench_smoke_python: it needs redis-server and /usr/bin/python3 with "
    "redis.asyncio and grpc.aio (apt-get install redis-server python3-redis python3-grpcio), "
    "and the Python client's stubs")
endif()
