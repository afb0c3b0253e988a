"""The event-loop clients' part of docs/benchmarks.md (issue 32), for
bench/report.py: fencegate through its C++ client library's asynchronous
calls ("fencegate-loop"), Redis on hiredis' async API and libevent
("redis-loop"), and gRPC's streaming echo on its callback API ("echo-stream")
and on its asynchronous API ("echo-cq"), all driven by
`fencegate-loadgen --shape=loop` (bench/loadgen/loop_workloads.h) in the
rotation of the thread-shaped points (./scripts/bench's system `loop`).

  section(doc, r)   the "Event-loop clients" subsection, [] when the run has
                    no such results; r is bench/report_tables.py (its
                    find, fmt_ops, fmt_ms, ratio, holder_changes_ratio and
                    targets_table)
  METHOD            what the rows measure, for the page's method section

Standard library only.
"""

SYSTEMS = [("fencegate-loop", "fsync", "fencegate, C++ client library, async calls"),
           ("redis-loop", "fsync", "Redis always, hiredis async on libevent"),
           ("redis-always", "fsync", "Redis always, hiredis blocking, a thread per client"),
           ("echo-stream", "none", "gRPC streaming echo, 1 KiB, no work, callback API"),
           ("echo-cq", "none", "the same echo, asynchronous API, one thread a side")]
POINTS = [("lock_cycle", 1000, 32, "lock cycle, 1,000 resources, 32 clients"),
          ("fenced_write", 1000, 32, "fenced write, 1,000 resources, 32 clients"),
          ("fenced_write", 1, 32, "fenced write, hot resource, 32 clients"),
          ("fenced_write", 1000, 1, "fenced write, 1 client"),
          ("handoff", 1, 32, "hand-off, 32 clients on one resource (cycles)")]

METHOD = """\
**Event-loop clients** (issue 32; `./scripts/bench --systems=loop`, in the
default run): `fencegate-loadgen --shape=loop` runs each client as a closed
loop inside its own completion callbacks, one operation in flight, with no
thread per client, each client on a connection of its own.
`fencegate-loop` is fencegate's C++ client library as a user gets it: a
`LockClient` and a `GatewayClient` per client, `WriteAsync` for a fenced
write, `AcquireAsync` (try-lock) then `ReleaseAsync` from its callback for a
lock cycle, `AcquireAsync` waiting in the server's queue, `WriteAsync` and
`ReleaseAsync` for a hand-off, all on the servers' Session streams; the
callbacks run on gRPC's threads. `redis-loop` is hiredis' asynchronous API
on libevent, every connection on one event thread, with the commands of the
blocking driver (`SET NX PX` and the compare-and-delete script; the
fenced-set script; for a hand-off the fenced acquire script, tried again
after a libevent timer of `--redis_retry` with the same jitter, since Redis
keeps no queue of waiters) against the appendfsync-always Redis;
`redis-always` is that blocking driver with a thread per client, for
comparison. `echo-stream` is the floor of a
Session call: the echo server's `Echo.Stream`, one stream per client, one
1 KiB message in flight, on gRPC's callback API at both ends, as
fencegate's servers and client library use it. `echo-cq` is the same echo
on gRPC's asynchronous API at both ends (`fencegate-echo-server --api=cq`,
`--system=grpc-empty-cq`): one thread a side takes every event from one
completion queue, the other design a Session transport could take (issue
32, item 4). Context switches per op are the servers' (every
thread's, from /proc/PID/task/*/status) and the load generator's
(getrusage) inside the window. The targets are issue 32's: fenced writes at
least 1.0x redis-loop, lock cycles at least 0.75x, server CPU per op at most
1.5x (writes) and 2x (cycles) Redis'; where a throughput target is missed,
fenced writes at least 0.8x and lock cycles (two calls) at least 0.4x of
the echo's ops/s at 32 streams; hand-offs at least 1.2x redis-loop, with
Jain's index at least 0.99. A Redis lock lets its releaser take it back
before a waiter's next try, so its cycles and its hand-offs (cycles whose
lock came from another client) differ: both ratios are shown.
"""


def _row(r, e, label, per_commit_key):
    d = e.get("detail", {})
    per_commit = d.get(per_commit_key)
    return (f"| {label} | {r.fmt_ops(e['ops_per_s'])} | {r.fmt_ms(e['p50_us'])} | "
            f"{r.fmt_ms(e['p99_us'])} | {d.get('server_cpu_us_per_op', 0):.0f} / "
            f"{d.get('client_cpu_us_per_op', 0):.0f} | "
            f"{d.get('server_switches_per_op', 0):.2f} / "
            f"{d.get('client_switches_per_op', 0):.2f} | "
            f"{'' if per_commit is None else f'{per_commit:.1f}'} |")


