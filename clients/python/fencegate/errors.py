"""Exceptions of the fencegate client, by meaning.

Every failed call raises a subclass of :class:`FencegateError`. Which one is
decided by the gRPC status code and the ``fencegate.v1.ErrorDetail`` the
server attached (``grpc-status-details-bin``, or a Session stream result's
``error``), never by the message text (docs/errors.md):

=========================  ==============================================
exception                  when
=========================  ==============================================
:class:`StaleToken`        ABORTED / STALE_TOKEN: the gateway has seen a
                           larger token (``current_token``). Acquire again
                           and redo the read-modify-write.
:class:`VersionMismatch`   ABORTED / VERSION_MISMATCH: a compare-and-set's
                           expected version did not match.
:class:`LeaseLost`         the lease is gone: lost on the lock service, or
                           lapsed by the client's own clock. Raised by
                           ``Lease.check()`` and passed to ``on_lost``.
:class:`NotHolder`         ABORTED / LEASE_LOST from a Renew or Release: the
                           token does not hold the resource (a LeaseLost).
:class:`NotAcquired`       an acquire that was not granted (held by another,
                           the wait ran out, lock-delay). Not a server error.
:class:`PermissionDenied`  PERMISSION_DENIED (a missing or bad signature:
                           ``bad_signature``; mutual TLS identity).
:class:`ResourceExhausted` RESOURCE_EXHAUSTED: overload, too many waiters.
:class:`InvalidArgument`   INVALID_ARGUMENT; ``field`` names the request
                           field at fault. Nothing changed.
:class:`Unavailable`       UNAVAILABLE, after the client's retries;
                           ``maybe_applied`` says whether the call may have
                           taken effect (its answer was lost).
:class:`DeadlineExceeded`  an attempt ran out of time: an Unavailable whose
                           call may have been applied.
=========================  ==============================================

All exception classes are plain data and safe to share between threads.
"""

from __future__ import annotations

from typing import Optional

import grpc

from fencegate._proto import errors_pb2

_DETAILS_KEY = "grpc-status-details-bin"
_Reason = errors_pb2.ErrorDetail


