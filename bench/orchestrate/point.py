"""Running one point of a benchmark run: one load generator invocation
against one instance, its JSON line appended to the raw file; and the
snapshots taken around the runs (CPU time of the machine and of the
benchmark's own processes, the load average, the machine's description).

  Runner(options, servers, procs, work, build_dir, root)
    .run_one(instance, workload, resources, clients)   never raises for a
                                   failed run: it is logged and counted
    .raw                           where the JSON lines go (main switches it
                                   for the profile runs, which are not results)
  cpu_snapshot(servers, procs)     one snapshot, JSON (bench/report_aggregate.py)
  loadavg(), machine_info(work)

A run that does not end within its duration and warm-up plus
LOADGEN_GRACE_S (a hung server) is killed and counted as failed.
Standard library only.
"""

import collections
import glob
import json
import os
import platform
import re
import subprocess
import threading

from report_aggregate import cpu_snapshot as _cpu_snapshot

from .processes import log, tail

LOADGEN_GRACE_S = 120
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}


def duration_s(text):
    """Seconds in an absl duration ("500ms", "2s", "1m30s"); None if it is not one."""
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


class Runner:
    def __init__(self, options, servers, procs, work, build_dir, root):
        self.o = options
        self.servers = servers
        self.procs = procs
        self.work = work
        self.raw = os.path.join(work, "raw.jsonl")
        open(self.raw, "w").close()
        self.failures = 0
        self.loadgen = [os.path.join(build_dir, "bench/fencegate-loadgen")]
        # The Python load generator (Debian's interpreter, which has Debian's
        # grpcio and redis-py; the stubs this build generated).
        self.python_loadgen = ["/usr/bin/python3", os.path.join(root, "bench/python/loadgen.py"),
                               f"--stubs={build_dir}/clients/python/stubs"]
        self.running = set()  # loadgen Popens in flight, killed by kill_running()
        self.lock = threading.Lock()

    def instance_args(self, instance):
        """The load generator and the arguments that select `instance`."""
        s, pid = self.servers, self.servers.pid
        t = collections.defaultdict(str, s.target)  # "" for a server not started
        pair = [f"--target={t['lockservice']}", f"--gateway_target={t['gateway']}",
                f"--server_pids={pid('lockservice')},{pid('gateway')}"]
        table = {
            "fencegate": ["--system=fencegate", "--durability=fsync"] + pair,
            "fencegate-stream": ["--system=fencegate-stream", "--durability=fsync"] + pair,
            "fencegate-nometrics": [
                "--system=fencegate", "--system_label=fencegate-nometrics", "--durability=fsync",
                f"--target={t['lockservice-nometrics']}",
                f"--gateway_target={t['gateway-nometrics']}",
                f"--server_pids={pid('lockservice-nometrics')},{pid('gateway-nometrics')}"],
            "etcd": ["--system=etcd", "--durability=fsync", f"--target={t['etcd']}",
                     f"--server_pids={pid('etcd')}"],
            "redis-always": ["--system=redis", "--durability=fsync",
                             f"--target={t['redis-always']}",
                             f"--server_pids={pid('redis-always')}"],
            "redis-everysec": ["--system=redis", "--durability=everysec",
                               f"--target={t['redis-everysec']}",
                               f"--server_pids={pid('redis-everysec')}"],
            "grpc-empty": ["--system=grpc-empty", "--durability=none",
                           f"--target={t['echo']}", f"--server_pids={pid('echo')}"],
            "fencegate-loop": ["--shape=loop", "--system=fencegate-stream",
                               "--system_label=fencegate-loop", "--durability=fsync"] + pair,
            "redis-loop": ["--shape=loop", "--system=redis", "--system_label=redis-loop",
                           "--durability=fsync", f"--target={t['redis-always']}",
                           f"--server_pids={pid('redis-always')}"],
            "echo-stream": ["--shape=loop", "--system=grpc-empty", "--system_label=echo-stream",
                            "--durability=none", f"--target={t['echo']}",
                            f"--server_pids={pid('echo')}"],
            "echo-cq": ["--shape=loop", "--system=grpc-empty-cq", "--system_label=echo-cq",
                        "--durability=none", f"--target={t['echo-cq']}",
                        f"--server_pids={pid('echo-cq')}"],
            "python-fencegate": ["--system=fencegate", "--durability=fsync"] + pair,
            "python-redis": ["--system=redis", "--durability=fsync",
                             f"--target={t['redis-always']}",
                             f"--server_pids={pid('redis-always')}"],
            "python-echo": ["--system=echo", "--durability=none", f"--target={t['echo']}",
                            f"--server_pids={pid('echo')}"],
        }
        if instance == "fencegate-pg":
            args = ["--system=fencegate", "--system_label=fencegate-pg", "--durability=fsync",
                    f"--target={t['lockservice']}", f"--gateway_target={t['gateway-pg']}",
                    f"--server_pids={s.postgres_server_pids()}"]
        elif instance in ("sql-fenced", "sql-plain"):
            args = [f"--system={instance}", "--durability=fsync",
                    f"--target={t['lockservice']}", f"--postgres={t['sql']}",
                    f"--server_pids={s.postgres_server_pids()}"]
        elif instance in ("fencegate-etcd", "fencegate-etcd-standby"):
            leader, standby = s.fg_leader, s.fg_standby
            pids = [pid(leader), pid("etcd-fencegate"), pid("gateway")]
            if instance == "fencegate-etcd-standby":
                pids = [pid(standby)] + pids
            args = ["--system=fencegate", f"--system_label={instance}", "--durability=fsync",
                    f"--target={t[standby if instance.endswith('standby') else leader]}",
                    f"--gateway_target={t['gateway']}", f"--server_pids={','.join(pids)}"]
        else:
            args = table.get(instance, [])
        loadgen = self.python_loadgen if instance.startswith("python-") else self.loadgen
        return loadgen, args

    def run_one(self, instance, workload, resources, clients, duration=None, warmup=None,
                count_failure=True):
        """One load generator run; its JSON line is appended to self.raw."""
        duration = duration or self.o.duration
        warmup = warmup or self.o.warmup
        # The empty calls have one workload; in a lock point they run alongside.
        if instance in ("grpc-empty", "python-echo", "echo-stream", "echo-cq"):
            workload, resources = "rpc", 0
        loadgen, args = self.instance_args(instance)
        args = [f"--workload={workload}", f"--resources={resources}", f"--clients={clients}",
                f"--duration={duration}", f"--warmup={warmup}"] + args
        if instance == "fsync":
            args = ["--workload=fsync", "--durability=fsync", f"--dir={self.work}",
                    "--duration=1s", "--warmup=200ms"]
            duration, warmup = "1s", "200ms"
        limit = LOADGEN_GRACE_S + sum(duration_s(d) or 600 for d in (duration, warmup))
        err_path = os.path.join(self.work, "loadgen.err")
        status, line = self._run(loadgen + args, err_path, limit)
        if line:
            with self.lock, open(self.raw, "a") as f:
                f.write(line + "\n")
        if status != 0:
            reason = tail(err_path, 3).rstrip("\n")
            if status is None:
                reason = f"no end after {limit:.0f} s, killed; {reason}"
            with self.lock:
                if count_failure:
                    self.failures += 1
            log(f"FAILED: {instance} {workload} resources={resources} clients={clients}: "
                f"{reason}")

    def _run(self, argv, err_path, limit):
        """(exit status or None after `limit` seconds, its stdout without the
        trailing newlines)."""
        with open(err_path, "w") as err:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=err, text=True)
            with self.lock:
                self.running.add(p)
            try:
                out, _ = p.communicate(timeout=limit)
                status = p.returncode
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate(timeout=30)
                status = None
            except BaseException:  # Ctrl-C, SIGTERM: it goes with us
                if p.poll() is None:
                    p.kill()
                p.wait(timeout=30)
                raise
            finally:
                with self.lock:
                    self.running.discard(p)
        return status, (out or "").rstrip("\n")

    def kill_running(self):
        """Kills every loadgen still running (after an error or Ctrl-C)."""
        with self.lock:
            running = list(self.running)
        for p in running:
            if p.poll() is None:
                p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                log(f"loadgen (pid {p.pid}) still there 10 s after SIGKILL; left behind")

    def last_line(self):
        """The raw file's last line ("" when it has none)."""
        try:
            with open(self.raw) as f:
                lines = f.read().splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else ""


def cpu_snapshot(servers, procs):
    """CPU time of the whole machine and of our own processes (servers, and
    the loadgens through this process's waited-for children): the rest is
    other people's work."""
    pids = [os.getpid()] + procs.pids() + servers.postgres_children()
    return json.dumps(_cpu_snapshot(pids))


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _first(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=10).stdout.splitlines()[0].strip()
    except Exception:
        return ""


def machine_info(work):
    """The machine, as JSON, for the results' "machine"."""
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem_kb = int(line.split()[1])
                break
    postgres = glob.glob("/usr/lib/postgresql/*/bin/postgres")
    return json.dumps({
        "cores": os.cpu_count(), "cpu": model, "kernel": platform.release(),
        "memory_gib": round(mem_kb / 2**20, 1), "data_fs": _first(["stat", "-f", "-c", "%T", work]),
        "etcd": _first(["etcd", "--version"]), "redis": _first(["redis-server", "--version"]),
        "grpc": _first(["dpkg-query", "-W", "-f=${Version}", "libgrpc++-dev"]),
        "postgresql": _first(sorted(postgres)[-1:] + ["--version"]) if postgres else "",
        "sqlite": _first(["dpkg-query", "-W", "-f=${Version}", "libsqlite3-dev"]),
    })
