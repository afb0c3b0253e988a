"""The Python client's part of docs/benchmarks.md (issue 33), for
bench/report.py: the results of bench/python/loadgen.py (./scripts/bench's
system `python`), beside redis-py and a bare grpc.aio stream measured in the
same run.

  section(doc, r)   the "Python client" subsection, [] when the run has no
                    python-* results; r is bench/report_tables.py (its
                    find, fmt_ops, fmt_ms, ratio and targets_table)
  METHOD            what the rows measure, for the page's method section

Standard library only.
"""

SYSTEMS = [("python-fencegate", "fsync", "fencegate.aio"),
           ("python-redis", "fsync", "redis.asyncio, Redis always"),
           ("python-echo", "none", "grpc.aio stream, echo server")]
POINTS = [("lock_cycle", 1000, "lock cycle"), ("fenced_write", 1000, "fenced write (1 KiB)"),
          ("rpc", 0, "echo round trip")]

METHOD = """\
**The Python client** (issue 33; `./scripts/bench --systems=python`, in the
default run): `bench/python/loadgen.py` runs the same closed loop from one
asyncio process, 32 tasks on 1,000 resources, in the rotation of the
32-client points above, against the same servers. `python-fencegate` is
`fencegate.aio` as a user gets it: one `LockClient` and one `GatewayClient`
shared by the tasks, every call on their Session streams (the default);
a lock cycle is `acquire(wait=0)` + `release()`, a fenced write a `put`
under one of 1,000 leases taken before the clock starts.
`python-redis` is `redis.asyncio` (Debian's `python3-redis`, whose pool
gives each task in flight a connection) against the appendfsync-always
Redis, with the C++ driver's Lua scripts: `SET NX PX` and the
compare-and-delete script for a lock cycle, the check-and-set script for a
fenced write. `python-echo` is the ceiling of a Python gRPC client of that
shape: one `grpc.aio` bidirectional stream to the echo server
(`Echo.Stream`), the tasks' 8-byte messages in flight on it, a reader task
handing each answer to its caller. The target: fenced writes at least 1.0x
and lock cycles at least 0.75x of redis-py; where missed, the client at
least 0.8x of the echo stream (a lock cycle is two calls, so against half
the echo's rate). Client CPU is the Python process's (event loop and gRPC's
threads) per op.
"""


def section(doc, r):
    found = {(s, w): r.find(doc, s, d, w, res, 32)
             for s, d, _ in SYSTEMS for w, res, _ in POINTS}
    if not any(found.values()):
        return []
    out = ["", "### Python client (issue 33): 32 asyncio tasks, 1,000 resources", "",
           "Each cell: ops/s (p50 / p99 latency in ms) / client CPU µs per op (the Python "
           "process). Measured in the rotation of the 32-client points above (bench/python/).",
           "", "| system | " + " | ".join(name for _, _, name in POINTS) + " |",
           "|---|" + "---:|" * len(POINTS)]
    for s, _, label in SYSTEMS:
        cells = []
        for w, _, _ in POINTS:
            e = found[(s, w)]
            cells.append(f"{r.fmt_ops(e['ops_per_s'])} ({r.fmt_ms(e['p50_us'])} / "
                         f"{r.fmt_ms(e['p99_us'])}) / "
                         f"{e['detail'].get('client_cpu_us_per_op', 0):.0f}" if e else "-")
        if any(c != "-" for c in cells):
            out.append(f"| {s} ({label}) | " + " | ".join(cells) + " |")
    fg = lambda w: found[("python-fencegate", w)]  # noqa: E731
    redis = lambda w: found[("python-redis", w)]  # noqa: E731
    echo = found[("python-echo", "rpc")]
    half_echo = dict(echo, ops_per_s=echo["ops_per_s"] / 2) if echo else None
    rows = [("fenced write: python-fencegate / python-redis",
             r.ratio(fg("fenced_write"), redis("fenced_write")), 1.0, True, "ops/s"),
            ("lock cycle: python-fencegate / python-redis",
             r.ratio(fg("lock_cycle"), redis("lock_cycle")), 0.75, True, "ops/s"),
            ("fenced write: python-fencegate / python-echo (where the above is missed)",
             r.ratio(fg("fenced_write"), echo), 0.8, True, "ops/s; one call per op"),
            ("lock cycle: python-fencegate / (python-echo / 2) (where the above is missed)",
             r.ratio(fg("lock_cycle"), half_echo), 0.8, True, "ops/s; two calls per op")]
    out += ["", "Targets:", ""] + r.targets_table(rows)
    return out
