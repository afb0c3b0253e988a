#!/usr/bin/env python3
"""How fencegate's servers grow with their state (./scripts/bench --scale).

Every server is started here, fresh for each measurement, on 127.0.0.1 with
its data in one temp dir, and stopped by its PID. Memory is resident memory
(VmRSS): "growth per item" is the growth from after a warm-up (1,000 items
of the same kind, kept) to after N more, divided by N.

leases (--sizes: 10k, 100k, 1M), the lock service on SQLite:
  memory per held lease   fencegate-loadgen --workload=hold takes N leases
                          (16 clients, each a try-lock over the Session
                          stream, TTL 10 min, no request id) and leaves them
                          held; Redis (SET NX PX, the holder as value: its
                          cheapest lock) holds the same N locks in the same
                          run, the anchor
  store on disk           the SQLite files with N+1,000 leases
  restart after kill -9   from starting the binary again on the same store
                          to serving (its port file, written once it serves
                          the restored leases), and its memory then
  lock cycles with state  fencegate-loadgen lock_cycle, 32 clients, 1,000
                          other resources, with the N leases held, beside
                          the same on the empty service

waiters (--waiter-sizes: 10k, 100k), the lock service on SQLite, twice:
  hot     every waiter on one held resource (its queue N long)
  spread  one waiter on each of N held resources (N queues of one)
  The resources are held first (hold); then fencegate-loadgen
  --workload=park sends N Acquire calls with a 20 min wait, each as the
  client library sends it (with a request id, so the waiter has a persisted
  place), pipelined over 16 Session streams, and keeps them parked while
  the service's fencegate_lock_waiters gauge is polled (its metrics
  listener is on for this) until all are queued; then the memory is read.
  Memory per parked waiter = growth / N, the held leases not counted. The
  service runs with --max_waiters_total and --max_waiters_per_resource
  above N and --max_stream_in_flight above N / 16 (defaults: 100,000,
  10,000 and 256), --max_wait=1h.

gateway (--sizes), fencegate-gateway on SQLite with no lock service (it
takes unsigned tokens):
  memory per resource     fencegate-loadgen --workload=fill writes one key
                          (64-byte value, token 1) on each of N resources,
                          16 clients, 64 writes in flight each on the
                          gateway's Session stream
  store on disk           its SQLite files after the fill (N+1,000 keys)
  restart after kill -9   (after the runs below) to its port file, and its
                          memory then
  fenced writes with state  fenced_write (1 KiB, 32 clients, 1,000 other
                          resources, leases from a lock service of its own)
                          with the N resources present, beside the same on
                          an empty gateway of its own

etcd (--etcd-sizes: 10k, 100k), the lock service on a single-member etcd
(Debian's etcd-server, fsync on) of its own: the leases figures, and
etcd's own memory growth per lease and its db file (member/snap/db).
Serving = the service's log says "lock state loaded from etcd; serving";
after kill -9 that includes waiting out the dead instance's leader lease
in etcd (--etcd_session_ttl, 5 s).

The results go under the key "scale" of --out (default
bench/results/latest.json, the speed runs' file): read if present, "scale"
replaced, written back. The tables of the Scale section of
docs/benchmarks.md (scale_report.py) are printed.
"""

import argparse
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_report  # noqa: E402 (bench/, beside this file)

WARM = 1000


def log(message):
    print(f"bench --scale: {message}", file=sys.stderr, flush=True)


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, predicate, process, seconds):
    deadline = time.monotonic() + seconds
    while not predicate():
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode} while starting")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not ready after {seconds} s")
        time.sleep(0.01)


def dir_bytes(prefix):
    """Bytes of the files next to `prefix` whose names start with its name."""
    folder, base = os.path.split(prefix)
    return sum(os.path.getsize(os.path.join(folder, f))
               for f in os.listdir(folder) if f.startswith(base))


