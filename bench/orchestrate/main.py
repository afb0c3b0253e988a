"""./scripts/bench's body: the options, the install and build (without
--build-dir), then either the scale runs (bench/scale.py) or the speed runs:
the servers (servers.py), every point against every instance, interleaved
(run 1 of every instance, then run 2, ...) so a machine that gets busier
part way slows every system alike (plan.py, point.py), the election
failover trials (failover.py), the optional profiles (profiling.py), the
results JSON and the pages (results.py).

Every process it starts is stopped by PID on exit, error, Ctrl-C or
SIGTERM (cleanup, with bounded waits); a second Ctrl-C during the cleanup
does not cut it short. Exit status: 0 when every run succeeded; 1 when one
failed or a server did not start; 2 for a wrong argument; 130 after Ctrl-C,
143 after SIGTERM.

Standard library only.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import options as options_mod
from . import failover, plan, profiling, results
from .options import Exit
from .point import Runner, cpu_snapshot, loadavg, machine_info
from .processes import Processes, log
from .servers import Servers

CHILD_GRACE_S = 60


def _terminated(signum, frame):
    raise SystemExit(128 + signum)


def run_child(argv):
    """Runs a script of the project in the foreground; its exit status.
    Interrupted, it gets the signal (Ctrl-C reaches it directly, SIGTERM is
    passed on) and CHILD_GRACE_S to clean up after itself, then SIGKILL."""
    p = subprocess.Popen(argv)
    try:
        return p.wait()
    except BaseException as e:
        if not isinstance(e, KeyboardInterrupt) and p.poll() is None:
            p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=CHILD_GRACE_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        raise


def prepare(o):
    """Installs what is missing and builds into ./build, unless --build-dir;
    the absolute build dir."""
    build_dir = o.build_dir
    if not build_dir:
        for argv in (["./scripts/install-deps", *options_mod.packages(o)],
                     ["./scripts/build", "--tests"]):
            status = run_child(argv)
            if status != 0:
                raise Exit(status)
        build_dir = "build"
    if not os.path.isdir(build_dir):
        raise Exit(1, f"bench: --build-dir={build_dir}: no such directory")
    return os.path.abspath(build_dir)


def run_scale(o, build_dir):
    args = [sys.executable, "bench/scale.py", f"--build-dir={build_dir}",
            f"--sizes={o.scale_sizes}", f"--sha={results.git_sha(o.sha, dirty=False)}",
            f"--out={o.scale_out}", *o.scale_runs]
    if not o.has("redis"):
        args.append("--without-redis")
    parts = "leases,waiters,gateway"
    if o.has("etcd") or o.store:
        parts += ",etcd"
    status = run_child(args + [f"--parts={parts}"])
    if status != 0:
        return status
    if o.docs:
        results.render_scale_docs(o)
    return 0


def check_binaries(build_dir):
    for path in ["bench/fencegate-loadgen", "lockservice/fencegate-lockservice",
                 "cli/fencegate", "gateway/fencegate-gateway", "bench/fencegate-echo-server"]:
        binary = os.path.join(build_dir, path)
        if not os.access(binary, os.X_OK):
            raise Exit(1, f"bench: {binary} is not built")


def run_points(o, runner, points, load_before):
    """Every point's runs; when they started (time.monotonic())."""
    log(f"{o.runs} run(s) of {o.duration} (+{o.warmup} warm-up) per point, {len(points)} "
        f"points; load average before: {load_before}")
    started = time.monotonic()
    for p in points:
        n = len(p.instances)
        for run in range(int(o.runs)):
            # Rotate who goes first so no system always follows the same neighbour.
            for i in range(n):
                runner.run_one(p.instances[(i + run) % n], p.workload, p.resources, p.clients)
        if o.has("fsync") and p.workload != "fsync":
            runner.run_one("fsync", "fsync", 0, 1)
        log(f"  {p.workload} resources={p.resources} clients={p.clients} done "
            f"({int(time.monotonic() - started)} s)")
    return started


def run_speed(o, build_dir, root):
    work = tempfile.mkdtemp(prefix="fencegate-bench.", dir=os.environ.get("TMPDIR") or "/tmp")
    procs = Processes(work)
    servers = Servers(o, procs, work, build_dir)
    runner = None
    try:
        servers.start()
        runner = Runner(o, servers, procs, work, build_dir, root)
        load_before = loadavg()
        points = plan.points(o, servers.loop_redis)
        cpu_before = cpu_snapshot(servers, procs)
        started = run_points(o, runner, points, load_before)
        failovers = failover.run(o, runner, work) if failover.systems(o) else ""
        load_after = loadavg()
        cpu_after = cpu_snapshot(servers, procs)
        # Kept, so a failure in the optional steps below does not lose the
        # runs (python3 bench/report.py aggregate --raw=... rebuilds the results).
        os.makedirs("bench/results", exist_ok=True)
        shutil.copyfile(runner.raw, "bench/results/latest-runs.jsonl")
        # The profiles' runs are not part of the results (perf slows the servers).
        measured_raw, runner.raw = runner.raw, os.path.join(work, "profile-runs.jsonl")
        if o.profile and o.has("fencegate"):
            profiling.profiles(runner, servers, procs, work)
        if o.profile:
            profiling.syncs(runner, servers, plan.lock_instances(o))
        results.aggregate(o, measured_raw, machine_info(work), results.git_sha(o.sha),
                          load_before, load_after, cpu_before, cpu_after, failovers)
        log(f"wrote {o.out} ({int(time.monotonic() - started)} s of runs)")
        if o.metrics_ab:
            results.metrics_ab_summary(measured_raw)
        if o.docs:
            results.render_docs(o)
        if runner.failures:
            log(f"{runner.failures} run(s) failed")
            return 1
        return 0
    finally:
        cleanup(servers, procs, runner, work)


def cleanup(servers, procs, runner, work):
    """Stops exactly what this run started, by PID, and removes its temp dir;
    Ctrl-C and SIGTERM are ignored meanwhile (each wait is bounded)."""
    saved = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        if runner:
            runner.kill_running()
        servers.stop_scraper()
        procs.stop_all()
        shutil.rmtree(work, ignore_errors=True)
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.chdir(root)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        o = options_mod.parse(argv, os.path.join(root, "scripts/bench"))
        build_dir = prepare(o)
        if o.scale:
            return run_scale(o, build_dir)
        check_binaries(build_dir)
        return run_speed(o, build_dir, root)
    except Exit as e:
        if e.message:
            print(e.message, file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        return 130
