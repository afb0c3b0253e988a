"""The aggregation half of bench/report.py: CPU-time snapshots of the
machine and of the benchmark's own processes (the "was the machine busy"
figure), and the medians of fencegate-loadgen's JSON lines written as the
results JSON (bench/report.py's header gives its schema).

  cpu_snapshot(pids)          one snapshot, a dict (report.py cpu prints it)
  other_cpu_share(a, b)       the share of the machine's CPU others used
  aggregate(args)             report.py aggregate: raw JSON lines -> --out

The key "scale" (bench/scale.py) is kept when aggregate rewrites the file.
Standard library only.
"""

import datetime
import json
import os
import statistics

import report_failover
from report_systems import SYSTEM_ORDER

RUN_FIELDS = ["ops_per_s", "p50_us", "p99_us", "max_us", "ops", "errors",
              "not_acquired", "abandoned", "client_cpu_us_per_op", "server_cpu_us_per_op",
              "other_cpu_share"]
CPU_FIELDS = ["client_cpu_us_per_op", "server_cpu_us_per_op", "other_cpu_share",
              "client_switches_per_op", "server_switches_per_op"]
RW_MIX_FIELDS = ["writes_per_s", "wait_p50_us", "wait_p99_us", "wait_max_us"]
# fencegate's runs: the calls one commit carried, by server, from its
# metrics (bench/orchestrate/point.py); absent for other systems.
COMMIT_FIELDS = ["gateway_items_per_commit", "lockservice_items_per_commit"]
HANDOFF_FIELDS = ["holder_changes_per_s", "wait_p50_us", "wait_p99_us", "wait_max_us", "jain_fairness",
                  "client_ops_min", "client_ops_max"]


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
        entry["detail"].update({k: round(median([r[k] for r in group if k in r]), 2)
                                for k in COMMIT_FIELDS if any(k in r for r in group)})
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
    failover = report_failover.summarize(args.failover)
    if failover:
        doc["failover"] = failover
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

