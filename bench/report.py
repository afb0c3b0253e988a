#!/usr/bin/env python3
"""Turns fencegate-loadgen's JSON lines into bench/results/latest.json and
docs/benchmarks.md + docs/benchmarks.svg. Called by ./scripts/bench.

  report.py cpu PID...                 one CPU-time snapshot (JSON) for the
                                       "was the machine busy" figure
  report.py aggregate --raw=F ...      medians of the runs -> results JSON
  report.py render --results=F --markdown=F --svg=F [--scale_svg=F]
  report.py render-scale --results=F --markdown=F --svg=F
                                       only the Scale section (bench/
                                       scale_report.py) and its chart, from
                                       the key "scale" (./scripts/bench --scale)

Standard library only. The results schema (each entry of "results"):
  system      fencegate | fencegate-stream (the same servers, every call
              on their Session streams) | fencegate-etcd (its lock service on etcd, to the
              leader) | fencegate-etcd-standby (the same, through a standby)
              | fencegate-pg (its gateway on PostgreSQL, --storage postgres)
              | sql-fenced, sql-plain (a write to a PostgreSQL table of the
              user's own, with and without the SQL fencing API's
              fencegate_fence, --storage postgres)
              | etcd | redis | grpc-empty | python-fencegate, python-redis,
              python-echo (bench/python/loadgen.py: fencegate.aio, redis.asyncio,
              a grpc.aio stream to the echo server; bench/report_python.py)
              | fencegate-loop, redis-loop, echo-stream (fencegate-loadgen
              --shape=loop: event-loop clients; bench/report_loop.py)
  durability  fsync (acknowledged only after fsync) | everysec (Redis,
              NOT durable) | none (the empty call)
  workload    lock_cycle | fenced_write | handoff | pipelined_write (one
              client, 32 writes in flight) | shared_cycle | rw_mix |
              multi_cycle (the lock kinds, issue 21) | rpc
  resources, clients
  ops_per_s, p50_us, p99_us   medians over the runs
  runs        every run's own figures, in the order they ran
  detail      handoff: waiting-time percentiles and fairness (medians);
              rw_mix: writes/s and the writers' waiting-time percentiles
The key "scale" (bench/scale.py) is kept when aggregate rewrites the file.
"""

import argparse
import datetime
import html
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_loop  # noqa: E402
import report_python  # noqa: E402
import scale_report  # noqa: E402 (bench/, beside this file)

SYSTEM_ORDER = [
    ("fencegate", "fsync"),
    ("fencegate-stream", "fsync"),
    ("fencegate-etcd", "fsync"),
    ("fencegate-etcd-standby", "fsync"),
    ("fencegate-pg", "fsync"),
    ("sql-fenced", "fsync"),
    ("sql-plain", "fsync"),
    ("etcd", "fsync"),
    ("redis", "fsync"),
    ("redis", "everysec"),
]
LABEL = {
    ("fencegate", "fsync"): "fencegate",
    ("fencegate-stream", "fsync"): "fencegate, streams",
    ("fencegate-etcd", "fsync"): "fencegate on etcd",
    ("fencegate-etcd-standby", "fsync"): "fencegate on etcd, via standby",
    ("fencegate-pg", "fsync"): "fencegate on PostgreSQL",
    ("sql-fenced", "fsync"): "your table, fenced in SQL",
    ("sql-plain", "fsync"): "your table, unfenced",
    ("etcd", "fsync"): "etcd",
    ("redis", "fsync"): "Redis always",
    ("redis", "everysec"): "Redis everysec (not durable)",
    ("grpc-empty", "none"): "empty gRPC call",
}
COLOR = {
    ("fencegate", "fsync"): "#1f6feb",
    ("fencegate-stream", "fsync"): "#0a3069",
    ("fencegate-etcd", "fsync"): "#79c0ff",
    ("fencegate-etcd-standby", "fsync"): "#a5d6ff",
    ("fencegate-pg", "fsync"): "#56d364",
    ("sql-fenced", "fsync"): "#2ea043",
    ("sql-plain", "fsync"): "#8b949e",
    ("etcd", "fsync"): "#e36209",
    ("redis", "fsync"): "#b31d28",
    ("redis", "everysec"): "#f0a3a3",
}
RUN_FIELDS = ["ops_per_s", "p50_us", "p99_us", "max_us", "ops", "errors",
              "not_acquired", "abandoned", "client_cpu_us_per_op", "server_cpu_us_per_op",
              "other_cpu_share"]
CPU_FIELDS = ["client_cpu_us_per_op", "server_cpu_us_per_op", "other_cpu_share",
              "client_switches_per_op", "server_switches_per_op"]
RW_MIX_FIELDS = ["writes_per_s", "wait_p50_us", "wait_p99_us", "wait_max_us"]
# The lock kinds' points (issue 21), all at 32 clients: (workload, resources, title).
KINDS_POINTS = [("shared_cycle", 1, "shared cycle, hot resource"),
                ("rw_mix", 4, "rw_mix 90/10, 4 hot resources"),
                ("multi_cycle", 1000, "multi-acquire of 4, own sets (1,000 resources)"),
                ("multi_cycle", 8, "multi-acquire of 4, overlapping (8 resources)")]
HANDOFF_FIELDS = ["holder_changes_per_s", "wait_p50_us", "wait_p99_us", "wait_max_us", "jain_fairness",
                  "client_ops_min", "client_ops_max"]

