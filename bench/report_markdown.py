"""The results page, docs/benchmarks.md, for bench/report.py render and
render-scale: the run, the targets, every table (bench/report_tables.py,
bench/report_python.py, bench/report_loop.py, bench/report_failover.py),
the Scale section (bench/scale_report.py), how to run and what is
measured.

  render(args)        report.py render: the page and docs/benchmarks.svg
                      (bench/report_svg.py) from a results JSON; the
                      hand-written docs/benchmarks-analysis.md, which the
                      page links to, is never touched
  render_scale(args)  report.py render-scale: only the page's Scale section
                      and docs/benchmarks-scale.svg

Standard library only.
"""

import json
import os
import statistics

import report_failover
import report_loop
import report_python
import report_tables
import scale_report
from report_svg import render_svg
from report_systems import KINDS_POINTS, LABEL, SYSTEM_ORDER
from report_tables import (find, fmt_ms, fmt_ops, kinds_section, results_table,
                           sql_fencing_table, stream_targets, targets, targets_table,
                           topology_table)

HOW_TO_RUN = """\
## How to run

```
./scripts/bench                       # full run, ~17 minutes: every system, 3 runs per point
./scripts/bench --systems=python      # only the Python client's points (~1 min)
./scripts/bench --systems=loop,fsync  # only the event-loop clients' points (~3 min)
./scripts/bench --systems=fencegate,etcd,redis --workloads=shared_cycle,rw_mix,multi_cycle
                                      # only the lock kinds' points (~3 min)
./scripts/bench --systems=fencegate,etcd --workloads=failover
                                      # only the election failover row, 5 trials each (~1 min)
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
letting the releaser barge back in (see [the earlier analyses](benchmarks-history.md), "Hand-off").
On the hot resource the load generator also checks mutual exclusion from the
clients' side: a second grant while a client still holds the lock counts as a
failed operation.

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

# The hand-written analysis lives in its own page, which render never
# touches; this page only links to it. A page that still has the old
# in-page analysis section (between these markers) is not overwritten.
ANALYSIS_PAGE = "benchmarks-analysis.md"
OLD_ANALYSIS_BEGIN = "<!-- analysis:begin"

ANALYSIS = f"""\
## Analysis

