#!/usr/bin/python3
"""Kleppmann's scenario with the Python client: a paused holder's late write
is refused, and no update is lost.

    kleppmann.py --lockservice=127.0.0.1:7070 --gateway=127.0.0.1:7071

Two worker processes increment one counter at the gateway, each under the
lock "counter", each with a read-modify-write fenced by its lease:

1. worker 1 acquires (TTL 1 s) and reads the counter;
2. it is frozen (SIGSTOP: a GC pause, a stopped VM) past its TTL, and the
   lock service expires its lease;
3. worker 2 acquires, reads, writes counter + 1, releases;
4. worker 1 resumes and writes its stale counter + 1: refused (StaleToken,
   with worker 2's token), so worker 2's update is not overwritten;
5. worker 1 acquires again and redoes its read-modify-write.

The counter ends 2 above where it started: no update lost. Exits 0 when
everything happened so, 1 otherwise.

The workers are started with multiprocessing's "spawn" method and create
their gRPC clients themselves: gRPC channels must not cross a fork().
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import time

import fencegate

RESOURCE = "counter"
KEY = "value"


def increment(locks: fencegate.LockClient, gateway: fencegate.GatewayClient,
              ttl: float, before_write=None) -> tuple[int, int]:
    """One fenced read-modify-write of the counter; returns (token, new value).
    ``before_write(lease, value)`` runs between the read and the write."""
    with locks.lock(RESOURCE, ttl=ttl, wait=30) as lease:
        got = gateway.get(lease, KEY)
        value = int(got.value or b"0")
        if before_write is not None:
            before_write(lease, value)
        gateway.put(lease, KEY, str(value + 1).encode(), expected_version=got.version)
        return lease.token, value + 1


def worker_1(lockservice: str, gateway_address: str, pipe) -> None:
    locks = fencegate.LockClient(lockservice)  # after the start of this process
    gateway = fencegate.GatewayClient(gateway_address)

    def pause_here(lease: fencegate.Lease, value: int) -> None:
        pipe.send(("read", lease.token, value))  # the parent freezes us now
        pipe.recv()  # "go": we were frozen past the TTL

    try:
        token, value = increment(locks, gateway, ttl=1.0, before_write=pause_here)
        pipe.send(("written", token, value))
    except fencegate.StaleToken as e:
        pipe.send(("refused", e.current_token, 0))
        token, value = increment(locks, gateway, ttl=10)  # redo it, under a new lease
        pipe.send(("redone", token, value))
    finally:
        gateway.close()
        locks.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockservice", default="127.0.0.1:7070")
    parser.add_argument("--gateway", default="127.0.0.1:7071")
    args = parser.parse_args(argv)

    locks = fencegate.LockClient(args.lockservice)
    gateway = fencegate.GatewayClient(args.gateway)
    start = int(gateway.get_unfenced(RESOURCE, KEY).value or b"0")
    print(f"counter starts at {start}")

    spawn = multiprocessing.get_context("spawn")
    ours, theirs = spawn.Pipe()
    worker = spawn.Process(target=worker_1, args=(args.lockservice, args.gateway, theirs))
    worker.start()
    _, token_1, read_1 = ours.recv()
    print(f"worker 1 (token {token_1}) read {read_1} and is frozen (SIGSTOP)")
    os.kill(worker.pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 30
        while locks.describe(RESOURCE).token == token_1:
            if time.monotonic() > deadline:
                print("the lock service never expired worker 1's lease")
                return 1
            time.sleep(0.05)
        print("worker 1's lease expired on the lock service")
        token_2, value_2 = increment(locks, gateway, ttl=10)
        print(f"worker 2 (token {token_2}) wrote {value_2}")
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    ours.send("go")
    outcome, token, value = ours.recv()
    ok = True
    if outcome == "refused":
        print(f"worker 1 resumed; its late write was refused: StaleToken, the fence is "
              f"token {token}")
        ok &= token == token_2
        outcome, token, value = ours.recv()
        print(f"worker 1 acquired again (token {token}) and redid its increment: {value}")
    else:
        print(f"worker 1's late write was NOT refused ({outcome}): an update was lost")
        ok = False
    worker.join(30)
    final = int(gateway.get_unfenced(RESOURCE, KEY).value or b"0")
    print(f"counter ends at {final} (started at {start}: "
          f"{'no update lost' if final == start + 2 else 'an update was lost'})")
    ok &= final == start + 2 and worker.exitcode == 0
    gateway.close()
    locks.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