HOW_TO_RUN = """\
## How to run

```
./scripts/bench                       # full run, ~17 minutes: every system, 3 runs per point
./scripts/bench --systems=python      # only the Python client's points (~1 min)
./scripts/bench --systems=loop,fsync  # only the event-loop clients' points (~3 min)
./scripts/bench --systems=fencegate,etcd,redis --workloads=shared_cycle,rw_mix,multi_cycle
                                      # only the lock kinds' points (~3 min)
./scripts/bench --quick               # 1 run of 0.5 s per point, < 2 minutes (smoke, not for comparison)
./scripts/bench --systems=fencegate,etcd --runs=5 --duration=5s
./scripts/bench --profile             # + ~2 min: perf profiles of fencegate, fsyncs per op of all
./scripts/bench --systems=fencegate --metrics-ab   # metrics on vs off, same run (docs/observability.md)
./scripts/bench --scale               # ~6 min: what state costs (Scale section, benchmarks-scale.svg):
                                      #   held leases beside Redis' locks, parked waiters, gateway resources,
                                      #   the lock service on etcd; memory, disk, restart, speed with the state
./scripts/bench --scale --scale-sizes=10000 --systems=fencegate   # ~20 s, no Redis, no etcd, no docs
build/bench/fencegate-microbench      # in-process hot paths (Google Benchmark), no servers
ctest --test-dir build -L bench       # the smoke test: --quick against fencegate, no errors allowed
```

`./scripts/bench` installs what is missing from Debian (etcd-server, etcd-client,
redis-server, libhiredis-dev, python3-redis), builds, starts every server on 127.0.0.1 with free
ports and its data in one temp dir, runs, stops exactly the processes it started
(by PID, also on Ctrl-C), writes `bench/results/latest.json` (not committed) and,
for a full run of every system, regenerates this page and `docs/benchmarks.svg`
(committed when the numbers are refreshed). `--scale` writes the key `scale` of
the same file (a speed run keeps it, and the other way round) and, with the
default sizes and systems, regenerates only the Scale section of this page and
`docs/benchmarks-scale.svg`. The runs of all systems are
interleaved (run 1 of every system, then run 2, ...), so a machine that gets
busier part way slows every system alike; figures are medians of the runs.
"""

METHOD = """\
## What is measured, and why each peer is a fair one

One C++ load generator (`bench/loadgen/`) drives every system over its native
protocol: closed loop, one connection per client thread, latency from every
single sample (exact percentiles, no averaging), counted in the window an
operation completes in. The workload loops are written once
(`bench/loadgen/workloads.h`); only the three primitives below differ per system.

| | fencegate | etcd 3.4 (v3 gRPC, raw stubs) | Redis 7 (RESP, hiredis) |
|---|---|---|---|
| acquire | `LockService.Acquire` (TTL 10 s); a waiter parks in the server's FIFO queue | the `concurrency.Mutex` recipe: one Txn puts `lock/<r>/<lease>` under the client's session lease and reads the oldest key; a waiter watches its predecessor's key (no herd) | `SET lock:<r> <owner> NX PX 10000`; with a token (fenced write, hand-off): the same SET NX PX and an INCR in one Lua script |
| token | the service's token (one durable counter) | create revision of the lock key | the INCR'd counter |
| release | `LockService.Release(token)`, owner-checked | DeleteRange of the session's own key | Lua compare-and-delete |
| fenced write | `Gateway.Write(token)`: fence check and write in one SQLite transaction | Txn: if `create_revision(lock key) == token` then put (`Mutex.IsOwner()`) | Lua: if token >= `fence:<r>` then raise the fence and SET |
| durability | SQLite WAL, synchronous=FULL, group commit: each reply after its fsync | raft WAL fsync before every reply (no `--unsafe-no-fsync`) | appendonly yes, appendfsync always (fsync before replies); the everysec run is **not durable** |

Where a peer has a cheaper correct recipe, it gets it: etcd keeps one session
lease per client for all its locks (as `concurrency.Session` does) instead of a
lease per lock, and its waiters watch from "now" and then re-read the
predecessor's key, instead of watching from the read's revision as the Go client
does, which can leave the watcher up to 100 ms in etcd's unsynced set. Redis'
lock cycle uses plain `SET NX PX` with no token, its cheapest lock. A Redis
waiter retries after a jittered 1 ms pause (`--redis_retry`): more eager than
redis-py (100 ms) or Redlock (200 ms); longer pauses raise its cycles/s only by
letting the releaser barge back in (see the analysis). On the hot resource the
load generator also checks mutual exclusion from the clients' side: a second
grant while a client still holds the lock counts as a failed operation.

Workloads, each at 1, 8 and 32 clients on 1,000 resources and on one hot
resource: **lock cycle** = acquire + release (try-lock on 1,000 resources, a
refusal counts as a completed op; waiting on the hot one); **fenced write** =
1 KiB writes under leases taken before the clock starts (on the hot resource
all clients write under one lease); **hand-off** = 32 clients queued on one
resource, each acquiring, writing once and releasing. Ceilings, sampled all
through the same run (the empty call in the rotation of every fenced-write
point as well as on its own, a 1 s fsync loop after every point), so one burst
of someone else's disk or CPU use cannot set them: an empty unary call to a
gRPC callback server (`bench/echo_server.cc`) and a 4 KiB pwrite + fdatasync
loop on the data's file system.

The kinds of lock (issue 21, docs/semantics.md "Kinds of lock"), at 32 clients,
every acquire waiting unless said otherwise (the loops are in
`bench/loadgen/kinds_workloads.h`):

| | fencegate | etcd | Redis |
|---|---|---|---|
| shared (read) lock | `Acquire(mode=SHARED)`: its own lease and token, granted at once beside other readers | the `RWMutex` recipe (`client/v3/experimental/recipes`): put `rw/<r>/read/<lease>` under the session lease, wait for the newest `write` key below its revision | Redisson's `RedissonReadWriteLock` recipe, in Lua written here: a hash with `mode` = read and a hold count per holder, a timeout key per read hold; the release scans every holder's timeouts for the hash's TTL, as Redisson does |
| exclusive (write) lock | `Acquire` (EXCLUSIVE): FIFO with the readers, no writer starvation | the same recipe's `Lock`: put `rw/<r>/write/<lease>`, wait for the newest key of either kind below it | Redisson's write lock (`mode` = write), plus an INCR'd fencing token; **not fair**: readers keep entering while writers wait |
| 4 resources at once | one `Acquire(resources=[4])`: all or nothing in one decision | 4 `concurrency.Mutex` locks in sorted order | `RedissonMultiLock`: `SET NX PX` each in sorted order, waiting on each, releasing all on a failure |

Redis' waiters poll (as its mutex's do, every ~1 ms) where Redisson would wait for
an unlock message; the fenced write under a write lock is the one above.

With `--storage postgres`, the fenced-write points also run against a second
gateway whose storage is a PostgreSQL server started in the same temp dir
(Debian's binaries, default settings: fsync and synchronous_commit on), reached
over loopback TCP as a database on another host would be: "fencegate on
PostgreSQL". Its server CPU includes the database's processes.
"""

