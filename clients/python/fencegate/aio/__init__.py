"""fencegate for asyncio, on grpc.aio: the lock service and the gateway.

    import fencegate.aio

    async with fencegate.aio.LockClient("127.0.0.1:7070") as locks, \
            fencegate.aio.GatewayClient("127.0.0.1:7071") as gateway:
        async with locks.lock("orders", ttl=10) as lease:
            await gateway.put(lease, "total", b"42")
        async with await locks.campaign("scheduler", b"10.0.0.2:8080") as me:
            await gateway.put(me.lease, "heartbeat", b"...")   # fenced by the term

The same concepts, semantics, retries and exceptions as the synchronous
clients (fencegate.LockClient, fencegate.GatewayClient); docs/python.md.
"""

from fencegate.aio._election import ElectionObserver, Leadership
from fencegate.aio._gateway import GatewayClient
from fencegate.aio._locks import Lease, LockClient

__all__ = ["ElectionObserver", "GatewayClient", "Leadership", "Lease", "LockClient"]
