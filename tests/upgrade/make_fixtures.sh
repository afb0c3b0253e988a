#!/usr/bin/env bash
# Makes the 0.1.0 state fixtures of tests/upgrade/ with fencegate 0.1.0's own
# binaries (commit 809a75a, whose state is "the 0.1.0 format", format 1 of
# every store: docs/upgrades.md). Run by hand, once, when a fixture has to
# be made again; nothing in CI runs it or builds the old release: the
# upgrade tests read the committed files.
#
#   tests/upgrade/make_fixtures.sh OLD_BUILD_DIR
#
# OLD_BUILD_DIR is a build tree of 809a75a with its servers and CLI built:
#   git worktree add /tmp/fencegate-0.1.0 809a75a
#   cmake -S /tmp/fencegate-0.1.0 -B /tmp/fencegate-0.1.0/build -G Ninja \
#     -DFENCEGATE_BUILD_TESTS=OFF
#   ninja -C /tmp/fencegate-0.1.0/build -j2 fencegate-lockservice fencegate-gateway fencegate
#   tests/upgrade/make_fixtures.sh /tmp/fencegate-0.1.0/build
#   git worktree remove /tmp/fencegate-0.1.0
# It needs sqlite3, etcd and etcdctl, PostgreSQL 15 (Debian's binaries:
# initdb, postgres, pg_dump, psql) and python3. As root, PostgreSQL runs as
# the user postgres, as the tests' harness does.
#
# It drives the old servers with the old CLI, stops them with SIGKILL (a
# crash: parked Acquires stay persisted) and writes, over the old files:
#   lockservice-sqlite-0.1.0.sql  `sqlite3 .dump` of the lock service's file
#   lockservice-etcd-0.1.0.txt    the lock service's keys in etcd, one per
#                                 line: the key after the prefix, a space,
#                                 the value in base64 (the leader key left out)
#   gateway-sqlite-0.1.0.sql      `sqlite3 .dump` of the gateway's file
#   gateway-postgres-0.1.0.sql    `pg_dump --column-inserts` of the gateway's
#                                 schema, its names unqualified, so a test
#                                 loads it into a schema of its own
# The same calls in the same order on both lock stores give the same
# tokens; tests/upgrade/*_test.cc expect exactly what lock_calls and
# gateway_calls below do.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
old="$(cd "${1:?usage: $0 OLD_BUILD_DIR}" && pwd)"
lockservice="$old/lockservice/fencegate-lockservice"
gateway="$old/gateway/fencegate-gateway"
cli="$old/cli/fencegate"
for binary in "$lockservice" "$gateway" "$cli"; do
  [ -x "$binary" ] || { echo "$0: $binary is not built" >&2; exit 2; }
done
"$lockservice" --version

work="$(mktemp -d)"
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Polls `$@` every 100 ms until it succeeds, for at most $1 seconds.
wait_until() {
  local seconds="$1" what="$2"
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then echo "$0: timed out waiting for $what" >&2; exit 1; fi
    sleep 0.1
  done
}

# Starts an old server in the background; its port lands in $work/$1.port.
start_server() {
  local name="$1"
  shift
  "$@" --listen=127.0.0.1:0 --port_file="$work/$name.port" --metrics_listen= \
    >"$work/$name.log" 2>&1 &
  pids+=($!)
  wait_until 60 "$name to start" test -s "$work/$name.port"
}