ANALYSIS_BEGIN = "<!-- analysis:begin (hand-written; kept when the page is regenerated) -->"
ANALYSIS_END = "<!-- analysis:end -->"


# ---------------------------------------------------------------- cpu

def cpu_snapshot(pids):
    """Busy and total jiffies of the machine, and jiffies used by `pids`
    (with their waited-for children)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    total = sum(fields[:8])
    ours = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rindex(")") + 2:].split()
        # utime stime cutime cstime are fields 14-17 (1-based) of the line.
        ours += sum(int(x) for x in rest[11:15])
    return {"busy": total - idle, "total": total, "ours": ours}


def other_cpu_share(before, after):
    total = after["total"] - before["total"]
    if total <= 0:
        return None
    others = (after["busy"] - before["busy"]) - (after["ours"] - before["ours"])
    return max(0.0, others / total)


# ----------------------------------------------------------- aggregate

def median(values):
    return statistics.median(values) if values else 0


def aggregate(args):
    runs = []
    with open(args.raw) as f:
        for line in f:
            line = line.strip()
            if line:
                runs.append(json.loads(line))
    groups = {}
    for r in runs:
        key = (r["system"], r["durability"], r["workload"], r["resources"], r["clients"])
        groups.setdefault(key, []).append(r)

    results = []
    ceilings = {}
    total_errors = 0
    for key, group in groups.items():
        system, durability, workload, resources, clients = key
        total_errors += sum(r["errors"] for r in group)
        per_run = [{k: r.get(k, 0) for k in RUN_FIELDS} for r in group]
        entry = {
            "system": system,
            "durability": durability,
            "workload": workload,
            "resources": resources,
            "clients": clients,
            "ops_per_s": round(median([r["ops_per_s"] for r in group]), 1),
            "p50_us": round(median([r["p50_us"] for r in group]), 1),
            "p99_us": round(median([r["p99_us"] for r in group]), 1),
            "runs": per_run,
        }
        entry["detail"] = {k: round(median([r.get(k, 0) for r in group]), 3)
                           for k in CPU_FIELDS}
        if workload == "handoff":
            entry["detail"].update({k: round(median([r[k] for r in group]), 4)
                                    for k in HANDOFF_FIELDS})
            for run, r in zip(per_run, group):
                run.update({k: r[k] for k in HANDOFF_FIELDS})
        if workload == "rw_mix":
            entry["detail"].update({k: round(median([r.get(k, 0) for r in group]), 4)
                                    for k in RW_MIX_FIELDS})
            for run, r in zip(per_run, group):
                run.update({k: r.get(k, 0) for k in RW_MIX_FIELDS})
        if workload == "fsync":
            entry.pop("system")
            entry.pop("workload")
            entry.pop("resources")
            ceilings["fsync"] = entry
        else:
            results.append(entry)

    order = {"rpc": 0, "lock_cycle": 1, "fenced_write": 2, "handoff": 3, "pipelined_write": 4,
             "shared_cycle": 5, "rw_mix": 6, "multi_cycle": 7}
    sys_order = {s: i for i, s in enumerate(SYSTEM_ORDER + [("grpc-empty", "none")])}
    results.sort(key=lambda e: (order.get(e["workload"], 9), -e["resources"], e["clients"],
                                sys_order.get((e["system"], e["durability"]), 9)))

    machine = json.loads(args.machine)
    machine["load_average_before"] = args.load_before
    machine["load_average_after"] = args.load_after
    if args.cpu_before and args.cpu_after:
        share = other_cpu_share(json.loads(args.cpu_before), json.loads(args.cpu_after))
        if share is not None:
            machine["other_processes_cpu_share"] = round(share, 3)
            # Anything above a tenth of the machine used by others (compilers
            # of the engineers sharing it) makes absolute numbers unreliable.
            machine["busy"] = share > 0.10
    doc = {
        "machine": machine,
        "git_sha": args.git_sha,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "quick": args.quick == "1",
        "config": {"runs": int(args.runs), "duration": args.duration, "warmup": args.warmup,
                   "value_bytes": 1024, "lock_ttl_ms": 10000},
        "errors": total_errors,
        "ceilings": ceilings,
        "results": results,
    }
    # The scale run's results (bench/scale.py) stay in the file.
    if os.path.exists(args.out):
        with open(args.out) as f:
            try:
                previous = json.load(f)
            except ValueError:
                previous = {}
        if "scale" in previous:
            doc["scale"] = previous["scale"]
    if args.syncs and os.path.exists(args.syncs):
        doc["syncs"] = []
        with open(args.syncs) as f:
            for line in f:
                if not line.strip():
                    continue
                d = json.loads(line)
                r = d["run"]
                doc["syncs"].append({
                    "system": r["system"], "durability": r["durability"],
                    "workload": r["workload"], "resources": r["resources"],
                    "clients": r["clients"], "ops_per_s": r["ops_per_s"],
                    "syncs_per_s": d["syncs_per_s"],
                    "ops_per_sync": round(r["ops_per_s"] / d["syncs_per_s"], 2)
                    if d["syncs_per_s"] else None,
                    "server_cpu_us_per_op": r.get("server_cpu_us_per_op"),
                    "other_cpu_share": r.get("other_cpu_share"),
                })
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


# -------------------------------------------------------------- render

def find(doc, system, durability, workload, resources, clients):
    for e in doc["results"]:
        if (e["system"], e["durability"], e["workload"], e["resources"], e["clients"]) == \
                (system, durability, workload, resources, clients):
            return e
    return None


def fmt_ops(x):
    return f"{x:,.0f}"


def fmt_ms(us):
    return f"{us / 1000:.2f}"


def ratio(a, b):
    """ops/s of result `a` over result `b`; None if either is missing."""
    return a["ops_per_s"] / b["ops_per_s"] if a and b and b["ops_per_s"] > 0 else None


def system_of(doc, system):
    """A finder of `system`'s fsync results by (workload, resources, clients)."""
    return lambda w, r, c: find(doc, system, "fsync", w, r, c)


