"""fencegate.aio.GatewayClient: fenced storage from asyncio (grpc.aio).

The calls of fencegate.GatewayClient as coroutines, with the same
semantics, errors and retries: fenced calls on the gateway's Session stream
(pipelining: calls of concurrent tasks are in flight at once, and of two
fenced calls sent to one resource the one sent first takes effect first),
or unary (``transport="unary"``); describe and list are unary. A write
whose answer was lost raises ``Unavailable(maybe_applied=True)`` and is not
sent again.

Create it inside the event loop that uses it; for that loop's tasks only.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import grpc
import grpc.aio

from fencegate import _gateway_messages as m
from fencegate._gateway_messages import (Fenced, ListPage, MultiWriteResult, Mutation,
                                         ReadResult, ResourceSummary, WriteResult)
from fencegate._proto import gateway_pb2, gateway_pb2_grpc
from fencegate._util import TLS, RetryPolicy
from fencegate.aio._session import AioSession, retrying
from fencegate.errors import from_rpc_error


class GatewayClient:
    """An asyncio client of the gateway; arguments as fencegate.GatewayClient."""

    def __init__(self, target: str, *, tls: Optional[TLS] = None,
                 retry: RetryPolicy = RetryPolicy(), transport: str = "stream",
                 max_in_flight: int = 256) -> None:
        if transport not in ("stream", "unary"):
            raise ValueError(f"transport must be 'stream' or 'unary', not {transport!r}")
        self._retry = retry
        self._unary = transport == "unary"
        # A write the gateway itself answers UNAVAILABLE may still have
        # committed (PostgreSQL storage, a COMMIT whose connection broke).
        self._session = AioSession(
            target, tls, gateway_pb2_grpc.GatewayStub,
            lambda calls: gateway_pb2.GatewaySessionRequest(calls=calls),
            "the gateway's Session stream", max_in_flight=max_in_flight,
            answered_unavailable_maybe_applied=True, connect_first=True)

    async def put(self, lease: Fenced, key: str, value: bytes, *,
                  expected_version: Optional[int] = None) -> WriteResult:
        return m.write_result(await self._send(
            "write", m.write_request(lease, key, value, False, expected_version), "Write",
            write=True))

    async def compare_and_set(self, lease: Fenced, key: str, value: bytes,
                              expected_version: int) -> WriteResult:
        return await self.put(lease, key, value,
                              expected_version=m.check_int(expected_version,
                                                           "expected_version"))

    async def delete(self, lease: Fenced, key: str, *,
                     expected_version: Optional[int] = None) -> WriteResult:
        return m.write_result(await self._send(
            "write", m.write_request(lease, key, None, True, expected_version), "Write",
            write=True))

    async def multi_write(self, lease: Fenced,
                          mutations: Sequence[Mutation]) -> MultiWriteResult:
        return m.multi_write_result(await self._send(
            "multi_write", m.multi_write_request(lease, mutations), "MultiWrite", write=True))

    async def get(self, lease: Fenced, key: str) -> ReadResult:
        return m.read_result(await self._send("read", m.read_request(lease, key), "Read",
                                              write=False))

    async def get_unfenced(self, resource: str, key: str) -> ReadResult:
        return m.read_result(await self._send("read", m.plain_read_request(resource, key),
                                              "Read", write=False))

    async def fence(self, lease: Fenced) -> int:
        return (await self._send("fence", m.fence_request(lease), "Fence",
                                 write=False)).max_token

    async def describe(self, resource: str) -> ResourceSummary:
        return m.summary(await self._unary_call("Describe", m.describe_request(resource),
                                                write=False))

    async def list(self, resource: str, *, page_size: int = 0,
                   page_token: str = "") -> ListPage:
        return m.list_page(await self._unary_call(
            "List", m.list_request(resource, page_size, page_token), write=False))

    async def close(self) -> None:
        """Ends the stream and closes the channels. Idempotent."""
        await self._session.close()

    async def __aenter__(self) -> "GatewayClient":
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    async def _send(self, kind: str, request, unary: str, *, write: bool) -> Any:
        if self._unary:
            return await self._unary_call(unary, request, write=write)

        async def attempt(deadline: float):
            timeout = min(self._retry.rpc_timeout, deadline - time.monotonic())
            result = await self._session.call(gateway_pb2.GatewayCall(**{kind: request}),
                                              timeout)
            return getattr(result, kind)

        return await retrying(self._retry, time.monotonic() + self._retry.call_timeout,
                              attempt, m.write_retryable if write else m.always_retryable)

    async def _unary_call(self, method: str, request, *, write: bool) -> Any:
        async def attempt(deadline: float):
            timeout = min(self._retry.rpc_timeout, deadline - time.monotonic())
            await self._session.wait_ready(timeout)
            try:
                return await getattr(self._session.stub, method)(request,
                                                                 timeout=max(0.0, timeout))
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.UNAVAILABLE:
                    self._session.renew_channel()  # reconnect without grpc's backoff
                raise from_rpc_error(e, maybe_applied=write) from None

        return await retrying(self._retry, time.monotonic() + self._retry.call_timeout,
                              attempt, m.write_retryable if write else m.always_retryable)


__all__ = ["GatewayClient"]
