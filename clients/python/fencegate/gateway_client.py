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
from dataclasses import dataclass
from typing import Any, Optional, Protocol, Sequence

import grpc

from fencegate import _util
from fencegate._proto import gateway_pb2, gateway_pb2_grpc, token_pb2
from fencegate._session import SessionStream
from fencegate._util import TLS, RetryPolicy
from fencegate.errors import DeadlineExceeded, FencegateError, Unavailable, from_rpc_error
from fencegate.lease import LeaseMode, Signature

_CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


class Fenced(Protocol):
    """What a fenced call needs: a Lease, or a Fencing."""

    resource: str
    token: int
    mode: LeaseMode

    @property
    def signature(self) -> Signature: ...


@dataclass(frozen=True)
class Fencing:
    """A token without its Lease (e.g. handed to another process)."""

    resource: str
    token: int
    signature: Signature = Signature()
    mode: LeaseMode = LeaseMode.EXCLUSIVE


@dataclass(frozen=True)
class Mutation:
    """One change of a multi_write: ``value`` None deletes the key;
    ``expected_version`` makes it a compare-and-set (0: must not exist)."""

    key: str
    value: Optional[bytes] = None
    expected_version: Optional[int] = None


@dataclass(frozen=True)
class WriteResult:
    version: int  # the key's new version (for a delete: the revision of the delete)
    max_token: int  # the resource's fence after the write


@dataclass(frozen=True)
class MultiWriteResult:
    versions: tuple[int, ...]  # in mutation order (all equal: one revision)
    max_token: int


@dataclass(frozen=True)
class ReadResult:
    found: bool
    value: bytes
    version: int  # 0 when not found
    max_token: int


@dataclass(frozen=True)
class ResourceSummary:
    max_token: int
    key_count: int
    total_bytes: int


@dataclass(frozen=True)
class KeyInfo:
    key: str
    version: int
    size_bytes: int