def targets(doc):
    """Every ratio the issue asks for: (name, measured, target, higher_is_better, basis)."""
    out = []
    fg, etcd, redis = (system_of(doc, s) for s in ("fencegate", "etcd", "redis"))
    rpc32 = find(doc, "grpc-empty", "none", "rpc", 0, 32)
    rpc1 = find(doc, "grpc-empty", "none", "rpc", 0, 1)
    fsync = doc["ceilings"].get("fsync")

    for w, wname in [("lock_cycle", "lock cycle"), ("fenced_write", "fenced write")]:
        for r, rname in [(1000, "1,000 resources"), (1, "hot resource")]:
            out.append((f"{wname}, 32 clients, {rname}: fencegate / etcd",
                        ratio(fg(w, r, 32), etcd(w, r, 32)), 2.0, True, "ops/s"))
    for r, rname in [(1000, "1,000 resources"), (1, "hot resource")]:
        out.append((f"fenced write, 32 clients, {rname}: fencegate / empty gRPC call",
                    ratio(fg("fenced_write", r, 32), rpc32), 0.6, True, "ops/s"))
        out.append((f"fenced write, 32 clients, {rname}: fencegate / Redis always",
                    ratio(fg("fenced_write", r, 32), redis("fenced_write", r, 32)), 0.75, True,
                    "ops/s"))
    def changes(a, b):
        if not a or not b or b["detail"].get("holder_changes_per_s", 0) <= 0:
            return None
        return a["detail"]["holder_changes_per_s"] / b["detail"]["holder_changes_per_s"]

    for peer, name, target in [(etcd, "etcd", 5.0), (redis, "Redis always", 1.0)]:
        a, b = fg("handoff", 1, 32), peer("handoff", 1, 32)
        out.append((f"hand-off, 32 clients: fencegate / {name}", ratio(a, b), target, True,
                    "acquire-write-release cycles/s"))
        out.append((f"hand-off, 32 clients: fencegate / {name}", changes(a, b), target, True,
                    "cycles/s where the lock went to another client"))
    if rpc1 and fsync:
        floor = rpc1["p50_us"] + fsync["p50_us"]
        for w, wname, trips in [("fenced_write", "fenced write (1 call)", 1),
                                ("lock_cycle", "lock cycle (2 calls)", 2)]:
            e = fg(w, 1000, 1)
            out.append((f"p50 at 1 client, {wname}: fencegate / ({trips} x (empty call + fsync))",
                        e["p50_us"] / (trips * floor) if e else None, 1.5, False,
                        f"p50; floor {trips} x ({fmt_ms(rpc1['p50_us'])} + "
                        f"{fmt_ms(fsync['p50_us'])}) ms"))
    return out


def stream_targets(doc):
    """Issue 14's ratios for the streams: (name, measured, target, higher_is_better, basis)."""
    out = []
    st, unary, redis = (system_of(doc, s) for s in ("fencegate-stream", "fencegate", "redis"))
    rpc1 = find(doc, "grpc-empty", "none", "rpc", 0, 1)
    fsync = doc["ceilings"].get("fsync")

    for r, rname in [(1000, "1,000 resources"), (1, "hot resource")]:
        out.append((f"fenced write, 32 clients, {rname}: streams / Redis always",
                    ratio(st("fenced_write", r, 32), redis("fenced_write", r, 32)), 1.0, True,
                    "ops/s"))
        out.append((f"fenced write, 32 clients, {rname}: streams / fencegate unary",
                    ratio(st("fenced_write", r, 32), unary("fenced_write", r, 32)), 2.0, True,
                    "ops/s"))
    out.append(("lock cycle, 32 clients, 1,000 resources: streams / Redis always",
                ratio(st("lock_cycle", 1000, 32), redis("lock_cycle", 1000, 32)), 0.75, True,
                "ops/s"))
    out.append(("hand-off, 32 clients: streams / Redis always",
                ratio(st("handoff", 1, 32), redis("handoff", 1, 32)), 1.2, True,
                "acquire-write-release cycles/s"))
    handoff = st("handoff", 1, 32)
    out.append(("hand-off, 32 clients: streams, Jain's fairness index",
                handoff["detail"]["jain_fairness"] if handoff else None, 0.99, True,
                "an index, not a ratio"))
    if rpc1 and fsync:
        floor = rpc1["p50_us"] + fsync["p50_us"]
        e = st("fenced_write", 1000, 1)
        out.append(("p50 at 1 client, fenced write: streams / (empty call + fsync)",
                    e["p50_us"] / floor if e else None, 1.3, False,
                    f"p50; floor {fmt_ms(rpc1['p50_us'])} + {fmt_ms(fsync['p50_us'])} ms"))
    out.append(("pipelined, 1 client, 32 writes in flight: streams / Redis always pipelined",
                ratio(st("pipelined_write", 1000, 1), redis("pipelined_write", 1000, 1)), 1.0,
                True, "ops/s"))
    return out


def targets_table(rows):
    lines = ["| ratio | measured | target | verdict |", "|---|---:|---:|---|"]
    for name, measured, target, higher, basis in rows:
        word, by = verdict(measured, target, higher)
        shown = f"{measured:.2f}x" if measured is not None else "-"
        lines.append(f"| {name} ({basis}) | {shown} | {'>=' if higher else '<='} {target:g}x | "
                     f"{word}{', ' + by if by else ''} |")
    return lines


def verdict(measured, target, higher):
    if measured is None:
        return "not measured", ""
    if measured == 0:
        return "**missed**", "nothing completed" if higher else ""
    if higher:
        if measured >= target:
            return "met", f"{(measured / target - 1) * 100:+.0f}% over"
        return "**missed**", f"needs {target / measured:.2f}x more"
    if measured <= target:
        return "met", f"{(1 - measured / target) * 100:.0f}% under"
    return "**missed**", f"{measured / target:.2f}x over"


