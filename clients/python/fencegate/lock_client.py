"""LockClient: the fencegate lock service from Python (synchronous API).

    client = fencegate.LockClient("127.0.0.1:7070")
    with client.lock("orders", ttl=10) as lease:      # waits, renews, releases
        gateway.put(lease, "total", b"42")            # fenced by lease.token

Every call goes on the service's Session stream (one per client, shared by
its threads), so a Lease hears at once when the service ends it (lease.py);
an election's observer (``observe()``) is a stream of its own (election.py).
Each call has a deadline (``RetryPolicy.call_timeout``, 15 s, or one whole
attempt if longer: the wait of an acquire plus ``rpc_timeout``), and
UNAVAILABLE (a server down, restarting, a stream that broke) is retried
until then with backoff. An Acquire or Release is retried with the SAME
request id, so the service applies it once even when the first attempt's
answer was lost; Renew is "extend to" and Describe reads. Nothing else is
retried: errors are raised as the exceptions of fencegate.errors.

Names are ``str`` (sent as UTF-8), durations float seconds or
``timedelta``. The client checks types only: the service checks values and
raises InvalidArgument naming the field (one source of truth).

Thread safety: thread-safe; share one LockClient among threads. Create it
after fork() (gRPC channels do not survive a fork). ``close()`` (or
``with LockClient(...)``) stops renewing and releases the leases still held.
"""

from __future__ import annotations

import itertools
import math
import os
import socket
import threading
import time
import uuid
import weakref
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union


from fencegate import _election_messages as elections
from fencegate import _util
from fencegate._proto import lock_pb2, lock_pb2_grpc
from fencegate._renewer import Renewer
from fencegate._session import SessionStream
from fencegate._util import TLS, Duration, RetryPolicy
from fencegate._election_messages import ElectionState, Value
from fencegate.election import ElectionObserver, Leadership
from fencegate.errors import DeadlineExceeded, FencegateError, InvalidArgument, NotAcquired
from fencegate.lease import Lease, LeaseLost, LeaseMode, MultiLease, OnLost, Signature

