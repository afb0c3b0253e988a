"""The systems bench/python/loadgen.py drives: each the way a Python user
would call it from asyncio, and each one shared object for all the run's
tasks (as a program shares its client), not one per task.

  fencegate  fencegate.aio's LockClient and GatewayClient: every call on
             their Session streams (the client's default), one stream to
             each server for all tasks.
  redis      redis.asyncio (Debian's python3-redis), one Redis object whose
             connection pool gives each task in flight a connection of its
             own, with the Lua scripts of bench/loadgen/redis_driver.cc (read from it).
  echo       grpc.aio against fencegate-echo-server's Echo.Stream: one
             bidirectional stream, the tasks' messages in flight on it, a
             reader task handing each answer to its caller: the shape of
             the fencegate client's Session stream with nothing else, the
             ceiling of a Python gRPC client.

The ops, as the C++ load generator's (bench/loadgen/workloads.h):
  lock_cycle    try-lock (TTL 10 s) a resource and release it; a refusal
                is a completed op, counted in not_acquired. Redis takes its
                cheapest lock, plain SET NX PX with no token, as the C++
                driver's lock cycle does.
  fenced_write  1 KiB written under a lease (TTL 60 s) taken on every
                resource before the clock starts (by 16 setup tasks) and
                released after it stops; Redis' leases carry an INCR'd
                token (SET NX PX + INCR in one script), each write is the
                check-and-set script.
  rpc           (echo) one round trip of an 8-byte message.

Every op returns True (done) or False (not acquired), or raises.
For one event loop's tasks only.
"""

from __future__ import annotations

import asyncio
import re
import struct
from pathlib import Path

SETUP_TASKS = 64  # more than the C++ setup_threads (16): the calls pipeline on one stream
LOCK_TTL_S = 10.0
LEASE_TTL_S = 60.0

# The Lua scripts of the C++ Redis driver, read from its source so that both
# load generators run the very same scripts: kAcquireScript (KEYS[1] lock
# key, KEYS[2] token counter; ARGV[1] owner, ARGV[2] ttl ms), kReleaseScript
# (KEYS[1] lock key; ARGV[1] owner), kFencedSetScript (KEYS[1] fence key,
# KEYS[2] data key; ARGV[1] token, ARGV[2] value).
REDIS_DRIVER = Path(__file__).resolve().parents[1] / "loadgen" / "redis_driver.cc"


def driver_script(name: str) -> str:
    """The text of `constexpr char <name>[] = R"lua(...)lua";` in REDIS_DRIVER."""
    found = re.search(rf'constexpr char {name}\[\] = R"lua\((.*?)\)lua";',
                      REDIS_DRIVER.read_text(), re.S)
    if found is None:
        raise RuntimeError(f"{REDIS_DRIVER} has no Lua script {name}: the Python load "
                           "generator runs the C++ driver's scripts; update the name here")
    return found.group(1)


TOKEN_COUNTER = "fencegate-bench:token"


async def _each(resources: int, take) -> None:
    """take(i) for every resource i, by SETUP_TASKS tasks."""
    async def worker(t: int) -> None:
        for i in range(t, resources, SETUP_TASKS):
            await take(i)
    await asyncio.gather(*(worker(t) for t in range(min(SETUP_TASKS, resources))))


class FencegateSystem:
    def __init__(self, target: str, gateway_target: str, resource_name) -> None:
        self._target, self._gateway_target = target, gateway_target
        self._name = resource_name
        self._leases: list = []

    async def open(self, workload: str, resources: int) -> None:
        import fencegate
        import fencegate.aio
        self._not_acquired = fencegate.NotAcquired
        self.locks = fencegate.aio.LockClient(self._target)
        if workload == "fenced_write":
            self.gateway = fencegate.aio.GatewayClient(self._gateway_target)
            self._leases = [None] * resources

            async def take(i: int) -> None:
                self._leases[i] = await self.locks.acquire(self._name(i), ttl=LEASE_TTL_S)
            await _each(resources, take)

    async def lock_cycle(self, resource: int) -> bool:
        try:
            lease = await self.locks.acquire(self._name(resource), ttl=LOCK_TTL_S)
        except self._not_acquired:
            return False
        await lease.release()
        return True

    async def fenced_write(self, resource: int, key: str, value: bytes) -> bool:
        await self.gateway.put(self._leases[resource], key, value)
        return True

    async def close(self) -> None:
        leases, self._leases = [lease for lease in self._leases if lease], []
        await asyncio.gather(*(lease.release() for lease in leases), return_exceptions=True)
        if hasattr(self, "gateway"):
            await self.gateway.close()
        await self.locks.close()