def results_table(doc, workload, resources):
    systems = [s for s in SYSTEM_ORDER if any(
        (e["system"], e["durability"]) == s and e["workload"] == workload for e in doc["results"])]
    if not systems:
        return ""
    head = "| clients | " + " | ".join(LABEL[s] for s in systems) + " |"
    rows = [head, "|---:|" + "---:|" * len(systems)]
    for c in (1, 8, 32):
        cells = []
        for s in systems:
            e = find(doc, s[0], s[1], workload, resources, c)
            cells.append(f"{fmt_ops(e['ops_per_s'])} ({fmt_ms(e['p50_us'])} / {fmt_ms(e['p99_us'])})"
                         if e else "-")
        if any(cell != "-" for cell in cells):
            rows.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def fenced_write_ratio_table(doc, base, other):
    """Fenced-write latency and throughput of system `other` beside `base`, point by point.

    `base` and `other` are (system, column title, short name for the ops/s column).
    """
    rows = []
    for resources, rname in [(1000, "1,000"), (1, "1 (hot)")]:
        for c in (1, 8, 32):
            a = find(doc, base[0], "fsync", "fenced_write", resources, c)
            b = find(doc, other[0], "fsync", "fenced_write", resources, c)
            if not a or not b:
                continue
            p50_ratio = b["p50_us"] / a["p50_us"] if a["p50_us"] else 0
            ops_ratio = b["ops_per_s"] / a["ops_per_s"] if a["ops_per_s"] else 0
            rows.append(f"| {rname} | {c} | {fmt_ms(a['p50_us'])} / {fmt_ms(a['p99_us'])} | "
                        f"{fmt_ms(b['p50_us'])} / {fmt_ms(b['p99_us'])} | {p50_ratio:.2f}x | "
                        f"{fmt_ops(a['ops_per_s'])} / {fmt_ops(b['ops_per_s'])} ({ops_ratio:.2f}x) |")
    if not rows:
        return ""
    head = [f"| resources | clients | {base[1]} ms | {other[1]} ms | p50 ratio | "
            f"ops/s {base[2]} / {other[2]} |", "|---|---:|---:|---:|---:|---:|"]
    return "\n".join(head + rows)


def topology_table(doc):
    """Fenced-write latency of the gateway on SQLite beside PostgreSQL."""
    return fenced_write_ratio_table(doc, ("fencegate", "SQLite gateway", "SQLite"),
                                    ("fencegate-pg", "PostgreSQL gateway", "PostgreSQL"))


def sql_fencing_table(doc):
    """The cost of fencing in SQL: a write to the user's table with and without fencegate_fence."""
    return fenced_write_ratio_table(doc, ("sql-plain", "unfenced", "unfenced"),
                                    ("sql-fenced", "fenced in SQL", "fenced"))


def kinds_targets(doc):
    """Issue 21's one stated expectation: shared leases on one hot resource run at the
    lock-cycle rate of distinct resources (within 10%, our reading of "at the rate")."""
    out = []
    for system, name in [("fencegate", "fencegate"), ("fencegate-stream", "streams")]:
        sys_of = system_of(doc, system)
        out.append((f"shared cycle, 32 clients, hot resource: {name} / its own lock cycle on "
                    "1,000 resources", ratio(sys_of("shared_cycle", 1, 32),
                                             sys_of("lock_cycle", 1000, 32)), 0.9, True,
                    "ops/s"))
    return out


def kinds_section(doc):
    """The lock kinds' points: each system's figures, then fencegate over each peer."""
    systems = [s for s in SYSTEM_ORDER if any(find(doc, s[0], s[1], w, r, 32)
                                              for w, r, _ in KINDS_POINTS)]
    if not systems:
        return []
    out = ["", "### Kinds of lock (issue 21): 32 clients", "",
           "Each cell: ops/s (p50 / p99 latency in ms). One op: shared cycle = a shared "
           "acquire (waiting) + its release, every client on the same resource; rw_mix = "
           "a cycle on one of 4 hot resources, 90% a shared acquire + release, 10% an "
           "exclusive acquire + one 1 KiB fenced write + release, all waiting (writes/s: the "
           "exclusive cycles; writer wait: asking to holding); multi-acquire = 4 resources "
           "at once + 4 releases, on sets no other client names (try-locks) or on 4 of 8 "
           "resources (waiting). The peers' recipes are under \"What is measured\".", "",
           "| system | " + " | ".join(t for _, _, t in KINDS_POINTS)
           + " | rw_mix writes/s | rw_mix writer wait p50 / p99 ms |",
           "|---|" + "---:|" * (len(KINDS_POINTS) + 2)]
    for s in systems:
        cells = []
        for w, r, _ in KINDS_POINTS:
            e = find(doc, s[0], s[1], w, r, 32)
            cells.append(f"{fmt_ops(e['ops_per_s'])} ({fmt_ms(e['p50_us'])} / "
                         f"{fmt_ms(e['p99_us'])})" if e else "-")
        rw = find(doc, s[0], s[1], "rw_mix", 4, 32)
        d = rw.get("detail", {}) if rw else {}
        cells.append(fmt_ops(d.get("writes_per_s", 0)) if rw else "-")
        cells.append(f"{fmt_ms(d.get('wait_p50_us', 0))} / {fmt_ms(d.get('wait_p99_us', 0))}"
                     if rw else "-")
        out.append(f"| {LABEL[s]} | " + " | ".join(cells) + " |")
    peers = [(s, LABEL[s]) for s in [("etcd", "fsync"), ("redis", "fsync"), ("redis", "everysec")]
             if s in systems]
    ours = [s for s in [("fencegate", "fsync"), ("fencegate-stream", "fsync")] if s in systems]
    if peers and ours:
        out += ["", "Ratios in the same run (ops/s; above 1: fencegate is faster):", "",
                "| workload | " + " | ".join(f"{LABEL[a]} / {name}" for a in ours
                                            for _, name in peers) + " |",
                "|---|" + "---:|" * (len(ours) * len(peers))]
        for w, r, title in KINDS_POINTS:
            cells = []
            for a in ours:
                for p, _ in peers:
                    x = ratio(find(doc, a[0], a[1], w, r, 32), find(doc, p[0], p[1], w, r, 32))
                    cells.append(f"{x:.2f}x" if x is not None else "-")
            out.append(f"| {title} | " + " | ".join(cells) + " |")
    rows = kinds_targets(doc)
    if any(measured is not None for _, measured, _, _, _ in rows):
        out += ["", "Issue 21 expects shared leases on one hot resource to need no hand-off and "
                "run at the lock-cycle rate of distinct resources:", ""]
        out += targets_table(rows)
    return out