_CHANNEL_OPTIONS = [
    # Reconnect fast after a restart: the retries pace the attempts.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]

ModeLike = Union[LeaseMode, int, str]


@dataclass(frozen=True)
class LockState:
    """A resource's state, as ``describe()`` reports it (committed state)."""

    held: bool
    holder: str
    token: int
    remaining: float  # seconds
    hold_count: int
    waiters: int
    lock_delay_remaining: float
    mode: LeaseMode
    permits: int
    holders: int


def _mode(mode: ModeLike) -> LeaseMode:
    if isinstance(mode, str):
        try:
            return LeaseMode[mode.upper()]
        except KeyError:
            raise ValueError(f"mode must be one of exclusive, shared, permit: {mode!r}") from None
    if isinstance(mode, bool) or not isinstance(mode, int):
        raise TypeError(f"mode must be a LeaseMode, not {type(mode).__name__}")
    # Any number goes to the service, which refuses one it does not know.
    return LeaseMode(mode) if mode in LeaseMode._value2member_map_ else mode  # type: ignore


class LockClient:
    """A client of the lock service at ``target`` ("host:port").

    Args:
        target: the lock service's address.
        tls: TLS (and mutual TLS) settings; None: plaintext.
        holder: the prefix of the holder names this client sends; default
            "<host>/<pid>/<random>". Each acquire without a ``holder`` of its
            own is sent as "<prefix>/<n>", a name no other acquire uses, so
            two threads (or tasks) of one client exclude each other like any
            two holders; pass the same ``holder`` to acquire reentrantly.
        retry: deadlines and backoff (RetryPolicy).
        max_in_flight: calls in flight on the Session stream (<= the
            service's --max_stream_in_flight, 256 by default).
    """

    def __init__(self, target: str, *, tls: Optional[TLS] = None,
                 holder: Optional[str] = None, retry: RetryPolicy = RetryPolicy(),
                 max_in_flight: int = 256) -> None:
        self.holder = holder if holder is not None else (
            f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}")
        _util.name_bytes(self.holder, "holder")
        self._acquires = itertools.count(1)
        self._retry = retry
        self._connection = _util.Connection(target, tls, _CHANNEL_OPTIONS,
                                            lock_pb2_grpc.LockServiceStub)
        self._renewer = Renewer(self, retry.rpc_timeout)
        self._session = SessionStream(
            lambda: self._connection.stub.Session,
            lambda calls: lock_pb2.LockSessionRequest(calls=calls),
            "the lock service's Session stream", reconnect=self._connection.renew,
            max_in_flight=max_in_flight,
            on_message=self._on_message, on_end=self._renewer.stream_ended)
        self._observers: "weakref.WeakSet[ElectionObserver]" = weakref.WeakSet()
        self._closed = False

    # -- leases ---------------------------------------------------------------

    def acquire(self, resource: str, *, ttl: Duration = 10.0, wait: Duration = 0.0,
                mode: ModeLike = LeaseMode.EXCLUSIVE, permits: int = 0,
                holder: Optional[str] = None, request_id: Optional[bytes] = None,
                on_lost: Optional[OnLost] = None,
                renew_fraction: float = 1.0 / 3) -> Lease:
        """Acquires ``resource`` and returns a self-renewing Lease.

        ``wait`` = 0 is a try-lock; otherwise the call queues FIFO behind
        earlier waiters for up to ``wait``. ``holder``: see the class (the
        same holder acquiring again gets the same token, one more hold).
        ``mode``: exclusive (default), shared, or permit with ``permits`` =
        the semaphore's size.
        ``on_lost(error)`` runs once if the lease is lost (not on release).
        Raises NotAcquired when not granted (held, the wait ran out,
        lock-delay), InvalidArgument (naming the field), Unavailable.
        """
        request = lock_pb2.AcquireRequest(resource=_util.name_bytes(resource, "resource"))
        sent = time.monotonic()
        response = self._send_acquire(request, ttl, wait, mode, permits, holder, request_id)
        if not response.acquired:
            raise _not_acquired(f"resource '{resource}' was not acquired", resource, response)
        return self._new_lease(resource, response, _mode(response.mode), ttl,
                               _util.granted_at(sent, response), on_lost, renew_fraction)

    def lock(self, resource: str, *, ttl: Duration = 10.0, wait: Duration = 60.0,
             **options: Any) -> "_LockContext":
        """A context manager: acquires on entry (waiting up to ``wait``,
        60 s by default), renews in the background, releases on exit.

            with client.lock("orders", ttl=10) as lease: ...

        A loss does not interrupt the body (check ``lease.check()``, or let
        the next fenced write raise StaleToken). Other options as acquire().
        """
        return _LockContext(self, resource, dict(ttl=ttl, wait=wait, **options))

    def acquire_many(self, resources: Sequence[str], *, ttl: Duration = 10.0,
                     wait: Duration = 0.0, mode: ModeLike = LeaseMode.EXCLUSIVE,
                     holder: Optional[str] = None, request_id: Optional[bytes] = None,
                     on_lost: Optional[OnLost] = None,
                     renew_fraction: float = 1.0 / 3) -> MultiLease:
        """Several resources at once, granted all together or not at all
        (docs/semantics.md, "Several resources at once"): 1 to the
        service's --max_multi_resources (8) distinct names, exclusive or
        shared. ``on_lost`` runs once, for the first lease lost. Raises
        NotAcquired naming the resource that held the set back.
        """
        if isinstance(resources, (str, bytes)):
            raise TypeError("resources must be a sequence of str, not one name")
        names = [_util.name_bytes(r, "resources") for r in resources]
        request = lock_pb2.AcquireRequest(resources=names)
        sent = time.monotonic()
        response = self._send_acquire(request, ttl, wait, mode, 0, holder, request_id)
        if not response.acquired or len(response.leases) != len(names):
            busy = response.busy_resource
            raise _not_acquired(f"none of the resources was acquired: '{busy}' was not",
                                busy, response)
        once = _Once(on_lost)
        leases = []
        began = _util.granted_at(sent, response)
        for resource, granted in zip(resources, response.leases):
            leases.append(self._new_lease(resource, granted, _mode(response.mode), ttl, began,
                                          once if on_lost else None, renew_fraction))
        return MultiLease(leases)

    # -- the plain calls ----------------------------------------------------

    def renew(self, resource: str, token: int, *, ttl: Duration,
              signature: Signature = Signature(),
              mode: ModeLike = LeaseMode.EXCLUSIVE) -> Any:
        """Extends the lease to now + ttl; returns the RenewResponse
        (``ttl_ms``, ``signature``). Raises NotHolder if ``token`` no longer
        holds the resource (nothing changed)."""
        request = lock_pb2.RenewRequest(
            resource=_util.name_bytes(resource, "resource"), token=_util.int_arg(token, "token"),
            ttl_ms=_util.to_ms(ttl, "ttl"), mode=_mode(mode),
            signature=_util.signature_message(signature))
        return self._call("renew", request).renew

    def release(self, resource: str, token: int, *, signature: Signature = Signature(),
                mode: ModeLike = LeaseMode.EXCLUSIVE,
                request_id: Optional[bytes] = None) -> int:
        """Drops one hold; returns the holds left (0: the lease ended).
        Retries reuse one request id, so one hold is dropped. Raises
        NotHolder if ``token`` does not hold the resource."""
        request = lock_pb2.ReleaseRequest(
            resource=_util.name_bytes(resource, "resource"), token=_util.int_arg(token, "token"),
            mode=_mode(mode), signature=_util.signature_message(signature),
            request_id=request_id if request_id is not None else _util.new_request_id())
        return self._call("release", request).release.hold_count

    def describe(self, resource: str) -> LockState:
        """The resource's committed state (an unknown resource is free)."""
        request = lock_pb2.DescribeRequest(resource=_util.name_bytes(resource, "resource"))
        r = self._call("describe", request).describe
        return LockState(held=r.held, holder=r.holder, token=r.token,
                         remaining=r.remaining_ms / 1000.0, hold_count=r.hold_count,
                         waiters=r.waiters,
                         lock_delay_remaining=r.lock_delay_remaining_ms / 1000.0,
                         mode=_mode(r.mode), permits=r.permits, holders=r.holders)

    # -- elections (fencegate.election; docs/semantics.md, "Elections") ------

    def campaign(self, election: str, value: Value, *, candidate: Optional[str] = None,
                 ttl: Duration = 10.0, wait: Optional[Duration] = None,
                 request_id: Optional[bytes] = None, on_lost: Optional[OnLost] = None,
                 renew_fraction: float = 1.0 / 3) -> Leadership:
        """Campaigns to lead ``election`` saying ``value`` (bytes, say this
        replica's address; at most the service's 4 KiB); returns the
        Leadership once elected: its ``lease`` renews itself like any
        lease, its term is the lease's token.

        Candidates wait in line FIFO. ``wait`` None (the default) waits for
        good, in calls of at most the service's --max_wait (5 min by default);
        0 answers at once. ``candidate``: the name observers see; by
        default "<holder prefix>/<n>", one no other campaign uses (the same
        candidate campaigning again while it leads gets its own term back,
        its value unchanged). ``ttl``: a leader that stops renewing is
        deposed this long after its last confirmed renewal. ``on_lost`` and
        ``renew_fraction``: as acquire()'s, for the term's lease.
        Raises NotAcquired (``holder_token`` = the leading term) when not
        elected within ``wait``; InvalidArgument, Unavailable as acquire().
        """
        candidate = f"{self.holder}/{next(self._acquires)}" if candidate is None else candidate
        request = elections.campaign_request(election, candidate, value, ttl, request_id)
        waiting = elections.CampaignWait(wait)
        while True:
            sent = time.monotonic()  # the term is valid from when its call was sent
            try:
                response = self._send_parked("campaign", request, waiting.step())
            except InvalidArgument as refused:
                if waiting.fit(refused):
                    continue  # nothing was applied: ask again within the limit
                raise
            if response.acquired:
                break
            if waiting.over():
                raise elections.not_elected(election, response)
        lease = self._new_lease(election, response, LeaseMode.EXCLUSIVE, ttl,
                                _util.granted_at(sent, response), on_lost, renew_fraction)
        return Leadership(self, election, lease, bytes(value))

    def leader(self, election: str) -> ElectionState:
        """Who leads ``election`` now, as committed: ``leader`` True with
        its candidate, term, value, seq and time left; False when nobody
        leads (``term`` the term that ended last, 0 when the service does
        not know it). Retried on UNAVAILABLE."""
        request = elections.leader_request(election)
        return elections.state_of(self._call("leader", request).leader.state)

    def proclaim(self, election: str, term: int, value: Value, *,
                 signature: Signature = Signature()) -> int:
        """The plain call of Leadership.proclaim: the leader of ``term``
        says ``value``; returns its number within the term. Raises
        NotHolder if ``term`` does not lead (nothing changed). Retried on
        UNAVAILABLE: a retry of an attempt that was applied applies again
        (one more number, the same value)."""
        request = elections.proclaim_request(election, term, value, signature)
        return self._call("proclaim", request).proclaim.seq

    def resign(self, election: str, term: int, *, signature: Signature = Signature()) -> None:
        """The plain call of Leadership.resign: ends ``term`` (whatever its
        holds). Raises NotHolder if ``term`` does not lead, unless an
        earlier attempt of this call may have ended it (its answer lost):
        the term is over either way. Retried on UNAVAILABLE."""
        request = elections.resign_request(election, term, signature)
        self._call("resign", request, elections.ResignAttempts().ended)

    def observe(self, election: str, *, after_term: int = 0,
                after_seq: int = 0) -> ElectionObserver:
        """The changes of ``election``, as they commit: an iterator of
        ElectionState (fencegate.election.ElectionObserver) that observes
        again after the last change seen when the service restarts or cuts
        it off. Resume a former observer by passing its ``after_term`` and
        ``after_seq``. Close it (``with``, or ``close()``) when done."""
        if self._closed:
            raise FencegateError("the LockClient is closed")
        observer = ElectionObserver(self, election, after_term, after_seq)
        self._observers.add(observer)
        return observer

    def close(self) -> None:
        """Stops renewing, releases every lease still held (one attempt
        each, best effort: an unreleased lease expires after its TTL), ends
        its observers, and closes the stream and the channel. Idempotent."""
        if self._closed:
            return
        self._closed = True  # from now on, one attempt per call (_policy)
        for observer in list(self._observers):
            observer.close()
        self._renewer.stop()
        for lease in self._renewer.leases():
            try:
                lease.release()
            except Exception:  # best effort; it expires after its TTL
                pass
        self._session.close()
        self._connection.close()

    def __enter__(self) -> "LockClient":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- internals ------------------------------------------------------------

    def _new_lease(self, resource: str, granted, mode: LeaseMode, ttl: Duration, sent: float,
                   on_lost: Optional[OnLost], renew_fraction: float) -> Lease:
        """The Lease of a grant (an AcquireResponse, or one of its leases)
        granted no earlier than ``sent`` (_util.granted_at), renewed from
        now on."""
        lease = Lease(self, resource, granted.token, mode, _util.seconds(ttl, "ttl"),
                      granted.ttl_ms / 1000.0, sent,
                      Signature(granted.signature.key_id, granted.signature.mac),
                      granted.hold_count, on_lost, renew_fraction)
        self._renewer.add(lease)
        return lease

    def _send_acquire(self, request, ttl, wait, mode, permits, holder, request_id):
        holder = f"{self.holder}/{next(self._acquires)}" if holder is None else holder
        request.holder = _util.name_bytes(holder, "holder")
        request.ttl_ms = _util.to_ms(ttl, "ttl")
        request.mode = _mode(mode)
        request.permits = _util.int_arg(permits, "permits")
        if request_id is not None and not isinstance(request_id, bytes):
            raise TypeError("request_id must be bytes")
        request.request_id = request_id or _util.new_request_id()
        return self._send_parked("acquire", request, _util.seconds(wait, "wait"))

    def _send_parked(self, kind: str, request, wait_s: float):
        """Sends an Acquire or a Campaign (``kind``), which may wait in line
        for ``wait_s`` seconds, retrying UNAVAILABLE until its deadline;
        returns the AcquireResponse."""
        patience = wait_s if math.isfinite(wait_s) and wait_s > 0 else 0.0
        now = time.monotonic()
        wait_until = now + patience
        policy = self._policy()
        deadline = now + max(policy.call_timeout, patience + policy.rpc_timeout)

        def attempt(deadline: float):
            # A retry waits only what is left of the wait, with the SAME
            # request id: it takes back the first attempt's place or grant.
            if wait_s < 0 or not math.isfinite(wait_s):
                request.wait_ms = _util.to_ms(wait_s, "wait", ceil=True)  # the service refuses it
            else:
                left = max(0.0, wait_until - time.monotonic())
                request.wait_ms = _util.to_ms(left, "wait", ceil=True)
            timeout = min(request.wait_ms / 1000.0 + policy.rpc_timeout,
                          deadline - time.monotonic())
            return self._attempt(lock_pb2.LockCall(**{kind: request}), timeout).acquire

        return _util.retry_unavailable(policy, deadline, attempt)

    def _policy(self) -> RetryPolicy:
        """The retry policy; a single attempt once close() has begun."""
        if not self._closed:
            return self._retry
        return RetryPolicy(call_timeout=self._retry.rpc_timeout,
                           rpc_timeout=self._retry.rpc_timeout, max_attempts=1)

    def _call(self, kind: str, request, done_anyway=None) -> Any:
        """One call, retried on UNAVAILABLE; ``done_anyway(error)`` True:
        that error of an attempt means the call is done (returns None)."""
        policy = self._policy()
        deadline = time.monotonic() + policy.call_timeout

        def attempt(deadline: float):
            call = lock_pb2.LockCall(**{kind: request})
            try:
                return self._attempt(call, min(policy.rpc_timeout, deadline - time.monotonic()))
            except FencegateError as e:
                if done_anyway is not None and done_anyway(e):
                    return None
                raise

        return _util.retry_unavailable(policy, deadline, attempt)

    def _attempt(self, call, timeout: float):
        future = self._session.send(call, time.monotonic() + max(timeout, 0.0))
        try:
            return future.result(timeout=max(timeout, 0.0))
        except FutureTimeout:
            raise DeadlineExceeded(
                f"no answer from the lock service within {timeout:.3f} s; the call may "
                "still be applied") from None

    def _renew_async(self, lease: Lease, sent: float, signature: Signature) -> None:
        """The renewer's renewal: sent on the stream, answered on its thread."""
        request = lock_pb2.RenewRequest(
            resource=_util.name_bytes(lease.resource, "resource"), token=lease.token,
            ttl_ms=_util.to_ms(lease.ttl, "ttl"), mode=lease.mode,
            signature=_util.signature_message(signature))
        future = self._session.send(lock_pb2.LockCall(renew=request),
                                    sent + self._retry.rpc_timeout)

        def done(f) -> None:
            error = f.exception()
            self._renewer.renewed(lease, sent, None if error else f.result().renew, error)

        future.add_done_callback(done)

    def _on_message(self, message) -> None:
        for lost in message.lost:
            reason = ("released_elsewhere" if lost.reason == lock_pb2.LeaseLost.RELEASED
                      else "expired")
            self._renewer.pushed(lost.resource, lost.token, reason)


class _LockContext:
    """What ``LockClient.lock()`` returns: acquires on entry."""

    def __init__(self, client: LockClient, resource: str, options: dict) -> None:
        self._client = client
        self._resource = resource
        self._options = options
        self._lease: Optional[Lease] = None

    def __enter__(self) -> Lease:
        self._lease = self._client.acquire(self._resource, **self._options)
        return self._lease

    def __exit__(self, *exc_info) -> None:
        lease, self._lease = self._lease, None
        if lease is not None:
            lease.release()


class _Once:
    """One on_lost shared by the leases of a MultiLease: runs once."""

    def __init__(self, callback: Optional[OnLost]) -> None:
        self._callback = callback
        self._lock = threading.Lock()

    def __call__(self, error: LeaseLost) -> None:
        with self._lock:
            callback, self._callback = self._callback, None
        if callback is not None:
            callback(error)




def _not_acquired(what: str, resource: str, response) -> NotAcquired:
    delay = response.reason == lock_pb2.AcquireResponse.LOCK_DELAY
    retry_after = response.retry_after_ms / 1000.0
    held = ("held back by a lock-delay after an expiry" if delay
            else f"held with token {response.holder_token}")
    return NotAcquired(f"{what}: {held}; retry in {retry_after:g} s or acquire with a wait",
                       resource=resource, holder_token=response.holder_token,
                       retry_after=retry_after, lock_delay=delay)


__all__ = ["LockClient", "LockState"]
