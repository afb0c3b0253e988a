#!/usr/bin/env python3
"""How fencegate's lock service grows with its state (./scripts/bench --scale).

For each size N (10k, 100k, 1M held leases by default), on a fresh lock
service (SQLite store) and a fresh Redis, both started here:

  memory per held lease   the server's resident memory (VmRSS) grows from
                          after 1,000 warm-up leases to after N more, divided
                          by N; Redis holds the same N locks (SET NX PX, the
                          holder as value: its cheapest lock) and is the
                          anchor, measured in the same run
  store on disk           the lock service's SQLite files with N+1,000 leases
  restart after kill -9   from starting the binary again on the same store
                          to serving (its port file, written once it serves
                          the restored leases), and its memory then
  lock cycles with state  fencegate-loadgen lock_cycle, 32 clients, 1,000
                          other resources, on the service holding N leases,
                          beside the same on the empty service

Leases are taken by fencegate-loadgen --workload=hold (16 clients, each
acquire a try-lock over the lock service's Session stream, TTL 10 min), so
they stay held while the figures are read. Every process is started here
and stopped by its PID. Writes bench/results/scale.json and prints a table.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


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


class Servers:
    """The processes this script started: stopped by PID, always."""

    def __init__(self, work):
        self.work = work
        self.processes = {}

    def start(self, name, argv):
        logfile = open(os.path.join(self.work, f"{name}.log"), "ab")
        self.processes[name] = subprocess.Popen(argv, stdout=logfile, stderr=logfile)
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
        for name in list(self.processes):
            self.stop(name)


def start_lockservice(servers, build, work, name, db):
    port_file = os.path.join(work, f"{name}.port")
    if os.path.exists(port_file):
        os.remove(port_file)
    began = time.monotonic()
    process = servers.start(name, [
        os.path.join(build, "lockservice/fencegate-lockservice"),
        "--listen=127.0.0.1:0", f"--port_file={port_file}", f"--db={db}",
        "--metrics_listen=", "--max_resources=4000000",
        "--max_ttl=1h"])
    wait_for(name, lambda: os.path.exists(port_file) and os.path.getsize(port_file) > 0,
             process, 600)
    took = time.monotonic() - began
    with open(port_file) as f:
        return process, f"127.0.0.1:{f.read().strip()}", took


def start_redis(servers, work, name):
    port = free_port()
    data = os.path.join(work, name)
    os.makedirs(data, exist_ok=True)
    # Memory only: no snapshots, no AOF (persistence does not change what
    # a key costs in memory).
    process = servers.start(name, [
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


def loadgen(build, system, target, workload, resources, run_id, clients, pids=()):
    argv = [os.path.join(build, "bench/fencegate-loadgen"), f"--system={system}",
            f"--target={target}", f"--workload={workload}", f"--resources={resources}",
            f"--run_id={run_id}", f"--clients={clients}"]
    if pids:
        argv.append("--server_pids=" + ",".join(str(p) for p in pids))
    if workload == "lock_cycle":
        argv += ["--duration=2s", "--warmup=500ms"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"loadgen {system} {workload} {resources}: {out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def dir_bytes(prefix):
    folder, base = os.path.split(prefix)
    return sum(os.path.getsize(os.path.join(folder, f))
               for f in os.listdir(folder) if f.startswith(base))


def lock_cycles(build, target, run_id, pid):
    return loadgen(build, "fencegate-stream", target, "lock_cycle", 1000, run_id, 32,
                   [pid])["ops_per_s"]


def measure_fencegate(servers, build, work, size, clients):
    db = os.path.join(work, f"locks-{size}.db")
    name = f"lockservice-{size}"
    process, target, _ = start_lockservice(servers, build, work, name, db)
    empty_cycles = lock_cycles(build, target, f"empty{size}", process.pid)
    loadgen(build, "fencegate-stream", target, "hold", 1000, f"warm{size}", clients)
    before = rss_bytes(process.pid)
    hold = loadgen(build, "fencegate-stream", target, "hold", size, f"s{size}", clients,
                   [process.pid])
    after = rss_bytes(process.pid)
    full_cycles = lock_cycles(build, target, f"full{size}", process.pid)
    disk = dir_bytes(db)
    servers.stop(name, signal.SIGKILL)
    process, target, restart_s = start_lockservice(servers, build, work, name, db)
    restarted_rss = rss_bytes(process.pid)
    servers.stop(name)
    return {
        "leases": size,
        "rss_before_bytes": before,
        "rss_after_bytes": after,
        "bytes_per_lease": (after - before) / size,
        "acquires_per_s": hold["ops_per_s"],
        "server_cpu_us_per_acquire": hold.get("server_cpu_us_per_op", 0),
        "store_bytes": disk,
        "restart_to_serving_s": restart_s,
        "rss_after_restart_bytes": restarted_rss,
        "lock_cycles_per_s_empty": empty_cycles,
        "lock_cycles_per_s_held": full_cycles,
    }


def measure_redis(servers, build, work, size, clients):
    name = f"redis-{size}"
    process, target = start_redis(servers, work, name)
    loadgen(build, "redis", target, "hold", 1000, f"warm{size}", clients)
    before = rss_bytes(process.pid)
    loadgen(build, "redis", target, "hold", size, f"s{size}", clients)
    after = rss_bytes(process.pid)
    servers.stop(name)
    return {"leases": size, "rss_before_bytes": before, "rss_after_bytes": after,
            "bytes_per_lease": (after - before) / size}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--sha", default="")
    parser.add_argument("--out", default="bench/results/scale.json")
    parser.add_argument("--without-redis", action="store_true",
                        help="fencegate only (no Redis anchor; the smoke test)")
    args = parser.parse_args()
    build = os.path.abspath(args.build_dir)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    for size in sizes:
        if not 1000 <= size <= 1000000:
            parser.error(f"--sizes: {size} is not in [1000, 1000000]")
    if not 1 <= args.clients <= 256:
        parser.error(f"--clients: {args.clients} is not in [1, 256]")
    work = tempfile.mkdtemp(prefix="fencegate-scale.")
    servers = Servers(work)
    rows = []

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        for size in sizes:
            log(f"{size} leases: fencegate")
            fencegate = measure_fencegate(servers, build, work, size, args.clients)
            redis = {"leases": size, "bytes_per_lease": 0}
            if not args.without_redis:
                log(f"{size} leases: redis")
                redis = measure_redis(servers, build, work, size, args.clients)
            rows.append({"leases": size, "fencegate": fencegate, "redis": redis})
            log(f"{size}: fencegate {fencegate['bytes_per_lease']:.0f} B/lease, "
                f"redis {redis['bytes_per_lease']:.0f} B/lock, restart "
                f"{fencegate['restart_to_serving_s']:.2f} s, lock cycles "
                f"{fencegate['lock_cycles_per_s_held']:.0f}/s held vs "
                f"{fencegate['lock_cycles_per_s_empty']:.0f}/s empty")
    finally:
        servers.stop_all()
        shutil.rmtree(work, ignore_errors=True)
    result = {"sha": args.sha, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "clients": args.clients, "rows": rows}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    for row in rows:
        if row["fencegate"]["bytes_per_lease"] <= 0:
            raise SystemExit(f"bench --scale: {row['leases']} leases cost no memory: not measured")
    print("| held leases | fencegate B/lease | Redis B/lock | ratio | store on disk | "
          "restart after kill -9 | lock cycles/s held vs empty |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        f, r = row["fencegate"], row["redis"]
        redis, ratio = "not run", "-"
        if r["bytes_per_lease"] > 0:
            redis = f"{r['bytes_per_lease']:.0f}"
            ratio = f"{f['bytes_per_lease'] / r['bytes_per_lease']:.1f}x"
        print(f"| {row['leases']:,} | {f['bytes_per_lease']:.0f} | {redis} | {ratio} | "
              f"{f['store_bytes'] / 2**20:.1f} MiB | {f['restart_to_serving_s']:.2f} s | "
              f"{f['lock_cycles_per_s_held']:.0f} vs {f['lock_cycles_per_s_empty']:.0f} "
              f"({f['lock_cycles_per_s_held'] / max(f['lock_cycles_per_s_empty'], 1):.2f}x) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