class RedisSystem:
    def __init__(self, target: str, client_id: str, resource_name) -> None:
        host, _, port = target.rpartition(":")
        self._host, self._port = host, int(port)
        self._client_id, self._name = client_id, resource_name
        self._sequence = 0
        self._leases: list = []  # (owner, token) per resource

    async def open(self, workload: str, resources: int) -> None:
        import redis.asyncio
        self.redis = redis.asyncio.Redis(host=self._host, port=self._port,
                                         socket_timeout=10, socket_connect_timeout=10)
        self._acquire = self.redis.register_script(driver_script("kAcquireScript"))
        self._release = self.redis.register_script(driver_script("kReleaseScript"))
        self._fenced_set = self.redis.register_script(driver_script("kFencedSetScript"))
        await self.redis.ping()
        if workload == "fenced_write":
            self._leases = [None] * resources
            ttl_ms = int(LEASE_TTL_S * 1000)

            async def take(i: int) -> None:
                owner = self._owner()
                token = await self._acquire(keys=[f"lock:{self._name(i)}", TOKEN_COUNTER],
                                            args=[owner, ttl_ms])
                if token == 0:
                    raise RuntimeError(f"setup: {self._name(i)} is already held")
                self._leases[i] = (owner, token)
            await _each(resources, take)

    def _owner(self) -> str:
        self._sequence += 1
        return f"{self._client_id}-{self._sequence}"

    async def lock_cycle(self, resource: int) -> bool:
        lock_key, owner = f"lock:{self._name(resource)}", self._owner()
        if not await self.redis.set(lock_key, owner, nx=True, px=int(LOCK_TTL_S * 1000)):
            return False
        if await self._release(keys=[lock_key], args=[owner]) != 1:
            raise RuntimeError("release: lock no longer ours")
        return True

    async def fenced_write(self, resource: int, key: str, value: bytes) -> bool:
        name = self._name(resource)
        written = await self._fenced_set(keys=[f"fence:{name}", f"data:{name}:{key}"],
                                         args=[self._leases[resource][1], value])
        if written != 1:
            raise RuntimeError("fenced set: stale token")
        return True

    async def close(self) -> None:
        leases, self._leases = self._leases, []

        async def release(i: int) -> None:
            if leases[i]:
                await self._release(keys=[f"lock:{self._name(i)}"], args=[leases[i][0]])
        await _each(len(leases), release)
        await self.redis.close()
        await self.redis.connection_pool.disconnect()


class EchoSystem:
    """One Echo.Stream; message = the call's id (8 bytes), echoed back."""

    def __init__(self, target: str, echo_message_class) -> None:
        self._target, self._message = target, echo_message_class
        self._pending: dict[int, asyncio.Future] = {}
        self._next_id = 0

    async def open(self, workload: str, resources: int) -> None:
        import grpc.aio
        self.channel = grpc.aio.insecure_channel(self._target)
        await asyncio.wait_for(self.channel.channel_ready(), 10)
        stream = self.channel.stream_stream(
            "/fencegate.bench.Echo/Stream",
            request_serializer=self._message.SerializeToString,
            response_deserializer=self._message.FromString)
        self._call = stream()
        self._write_lock = asyncio.Lock()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        why = "the stream ended"
        try:
            async for answer in self._call:
                (call_id,) = struct.unpack("<Q", answer.payload)
                future = self._pending.pop(call_id, None)
                if future is not None and not future.done():
                    future.set_result(None)
        except Exception as e:  # noqa: BLE001 - handed to every caller
            why = f"the stream failed: {e!r}"
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RuntimeError(why))
        self._pending.clear()

    async def rpc(self) -> bool:
        if self._reader.done():
            raise RuntimeError("Echo.Stream has ended")
        self._next_id += 1
        call_id = self._next_id
        future = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        async with self._write_lock:  # one write at a time on a grpc.aio stream
            await self._call.write(self._message(payload=struct.pack("<Q", call_id)))
        await future
        return True

    async def close(self) -> None:
        try:
            await self._call.done_writing()
            await asyncio.wait_for(self._reader, 5)
        finally:
            self._call.cancel()
            await self.channel.close()