@dataclass(frozen=True)
class ListPage:
    keys: tuple[KeyInfo, ...]
    next_page_token: str  # empty on the last page


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
        return self._write(self._write_request(lease, key, value, False, expected_version))

    def compare_and_set(self, lease: Fenced, key: str, value: bytes,
                        expected_version: int) -> WriteResult:
        """put() only if the key's version is ``expected_version`` (0: the
        key must not exist); VersionMismatch otherwise (nothing changed)."""
        return self.put(lease, key, value, expected_version=_int(expected_version,
                                                                 "expected_version"))

    def delete(self, lease: Fenced, key: str, *,
               expected_version: Optional[int] = None) -> WriteResult:
        """Deletes ``key`` (an absent key too: it still raises the fence)."""
        return self._write(self._write_request(lease, key, None, True, expected_version))

    def multi_write(self, lease: Fenced, mutations: Sequence[Mutation]) -> MultiWriteResult:
        """Several puts and deletes in one resource, all or nothing."""
        request = gateway_pb2.MultiWriteRequest(
            resource=_util.name_bytes(lease.resource, "resource"), token=lease.token,
            signature=_signature(lease), mode=lease.mode,
            mutations=[_mutation(m.key, m.value, m.value is None, m.expected_version)
                       for m in mutations])
        r = self._send("multi_write", request, "MultiWrite", write=True)
        return MultiWriteResult(versions=tuple(r.versions), max_token=r.max_token)

    def get(self, lease: Fenced, key: str) -> ReadResult:
        """A fenced read: refused (StaleToken) if the token is stale; with
        an exclusive lease it raises the fence, with a shared one it leaves
        it as it is."""
        request = gateway_pb2.ReadRequest(
            resource=_util.name_bytes(lease.resource, "resource"),
            key=_util.name_bytes(key, "key"), token=lease.token, signature=_signature(lease),
            mode=lease.mode)
        return _read_result(self._send("read", request, "Read", write=False))

    def get_unfenced(self, resource: str, key: str) -> ReadResult:
        """A plain read (no token): the latest committed value; checks nothing."""
        request = gateway_pb2.ReadRequest(resource=_util.name_bytes(resource, "resource"),
                                          key=_util.name_bytes(key, "key"))
        return _read_result(self._send("read", request, "Read", write=False))

    def fence(self, lease: Fenced) -> int:
        """Raises the resource's fence to the lease's token without writing
        (a new holder calls it right after acquiring); returns the fence."""
        request = gateway_pb2.FenceRequest(
            resource=_util.name_bytes(lease.resource, "resource"), token=lease.token,
            signature=_signature(lease), mode=lease.mode)
        return self._send("fence", request, "Fence", write=False).max_token

    def put_async(self, lease: Fenced, key: str, value: bytes, *,
                  expected_version: Optional[int] = None) -> "Future[WriteResult]":
        """put() on the Session stream without waiting: pipelining. The
        future holds the WriteResult or the error. One attempt, never
        retried. Of two fenced calls sent by this client to one resource,
        the one sent first takes effect first."""
        request = self._write_request(lease, key, value, False, expected_version)
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
                r = f.result().write
                result.set_result(WriteResult(version=r.version, max_token=r.max_token))

        sent.add_done_callback(done)
        return result

    # -- unfenced calls (always unary) --------------------------------------

    def describe(self, resource: str) -> ResourceSummary:
        """The resource's fence, key count and total size (zeros if unknown)."""
        request = gateway_pb2.DescribeResourceRequest(
            resource=_util.name_bytes(resource, "resource"))
        r = self._unary_call("Describe", request, write=False)
        return ResourceSummary(max_token=r.max_token, key_count=r.key_count,
                               total_bytes=r.total_bytes)

    def list(self, resource: str, *, page_size: int = 0, page_token: str = "") -> ListPage:
        """One page of the resource's keys, in key order."""
        request = gateway_pb2.ListRequest(resource=_util.name_bytes(resource, "resource"),
                                          page_size=_int(page_size, "page_size"),
                                          page_token=_util.name_bytes(page_token, "page_token"))
        r = self._unary_call("List", request, write=False)
        return ListPage(keys=tuple(KeyInfo(k.key, k.version, k.size_bytes) for k in r.keys),
                        next_page_token=r.next_page_token)

    def close(self) -> None:
        """Ends the stream and the channel. Idempotent."""
        self._session.close()
        self._connection.close()

    def __enter__(self) -> "GatewayClient":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- internals ------------------------------------------------------------

    def _write_request(self, lease: Fenced, key: str, value: Optional[bytes], delete: bool,
                       expected_version: Optional[int]):
        return gateway_pb2.WriteRequest(
            resource=_util.name_bytes(lease.resource, "resource"), token=lease.token,
            signature=_signature(lease), mode=lease.mode,
            mutation=_mutation(key, value, delete, expected_version))

    def _write(self, request) -> WriteResult:
        r = self._send("write", request, "Write", write=True)
        return WriteResult(version=r.version, max_token=r.max_token)

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
                                       _retryable if write else _always)

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
                                       _retryable if write else _always)

    def _connect(self, deadline: float) -> None:
        """Waits for a connection before a stream is opened or a unary call
        made, so that a call the gateway never saw says so
        (Unavailable(maybe_applied=False)) and can be retried safely."""
        if not self._unary and self._session.is_open():
            return
        ready = grpc.channel_ready_future(self._connection.channel)
        try:
            ready.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            ready.cancel()
            raise Unavailable("could not connect to the gateway; the call was not sent",
                              maybe_applied=False) from None


def _retryable(error: FencegateError) -> bool:
    return isinstance(error, Unavailable) and not error.maybe_applied


def _always(error: FencegateError) -> bool:
    return True


def _int(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return value


def _signature(lease: Fenced) -> token_pb2.TokenSignature:
    signature = lease.signature
    return token_pb2.TokenSignature(key_id=signature.key_id, mac=signature.mac)


def _mutation(key: str, value: Optional[bytes], delete: bool,
              expected_version: Optional[int]) -> Any:
    mutation = gateway_pb2.Mutation(key=_util.name_bytes(key, "key"))
    if delete:
        mutation.delete = True
    else:
        mutation.value = _util.value_bytes(value, "value")  # type: ignore[arg-type]
    if expected_version is not None:
        mutation.expected_version = _int(expected_version, "expected_version")
    return mutation


def _read_result(r) -> ReadResult:
    return ReadResult(found=r.found, value=r.value, version=r.version, max_token=r.max_token)

