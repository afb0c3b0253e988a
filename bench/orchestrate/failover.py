"""The election failover row (issue 35): how long an election is without a
leader that writes, when its leader's process dies. For fencegate (its
lock service and gateway) and etcd (the run's single-node etcd, its own
election service), each trial:

  1. starts a candidate (`fencegate-loadgen --shape=elect`, bench/loadgen/
     elect.h) on a fresh election with a TTL of 2 s, and waits for its line
     saying it made its first fenced write as leader;
  2. starts a second candidate, waits for its line saying it campaigns,
     then SETTLE_S (its Campaign reaches the server's queue) and a random
     pause up to the TTL, so the kill falls anywhere in the leader's
     renewal cycle (a third of the TTL) as a crash would;
  3. kills the leader with kill -9 (after noting the wall clock), and waits
     for the successor's first-write line.

failover = the successor's first fenced write - the kill (both
CLOCK_REALTIME, on one machine). Trials alternate between the systems.

  systems(o)                       the systems of this run's row ([]: none)
  run(o, runner, work)             every trial; the path of their JSON lines
                                   (bench/report.py aggregate --failover=)

A trial whose candidate says nothing in time, or exits, is logged and
counted in runner.failures; its processes are killed. Candidates are in
runner.running while they live, so main's cleanup kills them too.
Standard library only.
"""

import json
import os
import queue
import random
import signal
import subprocess
import threading
import time

from .processes import log, tail

TTL = "2s"
TTL_S = 2.0
TRIALS, QUICK_TRIALS = 5, 1
LIFE_S = 60        # a candidate's --duration: it never outlives a trial by much
START_S = 30       # to connect and lead (the first) or campaign (the second)
SETTLE_S = 0.3
AFTER_TTL_S = 10   # the successor's first write, past the TTL


def systems(o):
    """fencegate and etcd, as selected: in a run of every workload when both
    are, or with --workloads naming failover."""
    if o.workloads:
        wanted = ",failover," in f",{o.workloads},"
    else:
        wanted = o.has("fencegate") and o.has("etcd")
    return [s for s in ("fencegate", "etcd") if wanted and o.has(s)]


class TrialFailed(Exception):
    pass


class Candidate:
    """One `--shape=elect` process; its stdout's JSON lines in a queue."""

    def __init__(self, runner, argv, err_path):
        self.runner = runner
        self.err_path = err_path
        with open(err_path, "w") as err:
            self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=err, text=True)
        with runner.lock:
            runner.running.add(self.p)
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                pass
        self.lines.put(None)  # its end

    def wait_for(self, phase, seconds):
        """Its next line of `phase`, or TrialFailed after `seconds`."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TrialFailed(f"no {phase} line within {seconds:.0f} s") from None
            if line is None:
                status = self.p.wait(timeout=10)
                raise TrialFailed(f"exited with status {status} before its {phase} line: "
                                  + tail(self.err_path, 3).strip())
            if line.get("phase") == phase:
                return line

    def kill(self):
        """kill -9, reaped; returns once it is gone."""
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGKILL)
        self.p.wait(timeout=10)
        self.reader.join(timeout=10)
        with self.runner.lock:
            self.runner.running.discard(self.p)


def trial(runner, system, election, err_path):
    """One trial's JSON-able result, or raises TrialFailed."""
    loadgen, args = runner.instance_args(system)
    argv = loadgen + args + ["--shape=elect", f"--run_id={election}", f"--elect_ttl={TTL}",
                             f"--duration={LIFE_S}s"]
    leader = Candidate(runner, argv, err_path + ".1")
    successor = None
    try:
        led = leader.wait_for("first_write", START_S)
        successor = Candidate(runner, argv, err_path + ".2")
        successor.wait_for("campaigning", START_S)
        pause = SETTLE_S + random.uniform(0, TTL_S)
        time.sleep(pause)
        if leader.p.poll() is not None:
            raise TrialFailed(f"the leader exited (status {leader.p.returncode}) before the kill: "
                              + tail(leader.err_path, 3).strip())
        killed_at = time.time()
        leader.kill()
        took = successor.wait_for("first_write", TTL_S + AFTER_TTL_S)
    finally:
        leader.kill()
        if successor:
            successor.kill()
    if took["term"] <= led["term"]:
        raise TrialFailed(f"the successor's term {took['term']} is not above the leader's "
                          f"{led['term']}")
    return {
        "system": system, "ttl_s": TTL_S,
        "failover_s": round(took["first_write_unix_us"] / 1e6 - killed_at, 4),
        "elected_s": round(took["elected_unix_us"] / 1e6 - killed_at, 4),
        "killed_after_lead_s": round(killed_at - led["elected_unix_us"] / 1e6, 4),
        "terms": [led["term"], took["term"]],
    }


def run(o, runner, work):
    """Every trial of every system in systems(o), alternating; the path of
    their JSON lines (one per successful trial)."""
    out = os.path.join(work, "failover.jsonl")
    chosen = systems(o)
    trials = QUICK_TRIALS if o.quick else TRIALS
    log(f"election failover: {trials} trial(s) each of {', '.join(chosen)}, TTL {TTL}, "
        "leader killed with kill -9")
    stamp = int(time.time() * 1000)
    with open(out, "w") as f:
        for n in range(trials):
            for system in chosen:
                election = f"failover-{stamp}-{system}-{n}"
                try:
                    result = trial(runner, system, election, os.path.join(work, "failover.err"))
                except TrialFailed as e:
                    with runner.lock:
                        runner.failures += 1
                    log(f"FAILED: {system} failover trial {n + 1}: {e}")
                    continue
                f.write(json.dumps(result) + "\n")
                f.flush()
                log(f"  {system} failover trial {n + 1}: {result['failover_s']:.3f} s "
                    f"(elected after {result['elected_s']:.3f} s)")
    return out
