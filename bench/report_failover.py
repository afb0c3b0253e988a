"""The election failover row's part of bench/report.py (issue 35): its
trials (bench/orchestrate/failover.py, one JSON line each) summed up into
the results JSON's "failover", and its table on docs/benchmarks.md.

  summarize(path)   [{"system", "ttl_s", "trials", "failover_median_s",
                    "failover_max_s", "failover_min_s", "elected_median_s",
                    "runs": [each trial]}], fencegate first; [] without
                    trials (no path, or none succeeded)
  section(doc)      the "Election failover" subsection's lines, [] when the
                    results have none
  METHOD            what the row measures, for the page's method section

Standard library only.
"""

import json
import os
import statistics

SYSTEMS = [("fencegate", "fencegate (lock service + gateway)"),
           ("etcd", "etcd (Election service, Txn on the leader key)")]

METHOD = """\
**Election failover** (issue 35; in a full run, and alone with
`./scripts/bench --workloads=failover`): how long an election goes without
a leader that writes when the leader's process dies. Each trial starts a
candidate (`fencegate-loadgen --shape=elect`, `bench/loadgen/elect.h`) on a
fresh election with a TTL of 2 s; once it has made its first fenced write as
leader, a second candidate campaigns, and after a random pause (so the kill
falls anywhere in the leader's renewal cycle) the first is killed with
`kill -9`. Failover is the time from the kill to the successor's first
successful fenced write (both wall clocks, one machine); "elected" is the
time to its Campaign's answer. fencegate: `LockClient::Campaign` (the term's
lease renews itself every third of the TTL), then `GatewayClient::Put` with
the term's lease every 5 ms. etcd: its own election service
(`v3electionpb.Election/Campaign`, vendored in `third_party/etcd/`) on a
lease of 2 s that the candidate keeps alive every third of the TTL, as
etcd's Go `concurrency.Session` does; then every 5 ms a Txn that puts a key
only if the leader key's create revision is unchanged, etcd's fencing of a
leader. Both leases outlive a dead client's connection, so neither hands
over before the lease runs out: the leader's last renewal was up to a
third of the TTL before the kill, so the term ends between 2/3 of the TTL
and the whole TTL after it. fencegate ends a lease on a timer at its expiry, then
grants the next candidate in line and commits; etcd looks for expired
leases every 500 ms, then revokes the lease through raft, and its watch
wakes the waiting Campaign.
"""


def summarize(path):
    if not path or not os.path.exists(path):
        return []
    trials = []
    with open(path) as f:
        for line in f:
            if line.strip():
                trials.append(json.loads(line))
    out = []
    for system, _ in SYSTEMS:
        runs = [t for t in trials if t["system"] == system]
        if not runs:
            continue
        failovers = [t["failover_s"] for t in runs]
        out.append({
            "system": system,
            "ttl_s": runs[0]["ttl_s"],
            "trials": len(runs),
            "failover_median_s": round(statistics.median(failovers), 4),
            "failover_max_s": round(max(failovers), 4),
            "failover_min_s": round(min(failovers), 4),
            "elected_median_s": round(statistics.median(t["elected_s"] for t in runs), 4),
            "runs": [{k: v for k, v in t.items() if k != "system"} for t in runs],
        })
    return out


def section(doc):
    rows = {e["system"]: e for e in doc.get("failover", [])}
    if not rows:
        return []
    ttl = next(iter(rows.values()))["ttl_s"]
    lines = ["", f"### Election failover: the leader killed with kill -9, TTL {ttl:g} s", "",
             "Seconds from the kill of the leader's process to its successor's first "
             "successful fenced write (elected: to its Campaign's answer), over the trials "
             "(a random point of the leader's renewal cycle each). Neither system ends a "
             f"lease when its client's connection drops, so the TTL ({ttl:g} s) less the "
             "time since the leader's last renewal (at most a third of it) is the floor.", "",
             "| system | trials | failover median s | max s | min s | elected median s |",
             "|---|---:|---:|---:|---:|---:|"]
    for system, label in SYSTEMS:
        e = rows.get(system)
        if e:
            lines.append(f"| {label} | {e['trials']} | {e['failover_median_s']:.3f} | "
                         f"{e['failover_max_s']:.3f} | {e['failover_min_s']:.3f} | "
                         f"{e['elected_median_s']:.3f} |")
    return lines
