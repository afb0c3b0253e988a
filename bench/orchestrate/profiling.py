"""--profile: after the measured runs, perf profiles of fencegate's servers
under load (bench/results/profile-*.txt), and every durable system's fsyncs
per op (bench/results/syncs.jsonl, which aggregate folds into the results).
Their runs are not part of the results (perf slows the servers): main
points the Runner at another raw file first.

  profiles(runner, servers, procs, work)     needs fencegate in --systems
  syncs(runner, servers, lock_instances)     -> the syncs file's path

Standard library only.
"""

import os
import re
import shutil
import signal
import subprocess
import threading
import time

from .options import Exit
from .processes import log

RESULTS = "bench/results"


def _perf_report(perf_data, *args, limit=None):
    """perf report's text without its comments and empty lines."""
    try:
        text = subprocess.run(["perf", "report", "-i", perf_data, "--stdio", *args],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=600).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    lines = [ln for ln in text.split("\n") if ln and not ln.startswith("#")]
    return lines[:limit] if limit else lines


def profile_one(runner, servers, procs, work, name, server, workload, resources, clients,
                instance):
    report = os.path.join(RESULTS, f"profile-{name}.txt")
    perf_data = os.path.join(work, f"{name}.perf")
    perf = f"perf-{name}"
    procs.start(perf, ["perf", "record", "-g", "-F", "999", "-p", servers.pid(server),
                       "-o", perf_data], log_path=os.devnull)
    runner.run_one(instance, workload, resources, clients, duration="5s")
    procs.stop(perf, signal.SIGINT, grace_s=60)
    lines = [f"# {server} under {workload}, {resources} resources, {clients} clients: "
             f"{runner.last_line()}", "# CPU by thread and library (self time)"]
    lines += _perf_report(perf_data, "--no-children", "-g", "none", "--sort", "comm,dso",
                          "--percent-limit", "1")
    lines += ["# hottest functions (self time)"]
    lines += _perf_report(perf_data, "--no-children", "-g", "none", "--sort", "dso,symbol",
                          "--percent-limit", "0.8")
    lines += ["# functions with their callees (inclusive time)"]
    lines += _perf_report(perf_data, "--children", "-g", "none", "--sort", "symbol",
                          "--percent-limit", "4", limit=60)
    with open(report, "w") as f:
        f.write("\n".join(lines) + "\n")
    log(f"profile: {report}")


def profiles(runner, servers, procs, work):
    if not shutil.which("perf"):
        log("--profile needs perf (apt-get install linux-perf)")
        raise Exit(1)
    os.makedirs(RESULTS, exist_ok=True)
    for args in [("lock_cycle-lockservice", "lockservice", "lock_cycle", 1000, 32, "fencegate"),
                 ("fenced_write-gateway", "gateway", "fenced_write", 1000, 32, "fencegate"),
                 ("handoff-lockservice", "lockservice", "handoff", 1, 32, "fencegate"),
                 # The same servers with every call on their Session streams.
                 ("lock_cycle-lockservice-stream", "lockservice", "lock_cycle", 1000, 32,
                  "fencegate-stream"),
                 ("fenced_write-gateway-stream", "gateway", "fenced_write", 1000, 32,
                  "fencegate-stream")]:
        profile_one(runner, servers, procs, work, *args)


def server_pids_of(servers, instance):
    pid = servers.pid
    if instance in ("fencegate", "fencegate-stream"):
        return f"{pid('lockservice')},{pid('gateway')}"
    if instance == "fencegate-nometrics":
        return f"{pid('lockservice-nometrics')},{pid('gateway-nometrics')}"
    if instance == "fencegate-etcd":
        return f"{pid(servers.fg_leader)},{pid('etcd-fencegate')},{pid('gateway')}"
    if instance in ("etcd", "redis-always", "redis-everysec"):
        return pid(instance)
    return ""


def _count_syncs(pids):
    """fsync + fdatasync calls of `pids` over 4 s (perf stat); 0 when perf fails."""
    try:
        p = subprocess.run(["perf", "stat", "-x,", "-e",
                            "syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync",
                            "-p", pids, "--", "sleep", "4"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    if p.returncode != 0:
        return 0
    total = 0
    for line in p.stderr.splitlines():
        if "sys_enter" in line:
            number = re.match(r"\s*(\d+)", line.split(",")[0])  # "<not counted>": 0
            total += int(number.group(1)) if number else 0
    return total


def syncs(runner, servers, lock_instances):
    """Syncs per operation: how well each durable system batches its fsyncs.
    perf counts the servers' fsync/fdatasync calls for 4 s in the middle of
    a 7 s run (after its setup and warm-up); ops/s is the run's own figure.
    As before, a failed run here is logged, not counted in the exit status."""
    path = os.path.join(RESULTS, "syncs.jsonl")
    open(path, "w").close()
    for inst in lock_instances:
        for workload, resources, clients in [("lock_cycle", 1000, 32),
                                             ("fenced_write", 1000, 32), ("handoff", 1, 32)]:
            run = threading.Thread(target=runner.run_one, daemon=True,
                                   args=(inst, workload, resources, clients),
                                   kwargs=dict(duration="7s", warmup="1s", count_failure=False))
            run.start()
            time.sleep(2.5)  # a point in time inside the run, not a wait for an event
            counts = _count_syncs(server_pids_of(servers, inst))
            run.join(timeout=300)
            if run.is_alive():
                runner.kill_running()
                run.join(timeout=30)
            with open(path, "a") as f:
                f.write(f'{{"instance": "{inst}", "workload": "{workload}", '
                        f'"syncs_per_s": {counts // 4}, "run": {runner.last_line()}}}\n')
            log(f"syncs: {inst} {workload}: {counts // 4}/s")
    return path