def render_markdown(doc, analysis, old_scale=""):
    m = doc["machine"]
    cfg = doc["config"]
    lines = []
    add = lines.append
    add("# Benchmarks: fencegate, etcd and Redis side by side")
    add("")
    add("Generated by `./scripts/bench` (`bench/report.py render`) from "
        "`bench/results/latest.json`; the hand-written analysis section is kept "
        "when the page is regenerated. Only ratios within one run mean anything: "
        "every system below was measured in the same run, interleaved, on the same machine.")
    add("")
    add("## The run")
    add("")
    add(f"- git `{doc['git_sha']}`, {doc['generated_at']}"
        + (" — **quick run (1 short run per point), not for comparison**" if doc.get("quick") else ""))
    add(f"- {m.get('cores')} cores ({m.get('cpu', '?')}), {m.get('memory_gib')} GiB, "
        f"Linux {m.get('kernel')}, data on {m.get('data_fs', '?')}")
    add(f"- {m.get('etcd', 'etcd ?')}; {m.get('redis', 'redis ?')}; gRPC {m.get('grpc', '?')}; "
        f"SQLite {m.get('sqlite', '?')}"
        + (f"; {m['postgresql']}" if m.get("postgresql") else ""))
    add(f"- {cfg['runs']} runs of {cfg['duration']} (after {cfg['warmup']} of warm-up) per point; "
        "figures are medians of the runs; clients and servers share the cores")
    share = m.get("other_processes_cpu_share")
    busy = m.get("busy")
    if share is not None:
        add(f"- other processes (not the benchmark's) used {share * 100:.0f}% of the machine's CPU "
            f"during the run: {'**busy machine**: absolute numbers are low and noisy, ratios still hold roughly' if busy else 'quiet machine'}"
            f" (load average before: {m.get('load_average_before')})")
    others = [r.get("other_cpu_share", 0) for e in doc["results"] for r in e["runs"]]
    if any(others):
        add(f"- other processes' share of the CPU inside each measured window: median "
            f"{statistics.median(others) * 100:.0f}%, worst {max(others) * 100:.0f}% "
            f"(per run in `latest.json`)")
    add(f"- failed operations: {doc.get('errors', 0)}")
    add("")
    add("## Targets (issue 5)")
    add("")
    add("At 32 clients, with fsync before every acknowledgement on every durable system. "
        "\"needs Nx more\" is the factor fencegate's figure must still grow by.")
    add("")
    lines.extend(targets_table(targets(doc)))
    add("")
    if any(e["system"] == "fencegate-stream" for e in doc["results"]):
        add("## Targets (issue 14: the Session streams)")
        add("")
        add("The same servers, every call on their Session streams (one stream per client "
            "to each server), against the same peers in the same run.")
        add("")
        lines.extend(targets_table(stream_targets(doc)))
        add("")
    add("![ops/s at 32 clients](benchmarks.svg)")
    add("")
    add("## Results")
    add("")
    add("Each cell: ops/s (p50 / p99 latency in ms). One op: lock cycle = acquire + "
        "release; fenced write = one 1 KiB write; hand-off = acquire (waiting) + one "
        "fenced write + release.")
    for workload, title in [("lock_cycle", "Lock cycle"), ("fenced_write", "Fenced write (1 KiB)")]:
        for resources, rname in [(1000, "1,000 resources"), (1, "one hot resource")]:
            table = results_table(doc, workload, resources)
            if table:
                add("")
                add(f"### {title}, {rname}")
                add("")
                add(table)
    pipelined = results_table(doc, "pipelined_write", 1000)
    if pipelined:
        add("")
        add("### Pipelined fenced writes: one client, 32 in flight, 1,000 resources")
        add("")
        add("One connection: fencegate's gateway Session stream, Redis' RESP with 32 "
            "commands pipelined (hiredis). The client sends as many new writes as were "
            "answered, so 32 are always in flight; latency is per write.")
        add("")
        add(pipelined)
    topologies = topology_table(doc)
    if topologies:
        add("")
        add("### The gateway on SQLite and on PostgreSQL")
        add("")
        add("Latency per fenced write (1 KiB) with the gateway's storage embedded (SQLite, "
            "the default) and on a PostgreSQL server on the same machine (`--storage "
            "postgres`; over loopback TCP, fsync and synchronous_commit on), in the same run. "
            "Each cell: p50 / p99 in ms; ratio: PostgreSQL over SQLite (above 1: slower).")
        add("")
        add(topologies)
    sql = sql_fencing_table(doc)
    if sql:
        add("")
        add("### Fencing in SQL: the cost of the check")
        add("")
        add("A write (1 KiB upsert) to a table of the user's own on the same PostgreSQL server, "
            "one transaction per write, with `SELECT fencegate_fence(resource, token)` as its "
            "first statement (docs/sql-fencing.md) and without it, in the same run. Each cell: "
            "p50 / p99 in ms; ratio: fenced over unfenced (above 1: slower).")
        add("")
        add(sql)
    handoffs = [e for e in doc["results"] if e["workload"] == "handoff"]
    if handoffs:
        add("")
        add("### Hand-off: 32 clients queued on one resource")
        add("")
        add("Cycles/s: acquire, one fenced write, release, by any client. Hand-offs/s: the "
            "cycles whose lock came from another client (a lock that lets the releaser "
            "barge back in has fewer). Waiting time = from asking for the lock to holding "
            "it. Fairness: Jain's index over cycles per client (1 = all equal) and the "
            "fewest / most cycles any client got.")
        add("")
        add("| system | cycles/s | hand-offs/s | wait p50 ms | wait p99 ms | wait max ms | Jain | min / max per client |")
        add("|---|---:|---:|---:|---:|---:|---:|---:|")
        for s in SYSTEM_ORDER:
            e = find(doc, s[0], s[1], "handoff", 1, 32)
            if e:
                d = e["detail"]
                add(f"| {LABEL[s]} | {fmt_ops(e['ops_per_s'])} | "
                    f"{fmt_ops(d.get('holder_changes_per_s', 0))} | {fmt_ms(d['wait_p50_us'])} | "
                    f"{fmt_ms(d['wait_p99_us'])} | {fmt_ms(d['wait_max_us'])} | "
                    f"{d['jain_fairness']:.3f} | {d['client_ops_min']:.0f} / {d['client_ops_max']:.0f} |")
    lines.extend(kinds_section(doc))
    measured = [s for s in SYSTEM_ORDER
                if any((e["system"], e["durability"]) == s for e in doc["results"])]
    cpu_rows = []
    for workload, resources, name in [("lock_cycle", 1000, "lock cycle, 1,000 resources"),
                                      ("lock_cycle", 1, "lock cycle, hot resource"),
                                      ("fenced_write", 1000, "fenced write, 1,000 resources"),
                                      ("fenced_write", 1, "fenced write, hot resource"),
                                      ("handoff", 1, "hand-off")] + KINDS_POINTS:
        cells = []
        for s in measured:
            e = find(doc, s[0], s[1], workload, resources, 32)
            d = e.get("detail", {}) if e else {}
            cells.append(f"{d['server_cpu_us_per_op']:.0f} / {d['client_cpu_us_per_op']:.0f}"
                         if d.get("server_cpu_us_per_op") else "-")
        if any(c != "-" for c in cells):
            cpu_rows.append(f"| {name} | " + " | ".join(cells) + " |")
    if cpu_rows:
        add("")
        add("### CPU per operation at 32 clients")
        add("")
        add("Microseconds of CPU per completed op inside the measured window: server "
            "process(es) / load generator. With clients and servers sharing "
            f"{m.get('cores')} cores, throughput at 32 clients is close to "
            "cores / (server + client CPU per op) whenever the disk is not the limit.")
        add("")
        add("| workload | " + " | ".join(LABEL[s] for s in measured) + " |")
        add("|---|" + "---:|" * len(measured))
        lines.extend(cpu_rows)
    if doc.get("syncs"):
        add("")
        add("### fsyncs per operation (`--profile` runs)")
        add("")
        add("fsync + fdatasync calls of the server process(es), counted by `perf stat` over 4 s "
            "in the middle of a separate 7 s run at 32 clients (perf slows the servers, so "
            "these runs are not in the tables above). Ops per sync shows how far a "
            "system batches its durability work; below 1, one op takes several syncs.")
        add("")
        add("| system | workload | ops/s | syncs/s | ops per sync | server CPU µs/op |")
        add("|---|---|---:|---:|---:|---:|")
        for e in doc["syncs"]:
            name = LABEL.get((e["system"], e["durability"]), e["system"])
            ratio_text = f"{e['ops_per_sync']:.2f}" if e["ops_per_sync"] is not None else "-"
            add(f"| {name} | {e['workload']} ({e['resources']:,} resources) | "
                f"{fmt_ops(e['ops_per_s'])} | {fmt_ops(e['syncs_per_s'])} | {ratio_text} | "
                f"{e['server_cpu_us_per_op'] or 0:.0f} |")
    add("")
    add("### Ceilings")
    add("")
    add("| what | clients | ops/s | p50 ms | p99 ms | CPU µs/op server / client |")
    add("|---|---:|---:|---:|---:|---:|")
    for c in (1, 8, 32):
        e = find(doc, "grpc-empty", "none", "rpc", 0, c)
        if e:
            d = e.get("detail", {})
            add(f"| empty gRPC call (callback server) | {c} | {fmt_ops(e['ops_per_s'])} | "
                f"{fmt_ms(e['p50_us'])} | {fmt_ms(e['p99_us'])} | "
                f"{d.get('server_cpu_us_per_op', 0):.0f} / {d.get('client_cpu_us_per_op', 0):.0f} |")
    f = doc["ceilings"].get("fsync")
    if f:
        add(f"| 4 KiB pwrite + fdatasync loop | 1 | {fmt_ops(f['ops_per_s'])} | "
            f"{fmt_ms(f['p50_us'])} | {fmt_ms(f['p99_us'])} | - |")
    lines.extend(report_python.section(doc, sys.modules[__name__]))
    lines.extend(report_loop.section(doc, sys.modules[__name__]))
    add("")
    # The Scale section: from this file's "scale", else the page's own.
    if doc.get("scale"):
        lines.extend(scale_report.render_section(doc["scale"]))
        add("")
    elif old_scale:
        add(old_scale)
        add("")
    add(HOW_TO_RUN)
    add(METHOD)
    add(report_python.METHOD)
    add(report_loop.METHOD)
    add(ANALYSIS_BEGIN)
    add(analysis.strip("\n") if analysis else "\n(no analysis written yet)\n")
    add(ANALYSIS_END)
    add("")
    return "\n".join(lines)


