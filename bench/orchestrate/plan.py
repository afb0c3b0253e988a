"""The points of a benchmark run: which workload, on how many resources, at
how many clients, against which instances (a system as one set of servers
and one load generator shape: "fencegate", "fencegate-stream",
"redis-always", ...), in the order of their rotation.

The ceilings are sampled throughout the run, not once, so a burst of
someone else's disk or CPU use cannot set them alone: the empty call runs in
every fenced-write point's rotation (at the same client count), and a 1 s
fsync loop follows every point (main's loop).

  lock_instances(options)                 the instances of the lock points
  points(options, loop_redis)             [Point], or raises Exit(2) when
                                          --workloads leaves none (and no
                                          failover row: failover.py)

Standard library only.
"""

import collections

from . import failover
from .options import Exit

Point = collections.namedtuple("Point", "workload resources clients instances")


def lock_instances(o):
    out = []
    if o.has("fencegate"):
        out += ["fencegate", "fencegate-stream"]
    if o.metrics_ab:
        out += ["fencegate-nometrics"]
    if o.has("etcd"):
        out += ["etcd"]
    if o.has("redis"):
        out += ["redis-always", "redis-everysec"]
    return out


def python_instances(o, workload):
    """The Python load generator's instances, in the rotation of the
    32-client points on 1,000 resources."""
    if not o.has("python"):
        return []
    return ["python-fencegate", "python-redis"] + (["python-echo"]
                                                   if workload == "fenced_write" else [])


def loop_instances(o, loop_redis, workload, resources, clients):
    """The event-loop clients (issue 32), in the rotation of these points:
    lock cycles on many resources (try-locks), the hand-off on one hot
    resource (waiting acquires), and fenced writes with the streaming echo
    beside them, on gRPC's callback API and on its asynchronous one."""
    if (not o.has("loop") or (resources == 1 and workload == "lock_cycle")
            or clients not in (1, 32)):
        return []
    out = ["fencegate-loop"]
    if loop_redis:
        out += ["redis-loop"]
    if workload == "fenced_write":
        out += ["echo-stream", "echo-cq"]
    return out


def points(o, loop_redis):
    locks = lock_instances(o)
    out = []
    if o.has("grpc-empty"):
        out += [Point("rpc", 0, c, ["grpc-empty"]) for c in (1, 8, 32)]
    if locks:
        for w in ("lock_cycle", "fenced_write"):
            extra = []
            if w == "fenced_write" and o.has("grpc-empty"):
                extra = ["grpc-empty"]
            if w == "fenced_write" and o.storage == "postgres":
                extra = ["fencegate-pg", "sql-fenced", "sql-plain"] + extra
            for r in (1000, 1):
                # The lock service on etcd: the lock workloads (fenced writes
                # measure the gateway, which is the same); through the standby
                # on 1,000.
                if o.store and w == "lock_cycle":
                    extra = ["fencegate-etcd"]
                    if r == 1000:
                        extra += ["fencegate-etcd-standby"]
                for c in (1, 8, 32):
                    py = python_instances(o, w) if (r, c) == (1000, 32) else []
                    py += loop_instances(o, loop_redis, w, r, c)
                    out.append(Point(w, r, c, locks + extra + py))
        out.append(Point("handoff", 1, 32, locks + (["fencegate-etcd"] if o.store else [])
                         + loop_instances(o, loop_redis, "handoff", 1, 32)))
        # The kinds of lock (issue 21), at 32 clients: shared leases on one
        # hot resource (beside lock_cycle on 1,000: no hand-off, so the same
        # rate is expected), readers and writers 90/10 on 4 hot resources, 4
        # resources at once on sets of each client's own (1,000) and
        # overlapping ones (8).
        out.append(Point("shared_cycle", 1, 32, list(locks)))
        out.append(Point("rw_mix", 4, 32, list(locks)))
        out.append(Point("multi_cycle", 1000, 32, list(locks)))
        out.append(Point("multi_cycle", 8, 32, list(locks)))
        # One client, 32 writes in flight on one connection: the gateway's
        # Session stream beside Redis' pipelining.
        pipelined = []
        if o.has("fencegate"):
            pipelined += ["fencegate-stream"]
        if o.has("redis"):
            pipelined += ["redis-always", "redis-everysec"]
        out.append(Point("pipelined_write", 1000, 1, pipelined))
    elif o.has("python") or o.has("loop"):
        for w in ("lock_cycle", "fenced_write"):
            for r in (1000, 1):
                for c in (1, 32):
                    py = loop_instances(o, loop_redis, w, r, c)
                    if (r, c) == (1000, 32):
                        py += python_instances(o, w)
                    if py:
                        out.append(Point(w, r, c, py))
        handoff = loop_instances(o, loop_redis, "handoff", 1, 32)
        if handoff:
            out.append(Point("handoff", 1, 32, handoff))
    if not out and o.has("fsync"):
        out.append(Point("fsync", 0, 1, ["fsync"]))
    if o.workloads:
        wanted = f",{o.workloads},"
        kept = [p for p in out if f",{p.workload}," in wanted]
        if not kept and not failover.systems(o):
            raise Exit(2, f"bench: --workloads={o.workloads}: no point of these workloads with "
                          f"--systems={o.systems}")
        out = kept
    return out
