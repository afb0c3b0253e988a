"""The tables of docs/benchmarks.md, for bench/report_markdown.py and the
sections of bench/report_loop.py and bench/report_python.py (which take
this module as `r`): finding a result, formatting figures, the ratios each
issue targets and their verdicts, the results tables, the gateway's
topologies, fencing in SQL, and the lock kinds' section.

Standard library only.
"""

from report_systems import KINDS_POINTS, LABEL, SYSTEM_ORDER


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


def holder_changes_ratio(a, b):
    """a's hand-offs/s over b's (cycles whose lock went to another client),
    or None when either is missing or b had none."""
    if not a or not b or b["detail"].get("holder_changes_per_s", 0) <= 0:
        return None
    return a["detail"]["holder_changes_per_s"] / b["detail"]["holder_changes_per_s"]


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
    for peer, name, target in [(etcd, "etcd", 5.0), (redis, "Redis always", 1.0)]:
        a, b = fg("handoff", 1, 32), peer("handoff", 1, 32)
        out.append((f"hand-off, 32 clients: fencegate / {name}", ratio(a, b), target, True,
                    "acquire-write-release cycles/s"))
        out.append((f"hand-off, 32 clients: fencegate / {name}", holder_changes_ratio(a, b),
                    target, True, "cycles/s where the lock went to another client"))
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