class Servers:
    """The processes this script started: stopped by PID, always."""

    def __init__(self, work):
        self.work = work
        self.processes = {}

    def log_path(self, name):
        return os.path.join(self.work, f"{name}.log")

    def start(self, name, argv, **popen):
        logfile = open(self.log_path(name), "ab")
        self.processes[name] = subprocess.Popen(argv, stdout=popen.pop("stdout", logfile),
                                                stderr=logfile, **popen)
        return self.processes[name]

    def stop(self, name, sig=signal.SIGTERM):
        process = self.processes.pop(name, None)
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop_all(self):
        for name in reversed(list(self.processes)):
            self.stop(name)


class Bench:
    def __init__(self, args, servers, work):
        self.build = os.path.abspath(args.build_dir)
        self.servers = servers
        self.work = work
        self.clients = args.clients
        self.duration = args.duration
        self.warmup = args.warmup

    def binary(self, path):
        return os.path.join(self.build, path)

    # ---------------------------------------------------------- servers

    def start_port_file_server(self, name, argv, deadline=600):
        """Starts a fencegate server; returns (process, target, seconds to its port file)."""
        port_file = os.path.join(self.work, f"{name}.port")
        if os.path.exists(port_file):
            os.remove(port_file)
        began = time.monotonic()
        process = self.servers.start(name, argv + ["--listen=127.0.0.1:0",
                                                   f"--port_file={port_file}"])
        wait_for(name, lambda: os.path.exists(port_file) and os.path.getsize(port_file) > 0,
                 process, deadline)
        took = time.monotonic() - began
        with open(port_file) as f:
            return process, f"127.0.0.1:{f.read().strip()}", took

    def start_lockservice(self, name, store_flags, extra=()):
        return self.start_port_file_server(name, [
            self.binary("lockservice/fencegate-lockservice"), *store_flags,
            "--metrics_listen=", "--max_resources=4000000", "--max_ttl=1h", *extra])

    def start_gateway(self, name, db):
        return self.start_port_file_server(name, [
            self.binary("gateway/fencegate-gateway"), f"--db={db}", "--metrics_listen="])

    def start_redis(self, name):
        port = free_port()
        data = os.path.join(self.work, name)
        os.makedirs(data, exist_ok=True)
        # Memory only: no snapshots, no AOF (persistence does not change what
        # a key costs in memory).
        process = self.servers.start(name, [
            "redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", data,
            "--save", "", "--appendonly", "no"])

        def answers():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    return s.recv(16).startswith(b"+PONG")
            except OSError:
                return False

        wait_for(name, answers, process, 30)
        return process, f"127.0.0.1:{port}"

    def start_etcd(self, name):
        client, peer = free_port(), free_port()
        data = os.path.join(self.work, name)
        # As ./scripts/bench --store=etcd starts it: fsync on, compaction by
        # revision.
        process = self.servers.start(name, [
            "etcd", "--name", name, "--data-dir", data,
            "--listen-client-urls", f"http://127.0.0.1:{client}",
            "--advertise-client-urls", f"http://127.0.0.1:{client}",
            "--listen-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-cluster", f"{name}=http://127.0.0.1:{peer}",
            "--auto-compaction-mode=revision", "--auto-compaction-retention=100000"])
        endpoint = f"127.0.0.1:{client}"

        def healthy():
            return subprocess.run(
                ["etcdctl", f"--endpoints={endpoint}", "--command-timeout=2s",
                 "endpoint", "health"], env=dict(os.environ, ETCDCTL_API="3"),
                capture_output=True).returncode == 0

        wait_for(name, healthy, process, 60)
        return process, endpoint, data

    # ---------------------------------------------------------- loadgen

    def loadgen(self, system, target, workload, resources, run_id, clients, pids=(),
                extra=()):
        argv = [self.binary("bench/fencegate-loadgen"), f"--system={system}",
                f"--workload={workload}", f"--resources={resources}",
                f"--run_id={run_id}", f"--clients={clients}", *extra]
        if target:
            argv.append(f"--target={target}")
        if pids:
            argv.append("--server_pids=" + ",".join(str(p) for p in pids))
        if workload in ("lock_cycle", "fenced_write"):
            argv += [f"--duration={self.duration}", f"--warmup={self.warmup}"]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            raise RuntimeError(f"loadgen {system} {workload} {resources}: {out.stderr.strip()}")
        return json.loads(out.stdout.strip().splitlines()[-1])

    def hold(self, target, resources, run_id, pids=()):
        return self.loadgen("fencegate-stream", target, "hold", resources, run_id,
                            self.clients, pids)

    def lock_cycles(self, target, run_id, pids):
        return self.loadgen("fencegate-stream", target, "lock_cycle", 1000, run_id, 32,
                            pids)["ops_per_s"]

    def fenced_writes(self, lock_target, gateway_target, run_id, pids):
        return self.loadgen("fencegate-stream", lock_target, "fenced_write", 1000, run_id, 32,
                            pids, [f"--gateway_target={gateway_target}"])["ops_per_s"]

    def fill(self, gateway_target, resources, run_id, pid):
        return self.loadgen("fencegate-stream", "", "fill", resources, run_id, self.clients,
                            [pid], [f"--gateway_target={gateway_target}", "--depth=64",
                                    "--value_bytes=64"])

    def park(self, name, target, run_id, resources, waiters):
        """Starts a park loadgen; returns its process once every call is sent."""
        process = self.servers.start(name, [
            self.binary("bench/fencegate-loadgen"), "--system=fencegate-stream",
            "--workload=park", f"--target={target}", f"--run_id={run_id}",
            f"--resources={resources}", f"--waiters={waiters}",
            f"--clients={self.clients}", "--depth=256"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        deadline = time.monotonic() + 600
        while True:
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            if ready:
                line = process.stdout.readline()
                if not line:
                    raise RuntimeError(f"{name} exited ({process.wait()}) before sending: "
                                       f"see {self.servers.log_path(name)}")
                if json.loads(line).get("phase") != "sent":  # a waiter was answered
                    raise RuntimeError(f"{name}: {line.decode().strip()}")
                return process
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not send its calls in 600 s")

    def unpark(self, name):
        """Ends a park loadgen (its stdin closes); an error if a waiter did not stay parked."""
        process = self.servers.processes[name]
        process.stdin.close()
        status = process.wait(timeout=60)
        line = process.stdout.read().decode().strip().splitlines()
        self.servers.processes.pop(name)
        if status != 0:
            raise RuntimeError(f"{name} exited with status {status}: {line}; see "
                               f"{self.servers.log_path(name)}")

    # ------------------------------------------------------- the parts

    def measure_lock_service(self, size, name, start, tag, state_bytes, others=()):
        """Held leases on the lock service `start()` starts (process, target,
        seconds to serving): the figures every store has, and the memory of
        `others` (its store's processes) before and after the hold.
        `state_bytes()` is read before the kill -9."""
        process, target, _ = start()
        pids = [process.pid] + [o.pid for o in others]
        empty_cycles = self.lock_cycles(target, f"{tag}empty{size}", pids)
        self.hold(target, WARM, f"{tag}warm{size}")
        before = [rss_bytes(p) for p in pids]
        hold = self.hold(target, size, f"{tag}s{size}", pids)
        after = [rss_bytes(p) for p in pids]
        full_cycles = self.lock_cycles(target, f"{tag}full{size}", pids)
        disk = state_bytes()
        self.servers.stop(name, signal.SIGKILL)
        process, target, restart_s = start()
        restarted_rss = rss_bytes(process.pid)
        self.servers.stop(name)
        row = {
            "leases": size,
            "rss_before_bytes": before[0],
            "rss_after_bytes": after[0],
            "bytes_per_lease": (after[0] - before[0]) / size,
            "acquires_per_s": hold["ops_per_s"],
            "server_cpu_us_per_acquire": hold.get("server_cpu_us_per_op", 0),
            "store_bytes": disk,
            "restart_to_serving_s": restart_s,
            "rss_after_restart_bytes": restarted_rss,
            "lock_cycles_per_s_empty": empty_cycles,
            "lock_cycles_per_s_held": full_cycles,
        }
        return row, before[1:], after[1:]

    def measure_leases(self, size):
        db = os.path.join(self.work, f"locks-{size}.db")
        name = f"lockservice-{size}"
        row, _, _ = self.measure_lock_service(
            size, name, lambda: self.start_lockservice(name, [f"--db={db}"]), "",
            lambda: dir_bytes(db))
        return row

    def measure_redis(self, size):
        name = f"redis-{size}"
        process, target = self.start_redis(name)
        self.loadgen("redis", target, "hold", WARM, f"warm{size}", self.clients)
        before = rss_bytes(process.pid)
        self.loadgen("redis", target, "hold", size, f"s{size}", self.clients)
        after = rss_bytes(process.pid)
        self.servers.stop(name)
        return {"leases": size, "rss_before_bytes": before, "rss_after_bytes": after,
                "bytes_per_lease": (after - before) / size}

    def measure_waiters(self, size, placement):
        """Parked waiters: all on one resource (hot) or one on each (spread)."""
        name = f"lockservice-park-{placement}-{size}"
        metrics_file = os.path.join(self.work, f"{name}.metrics_port")
        per_stream = -(-(size + WARM) // self.clients)
        flags = [f"--max_waiters_total={size + 2 * WARM}",
                 f"--max_waiters_per_resource={size + 2 * WARM}",
                 f"--max_stream_in_flight={per_stream + 256}", "--max_wait=1h"]
        process, target, _ = self.start_lockservice(
            name, [f"--db={os.path.join(self.work, name + '.db')}"],
            flags + ["--metrics_listen=127.0.0.1:0", f"--metrics_port_file={metrics_file}"])
        wait_for(f"{name}'s metrics port", lambda: os.path.exists(metrics_file) and
                 os.path.getsize(metrics_file) > 0, process, 30)
        with open(metrics_file) as f:
            metrics_url = f"http://127.0.0.1:{f.read().strip()}/metrics"

        def queued():
            with urllib.request.urlopen(metrics_url, timeout=10) as page:
                for line in page.read().decode().splitlines():
                    match = re.match(r"fencegate_lock_waiters(?:\{[^}]*\})? (\S+)$", line)
                    if match:
                        return int(float(match.group(1)))
            raise RuntimeError(f"{name}: no fencegate_lock_waiters in its metrics")

        def wait_queued(count, park):
            def done():
                # A park loadgen that ended, or says a waiter was answered,
                # will never see its count.
                if park.poll() is not None or select.select([park.stdout], [], [], 0)[0]:
                    raise RuntimeError(f"{name}: a waiter did not stay parked: "
                                       f"{park.stdout.readline().decode().strip()}")
                return queued() >= count
            wait_for(f"{name} with {count} waiters queued", done, process, 600)

        spread = placement == "spread"
        self.hold(target, WARM if spread else 1, f"pw{size}")
        warm = self.park(f"{name}-warm", target, f"pw{size}", WARM if spread else 1, WARM)
        wait_queued(WARM, warm)
        resources = size if spread else 1
        self.hold(target, resources, f"pm{size}")
        before = rss_bytes(process.pid)
        began = time.monotonic()
        park = self.park(f"{name}-park", target, f"pm{size}", resources, size)
        wait_queued(WARM + size, park)
        parked_s = time.monotonic() - began
        after = rss_bytes(process.pid)
        self.unpark(f"{name}-park")
        self.unpark(f"{name}-warm")
        self.servers.stop(name)
        return {"waiters": size, "placement": placement, "resources": resources,
                "rss_before_bytes": before, "rss_after_bytes": after,
                "bytes_per_waiter": (after - before) / size, "park_s": parked_s,
                "server_flags": flags}

    def measure_gateway(self, size):
        db = os.path.join(self.work, f"gateway-{size}.db")
        name, locks = f"gateway-{size}", f"lockservice-gw-{size}"
        lock_process, lock_target, _ = self.start_lockservice(
            locks, [f"--db={os.path.join(self.work, locks + '.db')}"])
        # The empty gateway's run on one of its own: its writes stay in its store.
        empty, target, _ = self.start_gateway(f"{name}-empty", db + "-empty")
        empty_writes = self.fenced_writes(lock_target, target, f"gempty{size}",
                                          [lock_process.pid, empty.pid])
        self.servers.stop(f"{name}-empty")
        process, target, _ = self.start_gateway(name, db)
        self.fill(target, WARM, f"gwarm{size}", process.pid)
        before = rss_bytes(process.pid)
        fill = self.fill(target, size, f"g{size}", process.pid)
        after = rss_bytes(process.pid)
        disk = dir_bytes(db)
        full_writes = self.fenced_writes(lock_target, target, f"gfull{size}",
                                         [lock_process.pid, process.pid])
        self.servers.stop(name, signal.SIGKILL)
        process, target, restart_s = self.start_gateway(name, db)
        restarted_rss = rss_bytes(process.pid)
        self.servers.stop(name)
        self.servers.stop(locks)
        return {
            "resources": size,
            "value_bytes": 64,
            "rss_before_bytes": before,
            "rss_after_bytes": after,
            "bytes_per_resource": (after - before) / size,
            "fill_writes_per_s": fill["ops_per_s"],
            "store_bytes": disk,
            "restart_to_serving_s": restart_s,
            "rss_after_restart_bytes": restarted_rss,
            "fenced_writes_per_s_empty": empty_writes,
            "fenced_writes_per_s_full": full_writes,
        }

    def start_lockservice_on_etcd(self, name, endpoint):
        """Starts it; returns (process, target, seconds until it serves as leader)."""
        marker = "lock state loaded from etcd; serving"
        logfile = self.servers.log_path(name)
        offset = os.path.getsize(logfile) if os.path.exists(logfile) else 0
        began = time.monotonic()
        process, target, _ = self.start_lockservice(name, [f"--store=etcd://{endpoint}"])

        def serving():
            with open(logfile, "rb") as f:
                f.seek(offset)
                return marker.encode() in f.read()

        wait_for(f"{name} serving", serving, process, 600)
        return process, target, time.monotonic() - began

    def measure_etcd(self, size):
        etcd_name, name = f"etcd-{size}", f"lockservice-etcd-{size}"
        etcd, endpoint, data = self.start_etcd(etcd_name)
        db = os.path.join(data, "member", "snap", "db")
        row, [etcd_before], [etcd_after] = self.measure_lock_service(
            size, name, lambda: self.start_lockservice_on_etcd(name, endpoint), "e",
            lambda: os.path.getsize(db), [etcd])
        self.servers.stop(etcd_name)
        row.update({
            "etcd_rss_before_bytes": etcd_before,
            "etcd_rss_after_bytes": etcd_after,
            "etcd_bytes_per_lease": (etcd_after - etcd_before) / size,
            "etcd_db_bytes": row.pop("store_bytes"),  # its db file, before the kill
        })
        return row


def sizes_arg(parser, name, text, low=1000):
    sizes = [int(s) for s in text.split(",") if s]
    for size in sizes:
        if not low <= size <= 1000000:
            parser.error(f"{name}: {size} is not in [{low}, 1000000]")
    return sizes


def write_results(path, scale):
    """Puts `scale` under the key "scale" of the JSON file `path` (kept otherwise)."""
    doc = {}
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    doc["scale"] = scale
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="held leases and gateway resources")
    parser.add_argument("--waiter-sizes", default="",
                        help="parked waiters (default: the --sizes up to 100,000)")
    parser.add_argument("--etcd-sizes", default="",
                        help="leases on etcd (default: the --sizes up to 100,000)")
    parser.add_argument("--parts", default="leases,waiters,gateway,etcd")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--duration", default="2s", help="of each lock cycle / write run")
    parser.add_argument("--warmup", default="500ms")
    parser.add_argument("--sha", default="")
    parser.add_argument("--out", default="bench/results/latest.json",
                        help="results JSON: its key \"scale\" is replaced, the rest kept")
    parser.add_argument("--without-redis", action="store_true",
                        help="no Redis anchor (the smoke test: CI installs no Redis)")
    args = parser.parse_args()
    sizes = sizes_arg(parser, "--sizes", args.sizes)
    small = ",".join(str(s) for s in sizes if s <= 100000)
    waiter_sizes = sizes_arg(parser, "--waiter-sizes", args.waiter_sizes or small)
    etcd_sizes = sizes_arg(parser, "--etcd-sizes", args.etcd_sizes or small)
    parts = [p for p in args.parts.split(",") if p]
    for part in parts:
        if part not in ("leases", "waiters", "gateway", "etcd"):
            parser.error(f"--parts: unknown '{part}' (leases, waiters, gateway, etcd)")
    if not 1 <= args.clients <= 256:
        parser.error(f"--clients: {args.clients} is not in [1, 256]")
    work = tempfile.mkdtemp(prefix="fencegate-scale.")
    servers = Servers(work)
    bench = Bench(args, servers, work)
    scale = {"sha": args.sha, "clients": args.clients, "warm_up_items": WARM,
             "cores": os.cpu_count(), "leases": [], "waiters": [], "gateway": [], "etcd": []}
    started = time.monotonic()

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        if "leases" in parts:
            for size in sizes:
                log(f"{size} leases: fencegate")
                fencegate = bench.measure_leases(size)
                redis = {"leases": size, "bytes_per_lease": 0}
                if not args.without_redis:
                    log(f"{size} leases: redis")
                    redis = bench.measure_redis(size)
                scale["leases"].append({"leases": size, "fencegate": fencegate, "redis": redis})
                log(f"{size}: fencegate {fencegate['bytes_per_lease']:.0f} B/lease, "
                    f"redis {redis['bytes_per_lease']:.0f} B/lock")
        if "waiters" in parts:
            for size in waiter_sizes:
                for placement in ("hot", "spread"):
                    log(f"{size} parked waiters, {placement}")
                    row = bench.measure_waiters(size, placement)
                    scale["waiters"].append(row)
                    log(f"{size} waiters {placement}: {row['bytes_per_waiter']:.0f} B/waiter")
        if "gateway" in parts:
            for size in sizes:
                log(f"gateway with {size} resources")
                row = bench.measure_gateway(size)
                scale["gateway"].append(row)
                log(f"gateway {size}: {row['bytes_per_resource']:.0f} B/resource")
        if "etcd" in parts:
            for size in etcd_sizes:
                log(f"{size} leases: fencegate on etcd")
                row = bench.measure_etcd(size)
                scale["etcd"].append(row)
                log(f"etcd {size}: lock service {row['bytes_per_lease']:.0f} B/lease, "
                    f"etcd {row['etcd_bytes_per_lease']:.0f} B/lease")
    finally:
        servers.stop_all()
        shutil.rmtree(work, ignore_errors=True)
    scale["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    scale["took_s"] = round(time.monotonic() - started, 1)
    write_results(args.out, scale)
    log(f"wrote the key \"scale\" of {args.out} ({scale['took_s']:.0f} s)")
    # The tables of the Scale section of docs/benchmarks.md, markers left out.
    print("\n".join(scale_report.render_section(scale)[1:-1]))
    unmeasured = [f"{r['leases']} leases" for r in scale["leases"]
                  if r["fencegate"]["bytes_per_lease"] <= 0]
    unmeasured += [f"{w['waiters']} {w['placement']} waiters" for w in scale["waiters"]
                   if w["bytes_per_waiter"] <= 0]
    if unmeasured:
        raise SystemExit(f"bench --scale: {', '.join(unmeasured)} cost no memory: not measured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