# The chart compares the durable systems; Redis everysec (not durable) is in
# the tables, where its 5-10x larger bars do not flatten the others.
CHART_SYSTEMS = [s for s in SYSTEM_ORDER if s[1] == "fsync"]


def render_svg(doc):
    groups = [("lock_cycle", 1000, "lock cycle\n1,000 resources"),
              ("lock_cycle", 1, "lock cycle\nhot resource"),
              ("fenced_write", 1000, "fenced write\n1,000 resources"),
              ("fenced_write", 1, "fenced write\nhot resource"),
              ("handoff", 1, "hand-off\n32 queued")]
    values = {}
    for w, r, _ in groups:
        for s in CHART_SYSTEMS:
            e = find(doc, s[0], s[1], w, r, 32)
            if e:
                values[(w, r, s)] = e["ops_per_s"]
    rpc = find(doc, "grpc-empty", "none", "rpc", 0, 32)
    top = max(list(values.values()) + ([rpc["ops_per_s"]] if rpc else []) + [1])
    scale = 10 ** len(str(int(top)))
    step = scale / 10
    while top / step < 4:
        step /= 2
    ymax = step * (int(top / step) + 1)
    width, height = 900, 440
    left, right, top_m, bottom = 70, 20, 50, 90
    plot_w, plot_h = width - left - right, height - top_m - bottom
    y = lambda v: top_m + plot_h * (1 - v / ymax)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
           f'ops/s at 32 clients, fsync before every acknowledgement (higher is better)</text>',
           f'<text x="{width / 2}" y="38" text-anchor="middle" fill="#555">'
           f'git {html.escape(doc["git_sha"][:12])}, {html.escape(doc["generated_at"])}, '
           f'{doc["machine"].get("cores")} cores shared by clients and servers; medians of '
           f'{doc["config"]["runs"]} runs; Redis everysec (not durable) is in the tables</text>']
    v = 0
    while v <= ymax + 1e-9:
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:,.0f}</text>')
        v += step
    charted = [s for s in CHART_SYSTEMS if any(k[2] == s for k in values)] or CHART_SYSTEMS
    group_w = plot_w / len(groups)
    bar_w = group_w * 0.8 / len(charted)
    for gi, (w, r, name) in enumerate(groups):
        x0 = left + gi * group_w + group_w * 0.1
        for si, s in enumerate(charted):
            val = values.get((w, r, s))
            if val is None:
                continue
            x = x0 + si * bar_w
            out.append(f'<rect x="{x:.1f}" y="{y(val):.1f}" width="{bar_w - 2:.1f}" '
                       f'height="{y(0) - y(val):.1f}" fill="{COLOR[s]}"/>')
            out.append(f'<text x="{x + bar_w / 2 - 1:.1f}" y="{y(val) - 3:.1f}" '
                       f'text-anchor="middle" font-size="10">{val:,.0f}</text>')
        for li, text in enumerate(name.split("\n")):
            out.append(f'<text x="{left + gi * group_w + group_w / 2:.1f}" '
                       f'y="{y(0) + 16 + 14 * li:.1f}" text-anchor="middle">{html.escape(text)}</text>')
    if rpc:
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(rpc["ops_per_s"]):.1f}" '
                   f'y2="{y(rpc["ops_per_s"]):.1f}" stroke="#333" stroke-dasharray="6 4"/>')
        out.append(f'<text x="{width - right - 4}" y="{y(rpc["ops_per_s"]) - 5:.1f}" '
                   f'text-anchor="end" fill="#333">empty gRPC call: {rpc["ops_per_s"]:,.0f}/s</text>')
    lx = left
    for s in charted:
        out.append(f'<rect x="{lx}" y="{height - 26}" width="12" height="12" fill="{COLOR[s]}"/>')
        out.append(f'<text x="{lx + 16}" y="{height - 16}">{html.escape(LABEL[s])}</text>')
        lx += 28 + 7 * len(LABEL[s])
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render(args):
    with open(args.results) as f:
        doc = json.load(f)
    analysis = ""
    old = ""
    if os.path.exists(args.markdown):
        with open(args.markdown) as f:
            old = f.read()
        match = re.search(re.escape(ANALYSIS_BEGIN) + r"\n(.*?)" + re.escape(ANALYSIS_END),
                          old, re.S)
        if match:
            analysis = match.group(1)
    if "results" not in doc:
        raise SystemExit(f"render: {args.results} has no speed results (a --scale run "
                         "only? then: report.py render-scale)")
    with open(args.markdown, "w") as f:
        f.write(render_markdown(doc, analysis, scale_report.old_section(old)))
    with open(args.svg, "w") as f:
        f.write(render_svg(doc))
    if doc.get("scale") and args.scale_svg:
        with open(args.scale_svg, "w") as f:
            f.write(scale_report.render_svg(doc["scale"]))