def _cpu_ratio(a, b):
    if not a or not b:
        return None
    x = a.get("detail", {}).get("server_cpu_us_per_op", 0)
    y = b.get("detail", {}).get("server_cpu_us_per_op", 0)
    return x / y if y > 0 else None


def section(doc, r):
    def get(system, workload, resources, clients):
        durability = dict((s, d) for s, d, _ in SYSTEMS)[system]
        if system in ("echo-stream", "echo-cq"):
            return r.find(doc, system, durability, "rpc", 0, clients)
        return r.find(doc, system, durability, workload, resources, clients)

    if not any(get("fencegate-loop", w, res, c) for w, res, c, _ in POINTS):
        return []
    out = ["", "### Event-loop clients (issue 32)", "",
           "Each client a closed loop in its completion callbacks, no thread per client "
           "(bench/report_loop.py). CPU in µs per op and context switches per op, each "
           "server / client; the echo's row is its empty round trip at the same client count. "
           "Per commit: the calls one commit of fencegate's server carried (its "
           "commit histogram over the run, warm-up included): the gateway's for "
           "fenced writes, the lock service's for lock cycles."]
    for w, res, c, title in POINTS:
        key = {"fenced_write": "gateway", "lock_cycle": "lockservice"}.get(w, "") + \
            "_items_per_commit"
        # A hand-off is no round trip: the echo's row says nothing of it.
        rows = [(s, label, get(s, w, res, c)) for s, _, label in SYSTEMS
                if w != "handoff" or not s.startswith("echo")]
        if not any(e for s, _, e in rows if s.endswith("-loop")):
            continue
        out += ["", f"**{title}**", "",
                "| system | ops/s | p50 ms | p99 ms | CPU server / client | "
                "switches server / client | per commit |", "|---|---:|---:|---:|---:|---:|---:|"]
        out += [_row(r, e, f"{s} ({label})", key) for s, label, e in rows if e]
    fg = lambda w, res, c=32: get("fencegate-loop", w, res, c)  # noqa: E731
    rl = lambda w, res, c=32: get("redis-loop", w, res, c)  # noqa: E731
    echo = get("echo-stream", "rpc", 0, 32)
    echo1 = get("echo-stream", "rpc", 0, 1)
    fsync = doc.get("ceilings", {}).get("fsync")
    floor = None
    if echo1 and fsync:
        floor = {"ops_per_s": 1e6 / (echo1["p50_us"] + fsync["p50_us"])}
    one = fg("fenced_write", 1000, 1)
    p50_ratio = one["p50_us"] / (1e6 / floor["ops_per_s"]) if one and floor else None
    half_echo = dict(echo, ops_per_s=echo["ops_per_s"] / 2) if echo else None
    rows = [("fenced write, 1,000: fencegate-loop / redis-loop",
             r.ratio(fg("fenced_write", 1000), rl("fenced_write", 1000)), 1.0, True, "ops/s"),
            ("fenced write, hot: fencegate-loop / redis-loop",
             r.ratio(fg("fenced_write", 1), rl("fenced_write", 1)), 1.0, True, "ops/s"),
            ("lock cycle, 1,000: fencegate-loop / redis-loop",
             r.ratio(fg("lock_cycle", 1000), rl("lock_cycle", 1000)), 0.75, True, "ops/s"),
            ("server CPU per fenced write: fencegate / Redis",
             _cpu_ratio(fg("fenced_write", 1000), rl("fenced_write", 1000)), 1.5, False,
             "µs/op"),
            ("server CPU per lock cycle: fencegate / Redis",
             _cpu_ratio(fg("lock_cycle", 1000), rl("lock_cycle", 1000)), 2.0, False, "µs/op"),
            ("hand-off: fencegate-loop / redis-loop",
             r.ratio(fg("handoff", 1), rl("handoff", 1)), 1.2, True,
             "acquire-write-release cycles/s"),
            ("hand-off: fencegate-loop / redis-loop",
             r.holder_changes_ratio(fg("handoff", 1), rl("handoff", 1)), 1.2, True,
             "cycles/s where the lock went to another client"),
            ("hand-off: fencegate-loop, Jain's fairness index",
             fg("handoff", 1)["detail"]["jain_fairness"] if fg("handoff", 1) else None, 0.99,
             True, "an index, not a ratio"),
            ("1 client: fenced-write p50 / (echo p50 + fsync p50)", p50_ratio, 1.3, False,
             "latency"),
            ("fenced write, 1,000: fencegate-loop / echo-stream (where missed above)",
             r.ratio(fg("fenced_write", 1000), echo), 0.8, True, "ops/s; one call per op"),
            ("lock cycle, 1,000: fencegate-loop / echo-stream (where missed above)",
             r.ratio(fg("lock_cycle", 1000), half_echo), 0.8, True,
             "ops/s against half the echo's: two calls per op, 0.4x of the echo")]
    out += ["", "Targets (issue 32):", ""] + r.targets_table(rows)
    return out