json_field() {  # json_field FIELD: FIELD of the JSON object on stdin
  python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

waiters_of() {  # waiters_of PORT RESOURCE: how many wait for RESOURCE
  "$cli" describe --lockservice="127.0.0.1:$1" --resource="$2" --json | json_field waiters
}

has_waiters() {  # has_waiters PORT RESOURCE N
  [ "$(waiters_of "$1" "$2")" = "$3" ]
}

# Every kind of state the lock service keeps, against the lock service at
# 127.0.0.1:$1: an exclusive lease held twice (two request ids), shared
# leases, permits of a semaphore, a released lease (its fence position
# stays), and parked Acquires with request ids (persisted waiters) of each
# kind, left parked when the server is killed. Every call names its request
# id (the client would draw a random one), so both stores hold the same.
lock_calls() {
  local lock=(--lockservice="127.0.0.1:$1" --timeout=30s)
  "$cli" acquire "${lock[@]}" --resource=orders --holder=alice --ttl=1h --request_id=a-1
  "$cli" acquire "${lock[@]}" --resource=orders --holder=alice --ttl=1h --request_id=a-2
  "$cli" acquire "${lock[@]}" --resource=report --holder=reader-1 --ttl=1h --shared \
    --request_id=r-1
  "$cli" acquire "${lock[@]}" --resource=report --holder=reader-2 --ttl=30m --shared \
    --request_id=r-2
  for n in 1 2 3; do
    "$cli" acquire "${lock[@]}" --resource=workers --holder="worker-$n" --ttl=1h --permits=3 \
      --request_id="p-$n"
  done
  local token
  token="$("$cli" acquire "${lock[@]}" --resource=done --holder=dave --ttl=1h \
             --request_id=d-1 --json | json_field token)"
  "$cli" release "${lock[@]}" --resource=done --token="$token" --request_id=d-2
  # Parked, one at a time: behind alice, exclusive then shared; behind the
  # readers, exclusive; behind the three permits, a fourth.
  local parked=(
    "orders --holder=bob --ttl=20m --request_id=b-1"
    "orders --holder=carol --ttl=10m --request_id=c-1 --shared"
    "report --holder=writer --ttl=5m --request_id=w-1"
    "workers --holder=worker-4 --ttl=1h --request_id=p-4 --permits=3"
  )
  for call in "${parked[@]}"; do
    local resource="${call%% *}" before
    before="$(waiters_of "$1" "$resource")"
    # shellcheck disable=SC2086  # one call's flags, split on purpose
    "$cli" acquire "${lock[@]}" --resource=$call --wait=5m >/dev/null 2>&1 &
    pids+=($!)
    wait_until 30 "the call on $resource to park" has_waiters "$1" "$resource" $((before + 1))
  done
}

# Objects and fences at the gateway at 127.0.0.1:$1: versions that grew, a
# deleted key, a compare-and-set, bytes that are not UTF-8, a resource with
# a fence and no keys, and a stale write refused.
gateway_calls() {
  local gw=(--gateway="127.0.0.1:$1" --timeout=30s)
  "$cli" write "${gw[@]}" --resource=orders --token=1 --key=order-1 --value=new
  "$cli" write "${gw[@]}" --resource=orders --token=1 --key=order-2 --value=paid
  "$cli" write "${gw[@]}" --resource=orders --token=1 --key=order-1 --value=shipped
  "$cli" write "${gw[@]}" --resource=orders --token=1 --key=order-2 --delete
  "$cli" write "${gw[@]}" --resource=orders --token=5 --key=order-3 --value=queued \
    --expected_version=0
  printf '\x00\x01\xfe\xff fencegate' >"$work/blob"
  "$cli" write "${gw[@]}" --resource=bin --token=3 --key=blob --value_file="$work/blob"
  "$cli" fence "${gw[@]}" --resource=fenced-only --token=7
  if "$cli" write "${gw[@]}" --resource=orders --token=4 --key=order-1 --value=stale; then
    echo "$0: the stale write was accepted" >&2
    exit 1
  fi
}

header() {  # header WHAT: the first lines of a fixture
  echo "-- $1, as fencegate 0.1.0 (809a75a) left it: the 0.1.0 format."
  echo "-- Made by tests/upgrade/make_fixtures.sh; do not edit (run it again)."
}

kill_last_server() {  # SIGKILL of the most recent server started
  kill -9 "${pids[-1]}"
  wait "${pids[-1]}" 2>/dev/null || true
}

# ---------------------------------------------------- the lock service, SQLite
start_server lockservice-sqlite "$lockservice" --db="$work/locks.db"
lock_port="$(cat "$work/lockservice-sqlite.port")"
lock_calls "$lock_port"
kill -9 "${pids[@]}" 2>/dev/null || true
wait 2>/dev/null || true
pids=()
{ header "The lock service's SQLite file"; sqlite3 "$work/locks.db" .dump; } \
  >"$here/lockservice-sqlite-0.1.0.sql"

# ------------------------------------------------------ the lock service, etcd
etcd_port="$(free_port)"
peer_port="$(free_port)"
etcd --name fixture --data-dir "$work/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" \
  --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "fixture=http://127.0.0.1:$peer_port" >"$work/etcd.log" 2>&1 &
etcd_pid=$!
etcdctl=(env ETCDCTL_API=3 etcdctl --endpoints="127.0.0.1:$etcd_port")
wait_until 60 etcd "${etcdctl[@]}" endpoint health
start_server lockservice-etcd "$lockservice" --store="etcd://127.0.0.1:$etcd_port"
lock_port="$(cat "$work/lockservice-etcd.port")"
lock_calls "$lock_port"
kill -9 "${pids[@]}" 2>/dev/null || true
wait "${pids[@]}" 2>/dev/null || true
pids=()
{
  echo "# The lock service's keys in etcd under its prefix (/fencegate/lockservice/),"
  echo "# as fencegate 0.1.0 (809a75a) left them: the 0.1.0 format. One key a line:"
  echo "# the key after the prefix, a space, the value in base64. The leader key is"
  echo "# left out. Made by tests/upgrade/make_fixtures.sh; do not edit."
  "${etcdctl[@]}" get --prefix /fencegate/lockservice/ -w json | python3 -c '
import base64, json, sys
prefix = "/fencegate/lockservice/"
for kv in json.load(sys.stdin).get("kvs", []):
    key = base64.b64decode(kv["key"]).decode()
    if key == prefix + "leader":
        continue
    print(key[len(prefix):], kv.get("value", ""))'
} >"$here/lockservice-etcd-0.1.0.txt"
kill "$etcd_pid"
wait "$etcd_pid" 2>/dev/null || true

# ------------------------------------------------------------ the gateway, SQLite
start_server gateway-sqlite "$gateway" --db="$work/objects.db"
gateway_calls "$(cat "$work/gateway-sqlite.port")"
kill_last_server
pids=()
{ header "The gateway's SQLite file"; sqlite3 "$work/objects.db" .dump; } \
  >"$here/gateway-sqlite-0.1.0.sql"

# -------------------------------------------------------- the gateway, PostgreSQL
pg_bin="${FENCEGATE_PG_BINDIR:-$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -1)}"
as_postgres=()
if [ "$(id -u)" = 0 ]; then as_postgres=(runuser -u postgres --); fi
mkdir "$work/pg"
if [ "$(id -u)" = 0 ]; then chown postgres "$work/pg"; fi
"${as_postgres[@]}" "$pg_bin/initdb" -D "$work/pg/data" -U fencegate --auth=trust \
  --encoding=UTF8 >"$work/initdb.log"
pg_port="$(free_port)"
"${as_postgres[@]}" "$pg_bin/postgres" -D "$work/pg/data" -p "$pg_port" -k "$work/pg" \
  -c listen_addresses=127.0.0.1 >"$work/postgres.log" 2>&1 &
pids+=($!)
pg=(-h 127.0.0.1 -p "$pg_port" -U fencegate)
wait_until 60 PostgreSQL "$pg_bin/psql" "${pg[@]}" -c "SELECT 1" postgres
start_server gateway-postgres "$gateway" \
  --storage="postgres://fencegate@127.0.0.1:$pg_port/postgres"
gateway_calls "$(cat "$work/gateway-postgres.port")"
kill_last_server
{
  header "The gateway's PostgreSQL schema (names unqualified, owners left out)"
  # Session settings, the schema itself and comments are no state: what is
  # left are the tables, the function, the rows and the keys.
  "$pg_bin/pg_dump" "${pg[@]}" --schema=public --no-owner --no-privileges \
    --column-inserts postgres |
    grep -v -e '^SET ' -e '^SELECT pg_catalog.set_config' -e '^--' -e '^[\]' \
            -e '^CREATE SCHEMA' -e '^COMMENT ON SCHEMA' |
    sed -e 's/public\.//g' | cat -s
} >"$here/gateway-postgres-0.1.0.sql"

echo "fixtures written to $here"