Why the figures are what they are (where the CPU and the bytes go, profiles,
same-machine A/Bs, why ratios differ between runs and machines) is written by
hand in [{ANALYSIS_PAGE}]({ANALYSIS_PAGE}); regenerating
this page leaves it as it is.
"""


def render_markdown(doc, old_scale=""):
    m = doc["machine"]
    cfg = doc["config"]
    lines = []
    add = lines.append

    def heading(title):
        """A "### title" subsection, set off by blank lines."""
        add("")
        add(f"### {title}")
        add("")

    add("# Benchmarks: fencegate, etcd and Redis side by side")
    add("")
    add("For anyone comparing fencegate with etcd, Redis and the bare-gRPC and fsync "
        "ceilings: generated by `./scripts/bench` (`bench/report.py render`) from "
        "`bench/results/latest.json`, so edits by hand are lost when it runs again; "
        f"the analysis, written by hand, is [{ANALYSIS_PAGE}]({ANALYSIS_PAGE}).")
    add("")
    add("Only ratios within one run mean anything: every system below was measured in "
        "the same run, interleaved, on the same machine.")
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
                heading(f"{title}, {rname}")
                add(table)
    pipelined = results_table(doc, "pipelined_write", 1000)
    if pipelined:
        heading("Pipelined fenced writes: one client, 32 in flight, 1,000 resources")
        add("One connection: fencegate's gateway Session stream, Redis' RESP with 32 "
            "commands pipelined (hiredis). The client sends as many new writes as were "
            "answered, so 32 are always in flight; latency is per write.")
        add("")
        add(pipelined)
    topologies = topology_table(doc)
    if topologies:
        heading("The gateway on SQLite and on PostgreSQL")
        add("Latency per fenced write (1 KiB) with the gateway's storage embedded (SQLite, "
            "the default) and on a PostgreSQL server on the same machine (`--storage "
            "postgres`; over loopback TCP, fsync and synchronous_commit on), in the same run. "
            "Each cell: p50 / p99 in ms; ratio: PostgreSQL over SQLite (above 1: slower).")
        add("")
        add(topologies)
    sql = sql_fencing_table(doc)
    if sql:
        heading("Fencing in SQL: the cost of the check")
        add("A write (1 KiB upsert) to a table of the user's own on the same PostgreSQL server, "
            "one transaction per write, with `SELECT fencegate_fence(resource, token)` as its "
            "first statement (docs/sql-fencing.md) and without it, in the same run. Each cell: "
            "p50 / p99 in ms; ratio: fenced over unfenced (above 1: slower).")
        add("")
        add(sql)
    handoffs = [e for e in doc["results"] if e["workload"] == "handoff"]
    if handoffs:
        heading("Hand-off: 32 clients queued on one resource")
        add("Cycles/s: acquire, one fenced write, release, by any client. Hand-offs/s: the "
            "cycles whose lock came from another client (a lock that lets the releaser "
            "barge back in has fewer). Waiting time = from asking for the lock to holding "
            "it. Fairness: Jain's index over cycles per client (1 = all equal) and the "
            "fewest / most cycles any client got.")
        add("")
        add("| system | cycles/s | hand-offs/s | wait p50 ms | wait p99 ms | wait max ms | Jain | min / max per client |")
        add("|---|---:|---:|---:|---:|---:|---:|---:|")
        # The event-loop clients (issue 32; bench/report_loop.py) after the
        # thread-per-client ones.
        for s, label in ([(s, LABEL[s]) for s in SYSTEM_ORDER]
                         + [(("fencegate-loop", "fsync"), "fencegate, event-loop clients"),
                            (("redis-loop", "fsync"), "Redis always, event-loop clients")]):
            e = find(doc, s[0], s[1], "handoff", 1, 32)
            if e:
                d = e["detail"]
                add(f"| {label} | {fmt_ops(e['ops_per_s'])} | "
                    f"{fmt_ops(d.get('holder_changes_per_s', 0))} | {fmt_ms(d['wait_p50_us'])} | "
                    f"{fmt_ms(d['wait_p99_us'])} | {fmt_ms(d['wait_max_us'])} | "
                    f"{d['jain_fairness']:.3f} | {d['client_ops_min']:.0f} / {d['client_ops_max']:.0f} |")
    lines.extend(report_failover.section(doc))
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
        heading("CPU per operation at 32 clients")
        add("Microseconds of CPU per completed op inside the measured window: server "
            "process(es) / load generator. With clients and servers sharing "
            f"{m.get('cores')} cores, throughput at 32 clients is close to "
            "cores / (server + client CPU per op) whenever the disk is not the limit.")
        add("")
        add("| workload | " + " | ".join(LABEL[s] for s in measured) + " |")
        add("|---|" + "---:|" * len(measured))
        lines.extend(cpu_rows)
    if doc.get("syncs"):
        heading("fsyncs per operation (`--profile` runs)")
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
    heading("Ceilings")
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
    lines.extend(report_python.section(doc, report_tables))
    lines.extend(report_loop.section(doc, report_tables))
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
    add(report_failover.METHOD)
    add(ANALYSIS)
    return "\n".join(lines)


def render(args):
    with open(args.results) as f:
        doc = json.load(f)
    old = ""
    if os.path.exists(args.markdown):
        with open(args.markdown) as f:
            old = f.read()
    if OLD_ANALYSIS_BEGIN in old:
        raise SystemExit(f"render: {args.markdown} has a hand-written analysis section; it "
                         f"belongs in docs/{ANALYSIS_PAGE} (move it there, then render again)")
    if "results" not in doc:
        raise SystemExit(f"render: {args.results} has no speed results (a --scale run "
                         "only? then: report.py render-scale)")
    with open(args.markdown, "w") as f:
        f.write(render_markdown(doc, scale_report.old_section(old)))
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

