"""Running one point of a benchmark run: one load generator invocation
against one instance, its JSON line appended to the raw file; and the
snapshots taken around the runs (CPU time of the machine and of the
benchmark's own processes, the load average, the machine's description).

  Runner(options, servers, procs, work, build_dir, root)
    .run_one(instance, workload, resources, clients)   never raises for a
                                   failed run: it is logged and counted
    .raw                           where the JSON lines go (main switches it
                                   for the profile runs, which are not results)
  commit_batches(work)             the servers' commit histograms, for the
                                   items per commit of a fencegate run
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
import socket
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


# Each fencegate server's histogram of the calls one commit carries, by the
# file its metrics port is published in (servers.py).
COMMIT_HISTOGRAMS = {"gateway": ("gateway.metrics_port", "fencegate_gateway_commit_batch_size"),
                     "lockservice": ("lockservice.metrics_port",
                                     "fencegate_lock_commit_batch_size")}
# The instances whose servers are that pair (metrics on).
PAIR_INSTANCES = ("fencegate", "fencegate-stream", "fencegate-loop", "python-fencegate")


def _metrics_text(port_file):
    """A server's /metrics, as text; "" if it cannot be read."""
    try:
        with open(port_file) as f:
            port = int(f.read().strip())
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")  # the server closes
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")
    except (OSError, ValueError):
        return ""


def commit_batches(work):
    """{server: (sum, count)} of each server's commit batch-size histogram
    now; a server whose metrics cannot be read is left out."""
    out = {}
    for server, (port_file, name) in COMMIT_HISTOGRAMS.items():
        text = _metrics_text(os.path.join(work, port_file))
        values = {}
        for suffix in ("_sum", "_count"):
            m = re.search(rf"^{name}{suffix}(?:{{[^}}]*}})? (\S+)$", text, re.M)
            if m:
                values[suffix] = float(m.group(1))
        if len(values) == 2:
            out[server] = (values["_sum"], values["_count"])
    return out


def items_per_commit(before, after):
    """{"<server>_items_per_commit": mean} over the commits between two
    commit_batches() (warm-up included); servers that did not commit are
    left out."""
    out = {}
    for server in after:
        if server in before and after[server][1] > before[server][1]:
            calls = after[server][0] - before[server][0]
            out[f"{server}_items_per_commit"] = round(
                calls / (after[server][1] - before[server][1]), 2)
    return out


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
        batches = commit_batches(self.work) if instance in PAIR_INSTANCES else None
        status, line = self._run(loadgen + args, err_path, limit)
        if line and batches is not None:
            try:
                run = json.loads(line)
                run.update(items_per_commit(batches, commit_batches(self.work)))
                line = json.dumps(run)
            except ValueError:
                pass  # not a result line: kept as it is, and reported as one
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
