"""GatewayClient: fenced storage through fencegate-gateway (synchronous API).

    gateway = fencegate.GatewayClient("127.0.0.1:7071")
    with locks.lock("orders") as lease:
        got = gateway.get(lease, "total")                      # fenced read
        gateway.put(lease, "total", b"43", expected_version=got.version)

Every call made with a Lease (or a Fencing) carries its resource, token,
signature and mode, so the gateway checks it against the resource's fence
and raises the fence: the first use of a newer lease shuts out every older
holder. A refused token raises StaleToken (``current_token`` = the fence);
a compare-and-set that lost raises VersionMismatch; neither is retried.
docs/gateway.md; errors: docs/errors.md.

Transport: the gateway's Session stream (default; one per client, shared by
its threads, many calls in flight: ``put_async`` pipelines from one thread),
or one unary call each (``transport="unary"``). Same semantics either way.

Retries: UNAVAILABLE is retried with backoff until the call's deadline
(RetryPolicy), except for a write whose answer was lost: writes carry no
request id, so a write that may have been applied raises
``Unavailable(maybe_applied=True)`` instead of being sent again. Read the
key (its version) to learn what happened. Reads, fences (idempotent) and
writes that were never sent are retried.

Values are ``bytes``; resource and key names ``str``.

Thread safety: thread-safe. Create it after fork().
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Optional, Sequence

import grpc

from fencegate import _gateway_messages as m
from fencegate import _util
from fencegate._gateway_messages import (  # the public types, also importable from here
    Fenced, Fencing, KeyInfo, ListPage, MultiWriteResult, Mutation, ReadResult,
    ResourceSummary, WriteResult)
from fencegate._proto import gateway_pb2, gateway_pb2_grpc
from fencegate._session import SessionStream
from fencegate._util import TLS, RetryPolicy
from fencegate.errors import DeadlineExceeded, FencegateError, Unavailable, from_rpc_error

_CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


class GatewayClient:
    """A client of the gateway at ``target`` ("host:port").

    Args:
        target: the gateway's address. tls: TLS settings (None: plaintext).
        retry: deadlines and backoff. transport: "stream" (default) or
        "unary". max_in_flight: calls in flight on the stream (<= the
        gateway's --max_stream_in_flight, 256 by default).
    """

    def __init__(self, target: str, *, tls: Optional[TLS] = None,
                 retry: RetryPolicy = RetryPolicy(), transport: str = "stream",
                 max_in_flight: int = 256) -> None:
        if transport not in ("stream", "unary"):
            raise ValueError(f"transport must be 'stream' or 'unary', not {transport!r}")
        self._retry = retry
        self._connection = _util.Connection(target, tls, _CHANNEL_OPTIONS,
                                            gateway_pb2_grpc.GatewayStub)
        self._unary = transport == "unary"
        self._closed = False
        # A write the gateway itself answers UNAVAILABLE may still have
        # committed (PostgreSQL storage, a COMMIT whose connection broke).
        self._session = SessionStream(
            lambda: self._connection.stub.Session,
            lambda calls: gateway_pb2.GatewaySessionRequest(calls=calls),
            "the gateway's Session stream", reconnect=self._connection.renew,
            max_in_flight=max_in_flight,
            answered_unavailable_maybe_applied=True)

    # -- fenced calls ------------------------------------------------------------

    def put(self, lease: Fenced, key: str, value: bytes, *,
            expected_version: Optional[int] = None) -> WriteResult:
        """Stores ``value`` under ``key`` if the lease's token is not stale
        (and the key's version is ``expected_version``, if given). Raises
        StaleToken, VersionMismatch, InvalidArgument, PermissionDenied,
        Unavailable (``maybe_applied`` True: not retried)."""
        return self._write(m.write_request(lease, key, value, False, expected_version))

    def compare_and_set(self, lease: Fenced, key: str, value: bytes,
                        expected_version: int) -> WriteResult:
        """put() only if the key's version is ``expected_version`` (0: the
        key must not exist); VersionMismatch otherwise (nothing changed)."""
        return self.put(lease, key, value,
                        expected_version=m.check_int(expected_version, "expected_version"))

    def delete(self, lease: Fenced, key: str, *,
               expected_version: Optional[int] = None) -> WriteResult:
        """Deletes ``key`` (an absent key too: it still raises the fence)."""
        return self._write(m.write_request(lease, key, None, True, expected_version))

    def multi_write(self, lease: Fenced, mutations: Sequence[Mutation]) -> MultiWriteResult:
        """Several puts and deletes in one resource, all or nothing."""
        return m.multi_write_result(self._send(
            "multi_write", m.multi_write_request(lease, mutations), "MultiWrite", write=True))

    def get(self, lease: Fenced, key: str) -> ReadResult:
        """A fenced read: refused (StaleToken) if the token is stale; with
        an exclusive lease it raises the fence, with a shared one it leaves
        it as it is."""
        return m.read_result(self._send("read", m.read_request(lease, key), "Read",
                                        write=False))

    def get_unfenced(self, resource: str, key: str) -> ReadResult:
        """A plain read (no token): the latest committed value; checks nothing."""
        return m.read_result(self._send("read", m.plain_read_request(resource, key), "Read",
                                        write=False))

    def fence(self, lease: Fenced) -> int:
        """Raises the resource's fence to the lease's token without writing
        (a new holder calls it right after acquiring); returns the fence."""
        return self._send("fence", m.fence_request(lease), "Fence", write=False).max_token

    def put_async(self, lease: Fenced, key: str, value: bytes, *,
                  expected_version: Optional[int] = None) -> "Future[WriteResult]":
        """put() on the Session stream without waiting: pipelining. The
        future holds the WriteResult or the error. One attempt, never
        retried. Of two fenced calls sent by this client to one resource,
        the one sent first takes effect first."""
        request = m.write_request(lease, key, value, False, expected_version)
        deadline = time.monotonic() + self._retry.rpc_timeout
        result: Future = Future()
        try:
            self._connect(deadline)
        except FencegateError as e:
            result.set_exception(e)
            return result
        sent = self._session.send(gateway_pb2.GatewayCall(write=request), deadline)

        def done(f: Future) -> None:
            error = f.exception()
            if error is not None:
                result.set_exception(error)
            else:
                result.set_result(m.write_result(f.result().write))

        sent.add_done_callback(done)
        return result

    # -- unfenced calls (always unary) --------------------------------------

    def describe(self, resource: str) -> ResourceSummary:
        """The resource's fence, key count and total size (zeros if unknown)."""
        return m.summary(self._unary_call("Describe", m.describe_request(resource),
                                          write=False))

    def list(self, resource: str, *, page_size: int = 0, page_token: str = "") -> ListPage:
        """One page of the resource's keys, in key order."""
        return m.list_page(self._unary_call("List", m.list_request(resource, page_size,
                                                                   page_token), write=False))

    def close(self) -> None:
        """Ends the stream and the channel; later calls raise
        FencegateError. Idempotent."""
        self._closed = True
        self._session.close()
        self._connection.close()

    def __enter__(self) -> "GatewayClient":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- internals ------------------------------------------------------------

    def _write(self, request) -> WriteResult:
        return m.write_result(self._send("write", request, "Write", write=True))

    def _send(self, kind: str, request, unary: str, *, write: bool) -> Any:
        if self._unary:
            return self._unary_call(unary, request, write=write)
        deadline = time.monotonic() + self._retry.call_timeout

        def attempt(deadline: float):
            timeout = min(self._retry.rpc_timeout, deadline - time.monotonic())
            self._connect(time.monotonic() + timeout)
            future = self._session.send(gateway_pb2.GatewayCall(**{kind: request}),
                                        time.monotonic() + timeout)
            try:
                result = future.result(timeout=max(0.0, timeout))
            except FutureTimeout:
                raise DeadlineExceeded(
                    f"no answer from the gateway within {timeout:.3f} s; the call may "
                    "still be applied") from None
            return getattr(result, kind)

        return _util.retry_unavailable(self._retry, deadline, attempt,
                                       m.write_retryable if write else m.always_retryable)

    def _unary_call(self, method: str, request, *, write: bool) -> Any:
        deadline = time.monotonic() + self._retry.call_timeout

        def attempt(deadline: float):
            timeout = min(self._retry.rpc_timeout, deadline - time.monotonic())
            self._connect(time.monotonic() + timeout)
            try:
                return getattr(self._connection.stub, method)(request,
                                                              timeout=max(0.0, timeout))
            except grpc.RpcError as e:
                if e.code() == grpc.StatusCode.UNAVAILABLE:
                    self._connection.renew()  # reconnect without grpc's backoff
                raise from_rpc_error(e, maybe_applied=write) from None

        return _util.retry_unavailable(self._retry, deadline, attempt,
                                       m.write_retryable if write else m.always_retryable)

    def _connect(self, deadline: float) -> None:
        """Waits for a connection before a stream is opened or a unary call
        made, so that a call the gateway never saw says so
        (Unavailable(maybe_applied=False)) and can be retried safely."""
        if self._closed:  # not Unavailable: nothing to retry
            raise FencegateError("the gateway client is closed")
        if not self._unary and self._session.is_open():
            return
        ready = grpc.channel_ready_future(self._connection.channel)
        try:
            ready.result(timeout=max(0.0, deadline - time.monotonic()))
        except grpc.FutureTimeoutError:  # not concurrent.futures' TimeoutError
            ready.cancel()
            raise Unavailable("could not connect to the gateway; the call was not sent",
                              maybe_applied=False) from None


__all__ = ["Fenced", "Fencing", "GatewayClient", "KeyInfo", "ListPage", "MultiWriteResult",
           "Mutation", "ReadResult", "ResourceSummary", "WriteResult"]