def render_scale(args):
    """Only the Scale section of an existing page, and its chart."""
    with open(args.results) as f:
        doc = json.load(f)
    if not doc.get("scale"):
        raise SystemExit(f"render-scale: {args.results} has no key \"scale\" "
                         "(./scripts/bench --scale writes it)")
    with open(args.markdown) as f:
        page = f.read()
    with open(args.markdown, "w") as f:
        f.write(scale_report.replace_section(page, doc["scale"]))
    with open(args.svg, "w") as f:
        f.write(scale_report.render_svg(doc["scale"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    cpu = sub.add_parser("cpu")
    cpu.add_argument("pids", nargs="*")
    agg = sub.add_parser("aggregate")
    for name in ["raw", "machine", "git_sha", "load_before", "load_after", "quick", "runs",
                 "duration", "warmup", "out"]:
        agg.add_argument(f"--{name}", required=True)
    agg.add_argument("--syncs", default="", help="syncs.jsonl of a --profile run (optional)")
    agg.add_argument("--cpu_before", default="")
    agg.add_argument("--cpu_after", default="")
    ren = sub.add_parser("render")
    for name in ["results", "markdown", "svg"]:
        ren.add_argument(f"--{name}", required=True)
    ren.add_argument("--scale_svg", default="",
                     help="also the Scale chart, when the results have the key \"scale\"")
    ren_scale = sub.add_parser("render-scale")
    for name in ["results", "markdown", "svg"]:
        ren_scale.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    if args.command == "cpu":
        print(json.dumps(cpu_snapshot(args.pids)))
    elif args.command == "aggregate":
        aggregate(args)
    elif args.command == "render-scale":
        render_scale(args)
    else:
        render(args)


if __name__ == "__main__":
    sys.exit(main())