class FencegateError(Exception):
    """Base of every fencegate client error.

    Attributes:
        code: the gRPC status code the server (or gRPC) answered, or None
            for errors the client decided itself (NotAcquired, a lapse).
        message: the server's message (what was wrong, what to do).
    """

    def __init__(self, message: str, *, code: Optional[grpc.StatusCode] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class StaleToken(FencegateError):
    """The gateway refused a token below the resource's fence.

    ``current_token`` is the fence (the newer holder's token). Nothing
    changed, not even the fence: acquire the lock again and redo the whole
    read-modify-write.
    """

    def __init__(self, message: str, *, current_token: int, code=grpc.StatusCode.ABORTED):
        super().__init__(message, code=code)
        self.current_token = current_token


class VersionMismatch(FencegateError):
    """A compare-and-set's expected version was not the key's version."""

    def __init__(self, message: str, *, current_token: int, current_version: int,
                 code=grpc.StatusCode.ABORTED):
        super().__init__(message, code=code)
        self.current_token = current_token
        self.current_version = current_version


class LeaseLost(FencegateError):
    """The lease no longer holds its resource: stop writing under it.

    ``reason`` is one of ``"expired"`` (pushed: the TTL ran out on the lock
    service), ``"released_elsewhere"`` (pushed: released by a call from
    elsewhere), ``"refused"`` (a renewal was refused), ``"lapsed"`` (no
    renewal was confirmed within the TTL, by the client's own clock) or
    ``"released"`` (this program released it). ``current_token`` is the
    holder's token when the service said it (0 otherwise).
    """

    def __init__(self, message: str, *, reason: str = "refused", current_token: int = 0,
                 code: Optional[grpc.StatusCode] = None) -> None:
        super().__init__(message, code=code)
        self.reason = reason
        self.current_token = current_token


class NotHolder(LeaseLost):
    """A Renew or Release named a token that does not hold the resource.

    ABORTED / LEASE_LOST from the lock service; ``current_token`` is the
    current holder's token (0 when nobody holds it). Nothing changed.
    """

    def __init__(self, message: str, *, current_token: int = 0,
                 code=grpc.StatusCode.ABORTED) -> None:
        super().__init__(message, reason="refused", current_token=current_token, code=code)


class NotAcquired(FencegateError):
    """The resource was not granted: held by another, or held back.

    Attributes: ``holder_token`` (0: nobody holds it), ``retry_after``
    (seconds until it could be free), ``lock_delay`` (held back after an
    expiry rather than held), ``resource`` (for acquire_many: the first
    resource that held the set back).
    """

    def __init__(self, message: str, *, resource: str, holder_token: int,
                 retry_after: float, lock_delay: bool) -> None:
        super().__init__(message)
        self.resource = resource
        self.holder_token = holder_token
        self.retry_after = retry_after
        self.lock_delay = lock_delay


class PermissionDenied(FencegateError):
    """PERMISSION_DENIED: ``bad_signature`` when the token's signature was
    missing or not valid; otherwise another identity holds the lease."""

    def __init__(self, message: str, *, bad_signature: bool,
                 code=grpc.StatusCode.PERMISSION_DENIED) -> None:
        super().__init__(message, code=code)
        self.bad_signature = bad_signature


class ResourceExhausted(FencegateError):
    """RESOURCE_EXHAUSTED: the server is overloaded or a limit was reached.
    Nothing was applied; back off and retry."""


class InvalidArgument(FencegateError):
    """INVALID_ARGUMENT: ``field`` names the request field at fault (e.g.
    ``"ttl_ms"``, ``"resource"``; empty when the server named none);
    ``max_value``, for a number with an upper bound, the largest value the
    server accepts, in the field's unit (wait_ms: its --max_wait in ms; 0:
    no such bound). Nothing changed; do not retry unchanged."""

    def __init__(self, message: str, *, field: str, max_value: int = 0,
                 code=grpc.StatusCode.INVALID_ARGUMENT) -> None:
        super().__init__(message, code=code)
        self.field = field
        self.max_value = max_value


class Unavailable(FencegateError):
    """The server could not be reached, or answered UNAVAILABLE, and the
    client's retries ran out (or the call is not safe to retry).

    ``maybe_applied`` is True when the call may have taken effect: its
    answer was lost (the connection broke after it was sent). A gateway
    write is then not retried by the client, because writes carry no
    request id: read the key (its version) to learn what happened.
    """

    def __init__(self, message: str, *, maybe_applied: bool,
                 code=grpc.StatusCode.UNAVAILABLE) -> None:
        super().__init__(message, code=code)
        self.maybe_applied = maybe_applied


class DeadlineExceeded(Unavailable):
    """An attempt ran out of time before its answer: it may still be
    applied (``maybe_applied`` is always True). Not retried."""

    def __init__(self, message: str) -> None:
        super().__init__(message, maybe_applied=True, code=grpc.StatusCode.DEADLINE_EXCEEDED)


def _detail_of(status: errors_pb2.RpcStatus) -> Optional[errors_pb2.ErrorDetail]:
    for any_detail in status.details:
        detail = errors_pb2.ErrorDetail()
        if any_detail.Unpack(detail):
            return detail
    return None


def from_status(code: grpc.StatusCode, message: str,
                detail: Optional[errors_pb2.ErrorDetail], *,
                maybe_applied: bool = False) -> FencegateError:
    """The exception for a failed call: its code and ErrorDetail (if any).

    ``maybe_applied`` is used for UNAVAILABLE only: whether the call may
    have taken effect.
    """
    reason = detail.reason if detail is not None else _Reason.REASON_UNSPECIFIED
    current = detail.current_token if detail is not None else 0
    if code == grpc.StatusCode.ABORTED:
        if reason == _Reason.STALE_TOKEN:
            return StaleToken(message, current_token=current)
        if reason == _Reason.VERSION_MISMATCH:
            return VersionMismatch(message, current_token=current,
                                   current_version=detail.current_version)
        if reason == _Reason.LEASE_LOST:
            return NotHolder(message, current_token=current)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        if detail is None:
            return InvalidArgument(message, field="")
        return InvalidArgument(message, field=detail.field, max_value=detail.max_value)
    if code == grpc.StatusCode.PERMISSION_DENIED:
        return PermissionDenied(message, bad_signature=reason == _Reason.BAD_SIGNATURE)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return ResourceExhausted(message, code=code)
    if code == grpc.StatusCode.UNAVAILABLE:
        return Unavailable(message, maybe_applied=maybe_applied)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return DeadlineExceeded(message)
    return FencegateError(f"{code.name}: {message}", code=code)


def from_rpc_status(status: errors_pb2.RpcStatus, *,
                    maybe_applied: bool = False) -> FencegateError:
    """The exception for a Session stream result's ``error``."""
    code = _CODES.get(status.code, grpc.StatusCode.UNKNOWN)
    return from_status(code, status.message, _detail_of(status), maybe_applied=maybe_applied)


def from_rpc_error(error: grpc.RpcError, *, maybe_applied: bool = True) -> FencegateError:
    """The exception for a failed unary call (its trailer's ErrorDetail).

    ``maybe_applied`` (UNAVAILABLE only): gRPC cannot tell a call that never
    left from one whose connection broke, so the caller says what it knows.
    """
    # A grpc.RpcError raised by a call is also a grpc.Call: code(),
    # details() and trailing_metadata().
    code = error.code()
    detail = None
    for key, value in error.trailing_metadata() or ():
        if key == _DETAILS_KEY:
            status = errors_pb2.RpcStatus()
            status.ParseFromString(value)
            detail = _detail_of(status)
    return from_status(code, error.details() or "", detail, maybe_applied=maybe_applied)


_CODES = {c.value[0]: c for c in grpc.StatusCode}
