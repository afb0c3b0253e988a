#!/usr/bin/python3
"""A worker that processes a queue under a lease, with the Python client.

    queue_worker.py --lockservice=127.0.0.1:7070 --gateway=127.0.0.1:7071 --enqueue=5
    queue_worker.py --lockservice=127.0.0.1:7070 --gateway=127.0.0.1:7071

The queue is the gateway resource "jobs": a key "todo/<n>" per job. The
worker holds the lock "jobs" (one worker at a time; a second one waits) and
moves each job to "done/<n>" with its result in one fenced multi-write, so
a job is done exactly once even if the worker is paused or cut off: once
its lease is lost, its next move is refused (StaleToken) and another
worker, holding a newer token, carries on from where the queue is.
Before each job it checks its lease, so it stops early when it knows the
lease is gone. Prints what it did; exits 0 when the queue is empty.
"""

from __future__ import annotations

import argparse
import sys

import fencegate

QUEUE = "jobs"


def enqueue(locks: fencegate.LockClient, gateway: fencegate.GatewayClient, count: int) -> None:
    with locks.lock(QUEUE, ttl=10) as lease:
        start = len(gateway.list(QUEUE).keys)
        gateway.multi_write(lease, [fencegate.Mutation(f"todo/{start + i:06d}", b"%d" % i)
                                    for i in range(count)])
    print(f"enqueued {count} jobs")


def work(locks: fencegate.LockClient, gateway: fencegate.GatewayClient) -> int:
    """Processes every queued job; returns how many it did."""
    done = 0
    with locks.lock(QUEUE, ttl=10) as lease:
        gateway.fence(lease)  # from now on, older holders are shut out
        page_token = ""
        while True:
            page = gateway.list(QUEUE, page_token=page_token)
            for job in (k.key for k in page.keys if k.key.startswith("todo/")):
                lease.check()  # stop at once if we know the lease is lost
                item = gateway.get(lease, job)
                result = b"%d" % (int(item.value) ** 2)  # the work
                gateway.multi_write(lease, [
                    fencegate.Mutation(job, None, expected_version=item.version),
                    fencegate.Mutation("done/" + job.removeprefix("todo/"), result)])
                done += 1
            if not page.next_page_token:
                return done
            page_token = page.next_page_token


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockservice", default="127.0.0.1:7070")
    parser.add_argument("--gateway", default="127.0.0.1:7071")
    parser.add_argument("--enqueue", type=int, default=0, help="add this many jobs and exit")
    args = parser.parse_args(argv)
    with fencegate.LockClient(args.lockservice) as locks, \
            fencegate.GatewayClient(args.gateway) as gateway:
        if args.enqueue:
            enqueue(locks, gateway, args.enqueue)
            return 0
        try:
            print(f"processed {work(locks, gateway)} jobs")
        except (fencegate.LeaseLost, fencegate.StaleToken) as e:
            print(f"stopped: the lease was lost ({e.message}); another worker carries on")
            return 1
        left = [k.key for k in gateway.list(QUEUE).keys if k.key.startswith("todo/")]
        print(f"{len(left)} jobs left")
        return 0 if not left else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
