#!/usr/bin/python3
"""The Python load generator: one measured run of one workload against one
system, from asyncio, printed as ONE line of JSON on stdout with the keys of
fencegate-loadgen's (bench/loadgen/run_stats.cc), so bench/report.py's
aggregate takes it. ./scripts/bench runs it as the system `python`.

    /usr/bin/python3 bench/python/loadgen.py --system=fencegate \\
        --target=127.0.0.1:7070 --gateway_target=127.0.0.1:7071 \\
        --workload=fenced_write --clients=32 --resources=1000 --duration=2s
    ... --system=redis --target=127.0.0.1:6379 --workload=lock_cycle
    ... --system=echo --target=127.0.0.1:7072 --workload=rpc

Systems and ops: bench/python/systems.py. The loop is the C++ one
(bench/loadgen/workloads.cc): --clients asyncio tasks, closed loop (each
awaits its op, then starts the next), client c's k-th op on resource
(c + k * clients) % resources, key "k<c>"; an op counts if it completes
inside the window (after --warmup, before its end), a failed op wherever
it happens; exact nearest-rank percentiles of every sample. CPU per op:
this process's CPU time (every thread: the event loop and gRPC's own)
and the --server_pids' inside the window, over the ops; other_cpu_share:
the rest of the machine's.

Exit status: 0 ok; 1 some operations failed (the first on stderr); 2 bad
flags or the run could not be set up. Debian's python3-grpcio,
python3-protobuf and python3-redis; the fencegate package from
clients/python with its stubs (--stubs, else generated for the run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SYSTEMS = ("fencegate", "redis", "echo")
WORKLOADS = {"fencegate": ("lock_cycle", "fenced_write"), "redis": ("lock_cycle", "fenced_write"),
             "echo": ("rpc",)}
TICKS = os.sysconf("SC_CLK_TCK")


def duration(text: str) -> float:
    """absl's duration syntax as the C++ flags take it (2s, 500ms, 1.5s, 1m): seconds."""
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    parts = re.findall(r"(\d+(?:\.\d*)?)(ns|us|ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise argparse.ArgumentTypeError(f"'{text}' is not a duration (e.g. 2s, 500ms)")
    return sum(float(n) * units[u] for n, u in parts)


def parse_flags(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--system", choices=SYSTEMS, required=True)
    p.add_argument("--system_label", default="",
                   help="the system's name in the output (default: python-<system>)")
    p.add_argument("--target", required=True,
                   help="host:port: the lock service, Redis or the echo server")
    p.add_argument("--gateway_target", default="", help="fencegate's gateway (fenced_write)")
    p.add_argument("--workload", required=True)
    p.add_argument("--clients", type=int, default=32, help="asyncio tasks")
    p.add_argument("--resources", type=int, default=1000)
    p.add_argument("--duration", type=duration, default=2.0)
    p.add_argument("--warmup", type=duration, default=0.5)
    p.add_argument("--value_bytes", type=int, default=1024)
    p.add_argument("--durability", default="", help="label copied into the output")
    p.add_argument("--run_id", default="", help="prefix of resource names (default: the time)")
    p.add_argument("--server_pids", default="", help="comma-separated, for server CPU per op")
    p.add_argument("--stubs", default="",
                   help="a directory holding fencegate/v1/*_pb2*.py (the build's "
                        "build/clients/python/stubs); default: generated for this run")
    a = p.parse_args(argv)
    if a.workload not in WORKLOADS[a.system]:
        p.error(f"--system={a.system} runs --workload={' or '.join(WORKLOADS[a.system])}")
    if not 1 <= a.clients <= 1024:
        p.error("--clients must be in [1, 1024]")
    if a.workload == "lock_cycle" and not 2 <= a.resources <= 1000000:
        p.error("--resources must be in [2, 1000000] for lock_cycle (try-locks; the "
                "waiting lock cycle on one hot resource is the C++ load generator's)")
    if a.workload == "fenced_write" and not 1 <= a.resources <= 1000000:
        p.error("--resources must be in [1, 1000000]")
    if a.duration <= 0 or a.warmup < 0 or a.duration + a.warmup > 40:
        p.error("--duration must be > 0, --warmup >= 0, both together at most 40s "
                "(the fenced_write leases last 60 s)")
    if a.system == "fencegate" and a.workload == "fenced_write" and not a.gateway_target:
        p.error("--workload=fenced_write needs --gateway_target")
    try:
        a.server_pids = [int(x) for x in a.server_pids.split(",") if x]
    except ValueError:
        p.error(f"--server_pids: '{a.server_pids}' is not a list of PIDs")
    if a.workload == "rpc":
        a.resources = 0  # as the C++ load generator's rpc: no resources
    a.system_label = a.system_label or f"python-{a.system}"
    a.run_id = a.run_id or f"p{time.time_ns() // 1000}"
    return a


def import_fencegate(stubs: str, scratch: Path) -> None:
    """Makes `import fencegate` find this tree's package and its stubs."""
    sys.path[0:0] = [str(ROOT / "clients" / "python")]
    if not (stubs and (Path(stubs) / "fencegate" / "v1" / "lock_pb2.py").is_file()):
        import generate_stubs  # clients/python's
        stubs = str(scratch / "stubs")
        generate_stubs.generate(Path(stubs))
    sys.path.insert(1, stubs)
    import fencegate  # noqa: F401 (extends its __path__ to the stubs' fencegate/)


def echo_message_class(scratch: Path):
    """EchoMessage of bench/echo.proto, compiled by protoc for this run."""
    subprocess.run(["protoc", f"--proto_path={ROOT / 'bench'}", f"--python_out={scratch}",
                    "echo.proto"], check=True)
    sys.path.insert(0, str(scratch))
    import echo_pb2
    return echo_pb2.EchoMessage


# ------------------------------------------------------------------ CPU

def cpu_snapshot(server_pids):
    """(this process's CPU s, the servers' CPU s, machine busy s, machine total s)."""
    servers = 0
    for pid in server_pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
            servers += int(rest[11]) + int(rest[12])  # utime, stime (fields 14, 15)
        except (OSError, IndexError, ValueError):
            pass
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    idle = fields[3] + fields[4]
    return (time.process_time(), servers / TICKS, (sum(fields) - idle) / TICKS,
            sum(fields) / TICKS)


def cpu_between(before, after, ops):
    self_s, servers_s = after[0] - before[0], after[1] - before[1]
    total = after[3] - before[3]
    others = ((after[2] - before[2]) - self_s - servers_s) / total if total > 0 else 0
    per_op = (lambda s: s * 1e6 / ops) if ops else (lambda s: 0.0)
    return per_op(self_s), per_op(servers_s), min(1.0, max(0.0, others))


# ------------------------------------------------------------------ run

class Tally:
    def __init__(self) -> None:
        self.latency_ns: list[int] = []
        self.errors = 0
        self.not_acquired = 0


def percentile_us(sorted_ns, p):
    """Nearest rank, as run_stats.cc's PercentileUs."""
    if not sorted_ns:
        return 0.0
    rank = min(max(math.ceil(p * len(sorted_ns)), 1), len(sorted_ns))
    return sorted_ns[rank - 1] / 1000.0


async def run(a, system):
    value = b"v" * a.value_bytes
    await system.open(a.workload, a.resources)
    tallies = [Tally() for _ in range(a.clients)]
    first_error: list[str] = []
    clock = time.monotonic_ns
    start = clock() + int(a.warmup * 1e9)
    end = start + int(a.duration * 1e9)

    def op_of(c: int):
        if a.workload == "lock_cycle":
            return lambda k: system.lock_cycle((c + k * a.clients) % a.resources)
        if a.workload == "fenced_write":
            key = f"k{c}"
            return lambda k: system.fenced_write((c + k * a.clients) % a.resources, key, value)
        return lambda k: system.rpc()

    async def client(c: int) -> None:
        tally, op, k = tallies[c], op_of(c), 0
        while True:
            before = clock()
            if before >= end:
                return
            try:
                done = await op(k)
            except Exception as e:  # noqa: BLE001 - counted, the first one kept
                tally.errors += 1
                if not first_error:
                    first_error.append(f"{type(e).__name__}: {e}")
                k += 1
                continue
            after = clock()
            k += 1
            if start <= after < end:
                tally.latency_ns.append(after - before)
                if not done:
                    tally.not_acquired += 1

    async def measure_cpu():
        await asyncio.sleep(max(0, start - clock()) / 1e9)
        first = cpu_snapshot(a.server_pids)
        await asyncio.sleep(max(0, end - clock()) / 1e9)
        return first, cpu_snapshot(a.server_pids)

    results = await asyncio.gather(measure_cpu(), *(client(c) for c in range(a.clients)))
    cpu_start, cpu_end = results[0]
    await system.close()
    return summarize(a, tallies, cpu_start, cpu_end), (first_error[0] if first_error else "")


def summarize(a, tallies, cpu_start, cpu_end):
    latency = sorted(ns for t in tallies for ns in t.latency_ns)
    per_client = [len(t.latency_ns) for t in tallies]
    ops = len(latency)
    squares = sum(x * x for x in per_client)
    client_cpu, server_cpu, others = cpu_between(cpu_start, cpu_end, ops)
    return {
        "system": a.system_label, "durability": a.durability, "workload": a.workload,
        "resources": a.resources, "clients": a.clients, "duration_s": round(a.duration, 3),
        "ops": ops, "errors": sum(t.errors for t in tallies),
        "not_acquired": sum(t.not_acquired for t in tallies), "abandoned": 0,
        "ops_per_s": round(ops / a.duration, 1),
        "p50_us": round(percentile_us(latency, 0.50), 1),
        "p99_us": round(percentile_us(latency, 0.99), 1),
        "max_us": round(percentile_us(latency, 1.0), 1),
        "holder_changes_per_s": 0.0, "wait_p50_us": 0.0, "wait_p99_us": 0.0,
        "wait_max_us": 0.0, "writes_per_s": 0.0,
        "client_ops_min": min(per_client), "client_ops_max": max(per_client),
        "jain_fairness": round(sum(per_client) ** 2 / (len(per_client) * squares), 4)
        if squares else 0.0,
        "client_cpu_us_per_op": round(client_cpu, 1),
        "server_cpu_us_per_op": round(server_cpu, 1) if a.server_pids else 0.0,
        "other_cpu_share": round(others, 3),
    }


def main(argv=None) -> int:
    a = parse_flags(sys.argv[1:] if argv is None else argv)
    sys.path.insert(0, str(HERE))
    with tempfile.TemporaryDirectory(prefix="fencegate-pyloadgen-") as scratch:
        try:
            from systems import EchoSystem, FencegateSystem, RedisSystem
            name = lambda i: f"{a.run_id}-r{i}"  # noqa: E731
            if a.system == "fencegate":
                import_fencegate(a.stubs, Path(scratch))
                system = FencegateSystem(a.target, a.gateway_target, name)
            elif a.system == "redis":
                system = RedisSystem(a.target, f"pyloadgen-{os.getpid()}", name)
            else:
                system = EchoSystem(a.target, echo_message_class(Path(scratch)))
            summary, first_error = asyncio.run(run(a, system))
        except Exception as e:  # noqa: BLE001 - the run could not be set up
            print(f"loadgen.py: {type(e).__name__}: {e}", file=sys.stderr)
            return 2
    print(json.dumps(summary), flush=True)
    if summary["errors"]:
        print(f"loadgen.py: {summary['errors']} operations failed; first: {first_error}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
