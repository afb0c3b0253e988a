"""fencegate.aio.LockClient: the lock service from asyncio (grpc.aio), with
the concepts of fencegate.LockClient.

    async with fencegate.aio.LockClient("127.0.0.1:7070") as locks:
        async with locks.lock("orders", ttl=10) as lease:
            ...                          # lease.lost is an asyncio.Event

One Session stream and one renewal task per client (never a task per
lease); renewals are sent without waiting for their answers. A lease is
lost, as in the synchronous client (fencegate.lease), when the service
pushes its end, refuses a renewal, or no renewal was confirmed within its
TTL by the client's clock; then ``lease.lost`` is set, ``lease.check()``
raises LeaseLost and ``on_lost(error)`` runs once. ``lock(...,
cancel_on_loss=True)`` also cancels the task inside ``async with`` on a
loss, which then raises LeaseLost out of the block (otherwise the body runs
on: learn of the loss from ``lease.lost`` or the next fenced write).

Retries, request ids, deadlines and errors are those of fencegate.LockClient.
Create the client inside the event loop that uses it (a coroutine), after
any fork(); it is for that loop's tasks only (not thread-safe).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import math
import os
import socket
import time
import uuid
import weakref
from typing import Any, Callable, Optional, Sequence

from fencegate import _election_messages as elections
from fencegate import _util
from fencegate._election_messages import ElectionState, Value
from fencegate._proto import lock_pb2, lock_pb2_grpc
from fencegate._util import TLS, Duration, RetryPolicy
from fencegate.aio._election import ElectionObserver, Leadership
from fencegate.aio._session import AioSession, retrying
from fencegate.errors import FencegateError, InvalidArgument, LeaseLost, NotHolder
from fencegate.lease import LeaseMode, Signature
from fencegate.lock_client import LockState, ModeLike, _mode, _not_acquired

_log = logging.getLogger("fencegate")
OnLost = Callable[[LeaseLost], None]


class Lease:
    """An asyncio lease; as fencegate.Lease, with ``lost`` an asyncio.Event.
    ``async with lease:`` releases it on exit."""

    def __init__(self, client: "LockClient", resource: str, granted, mode: LeaseMode,
                 ttl: float, sent: float, on_lost: Optional[OnLost],
                 renew_fraction: float) -> None:
        self._client = client
        self.resource = resource
        self.token: int = granted.token
        self.mode = mode
        self.ttl = ttl
        self.hold_count: int = granted.hold_count
        self.signature = Signature(granted.signature.key_id, granted.signature.mac)
        self.lost = asyncio.Event()  #: set once the lease is lost or released
        self.valid_until = sent + granted.ttl_ms / 1000.0  #: on time.monotonic()
        self._renew_fraction = renew_fraction
        self._next_renew = sent + granted.ttl_ms / 1000.0 * renew_fraction
        self._renewal: Optional[float] = None
        self._renewal_failed = False
        self._ended: Optional[LeaseLost] = None
        self._server_dropped = False
        self._released = False
        self._on_lost = on_lost
        self._cancel: Optional[asyncio.Task] = None  # cancel_on_loss
        self._cancelled_by_loss = False

    def check(self) -> None:
        """Raises LeaseLost once the lease is lost or released."""
        if self._ended is None and time.monotonic() >= self.valid_until:
            self._lose(LeaseLost(
                f"lease on '{self.resource}' with token {self.token} lapsed: no renewal was "
                f"confirmed within its TTL of {self.ttl:g} s. Stop writing and acquire the "
                "lock again", reason="lapsed"))
        if self._ended is not None:
            raise self._ended

    async def release(self) -> None:
        """Stops renewing and releases the lease (also one that only lapsed
        here), unless the service said the token holds nothing. Idempotent."""
        if self._stop("released") is not None:
            return
        try:
            await self._client.release(self.resource, self.token, signature=self.signature,
                                       mode=self.mode)
        except NotHolder:
            pass  # it had already ended on the service

    def _stop(self, how: str) -> Optional[str]:
        """As fencegate.Lease._stop: stops renewing before this program ends
        the lease on the service; None: send that call; "done" (released
        or resigned already) or "dropped" (the service ended it): do not."""
        if self._released:
            return "done"
        if self._server_dropped:
            return "dropped"
        self._released = True
        if self._ended is None:
            self._ended = LeaseLost(
                f"lease on '{self.resource}' with token {self.token} was {how}",
                reason="released")
            self._client._forget(self)
            self.lost.set()
        return None

    async def __aenter__(self) -> "Lease":
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.release()

    def _lose(self, why: LeaseLost, *, server_dropped: bool = False) -> None:
        if self._ended is not None:
            return
        self._ended = why
        self._server_dropped = server_dropped
        self._client._forget(self)
        self.lost.set()
        callback, self._on_lost = self._on_lost, None
        if callback is not None:
            try:
                callback(why)
            except Exception:
                _log.exception("fencegate: on_lost of lease on %r raised", self.resource)
        if self._cancel is not None and not self._cancel.done():
            self._cancelled_by_loss = True
            self._cancel.cancel(f"fencegate: {why.message}")


class _LockContext:
    def __init__(self, client: "LockClient", resource: str, cancel_on_loss: bool,
                 options: dict) -> None:
        self._client, self._resource, self._options = client, resource, options
        self._cancel_on_loss = cancel_on_loss
        self._lease: Optional[Lease] = None

    async def __aenter__(self) -> Lease:
        self._lease = await self._client.acquire(self._resource, **self._options)
        if self._cancel_on_loss:
            self._lease._cancel = asyncio.current_task()
        return self._lease

    async def __aexit__(self, exc_type, exc, tb) -> None:
        lease, self._lease = self._lease, None
        lease._cancel = None
        await lease.release()
        if exc_type is asyncio.CancelledError and lease._cancelled_by_loss:
            asyncio.current_task().uncancel()
            raise lease._ended from exc


class LockClient:
    """An asyncio client of the lock service; arguments as fencegate.LockClient."""

    def __init__(self, target: str, *, tls: Optional[TLS] = None,
                 holder: Optional[str] = None, retry: RetryPolicy = RetryPolicy(),
                 max_in_flight: int = 256) -> None:
        self._retry = retry
        self.holder = holder if holder is not None else (
            f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}")
        _util.name_bytes(self.holder, "holder")
        self._acquires = itertools.count(1)
        self._session = AioSession(
            target, tls, lock_pb2_grpc.LockServiceStub,
            lambda calls: lock_pb2.LockSessionRequest(calls=calls),
            "the lock service's Session stream", max_in_flight=max_in_flight,
            on_message=self._on_message, on_end=self._stream_ended)
        self._leases: set[Lease] = set()
        self._by_token: dict[tuple[str, int], set[Lease]] = {}
        self._recent_ends: collections.OrderedDict[tuple[str, int], LeaseLost] = (
            collections.OrderedDict())
        self._wake = asyncio.Event()
        self._renewer: Optional[asyncio.Task] = None
        self._closing = False
        self._tasks: set[asyncio.Task] = set()  # referenced until done
        self._observers: "weakref.WeakSet[ElectionObserver]" = weakref.WeakSet()

    # -- leases ---------------------------------------------------------------

    async def acquire(self, resource: str, *, ttl: Duration = 10.0, wait: Duration = 0.0,
                      mode: ModeLike = LeaseMode.EXCLUSIVE, permits: int = 0,
                      holder: Optional[str] = None, request_id: Optional[bytes] = None,
                      on_lost: Optional[OnLost] = None,
                      renew_fraction: float = 1.0 / 3) -> Lease:
        """As LockClient.acquire; raises NotAcquired when not granted."""
        request = lock_pb2.AcquireRequest(resource=_util.name_bytes(resource, "resource"))
        sent = time.monotonic()
        r = await self._send_acquire(request, ttl, wait, mode, permits, holder, request_id)
        if not r.acquired:
            raise _not_acquired(f"resource '{resource}' was not acquired", resource, r)
        lease = Lease(self, resource, r, _mode(r.mode), _util.seconds(ttl, "ttl"),
                      _util.granted_at(sent, r), on_lost, renew_fraction)
        self._add(lease)
        return lease

    def lock(self, resource: str, *, ttl: Duration = 10.0, wait: Duration = 60.0,
             cancel_on_loss: bool = False, **options: Any) -> _LockContext:
        """``async with client.lock(...) as lease``: acquires (waiting up to
        ``wait``), renews, releases on exit. ``cancel_on_loss``: a loss
        cancels the task, and LeaseLost is raised out of the block."""
        return _LockContext(self, resource, cancel_on_loss, dict(ttl=ttl, wait=wait, **options))

    async def acquire_many(self, resources: Sequence[str], *, ttl: Duration = 10.0,
                           wait: Duration = 0.0, mode: ModeLike = LeaseMode.EXCLUSIVE,
                           holder: Optional[str] = None, request_id: Optional[bytes] = None,
                           on_lost: Optional[OnLost] = None,
                           renew_fraction: float = 1.0 / 3) -> list[Lease]:
        """As LockClient.acquire_many; returns the leases in the order asked
        (``on_lost`` runs for each lease lost)."""
        if isinstance(resources, (str, bytes)):
            raise TypeError("resources must be a sequence of str, not one name")
        request = lock_pb2.AcquireRequest(
            resources=[_util.name_bytes(r, "resources") for r in resources])
        sent = time.monotonic()
        r = await self._send_acquire(request, ttl, wait, mode, 0, holder, request_id)
        if not r.acquired or len(r.leases) != len(resources):
            raise _not_acquired(f"none of the resources was acquired: '{r.busy_resource}' "
                                "was not", r.busy_resource, r)
        began = _util.granted_at(sent, r)
        leases = [Lease(self, name, granted, _mode(r.mode), _util.seconds(ttl, "ttl"), began,
                        on_lost, renew_fraction) for name, granted in zip(resources, r.leases)]
        for lease in leases:
            self._add(lease)
        return leases

    async def renew(self, resource: str, token: int, *, ttl: Duration,
                    signature: Signature = Signature(),
                    mode: ModeLike = LeaseMode.EXCLUSIVE) -> Any:
        request = lock_pb2.RenewRequest(
            resource=_util.name_bytes(resource, "resource"), token=_util.int_arg(token, "token"),
            ttl_ms=_util.to_ms(ttl, "ttl"), mode=_mode(mode),
            signature=_util.signature_message(signature))
        return (await self._call_retrying("renew", request)).renew

    async def release(self, resource: str, token: int, *, signature: Signature = Signature(),
                      mode: ModeLike = LeaseMode.EXCLUSIVE,
                      request_id: Optional[bytes] = None) -> int:
        """As LockClient.release: the hold count left. A release retried
        with the same ``request_id`` is applied once."""
        request = lock_pb2.ReleaseRequest(
            resource=_util.name_bytes(resource, "resource"), token=_util.int_arg(token, "token"),
            mode=_mode(mode), signature=_util.signature_message(signature),
            request_id=request_id if request_id is not None else _util.new_request_id())
        return (await self._call_retrying("release", request)).release.hold_count

    async def describe(self, resource: str) -> LockState:
        request = lock_pb2.DescribeRequest(resource=_util.name_bytes(resource, "resource"))
        r = (await self._call_retrying("describe", request)).describe
        return LockState(held=r.held, holder=r.holder, token=r.token,
                         remaining=r.remaining_ms / 1000.0, hold_count=r.hold_count,
                         waiters=r.waiters,
                         lock_delay_remaining=r.lock_delay_remaining_ms / 1000.0,
                         mode=_mode(r.mode), permits=r.permits, holders=r.holders)

    # -- elections (fencegate.aio._election) ------------------------------------

    async def campaign(self, election: str, value: Value, *, candidate: Optional[str] = None,
                       ttl: Duration = 10.0, wait: Optional[Duration] = None,
                       request_id: Optional[bytes] = None, on_lost: Optional[OnLost] = None,
                       renew_fraction: float = 1.0 / 3) -> Leadership:
        """As fencegate.LockClient.campaign: the Leadership once elected
        (``wait`` None: for good); NotAcquired when not within ``wait``."""
        candidate = f"{self.holder}/{next(self._acquires)}" if candidate is None else candidate
        request = elections.campaign_request(election, candidate, value, ttl, request_id)
        waiting = elections.CampaignWait(wait)
        while True:
            sent = time.monotonic()  # the term is valid from when its call was sent
            try:
                r = await self._send_parked("campaign", request, waiting.step())
            except InvalidArgument as refused:
                if waiting.fit(refused):
                    continue  # nothing was applied: ask again within the limit
                raise
            if r.acquired:
                break
            if waiting.over():
                raise elections.not_elected(election, r)
        lease = Lease(self, election, r, LeaseMode.EXCLUSIVE, _util.seconds(ttl, "ttl"),
                      _util.granted_at(sent, r), on_lost, renew_fraction)
        self._add(lease)
        return Leadership(self, election, lease, bytes(value))

    async def leader(self, election: str) -> ElectionState:
        """As fencegate.LockClient.leader: who leads now (term 0: nobody,
        and the last term is not known)."""
        request = elections.leader_request(election)
        return elections.state_of((await self._call_retrying("leader", request)).leader.state)

    async def proclaim(self, election: str, term: int, value: Value, *,
                       signature: Signature = Signature()) -> int:
        """As fencegate.LockClient.proclaim: the value's number in the term."""
        request = elections.proclaim_request(election, term, value, signature)
        return (await self._call_retrying("proclaim", request)).proclaim.seq

    async def resign(self, election: str, term: int, *,
                     signature: Signature = Signature()) -> None:
        """As fencegate.LockClient.resign: ends ``term``; NotHolder if it
        does not lead (unless an earlier attempt may have ended it)."""
        request = elections.resign_request(election, term, signature)
        await self._call_retrying("resign", request, elections.ResignAttempts().ended)

    def observe(self, election: str, *, after_term: int = 0,
                after_seq: int = 0) -> ElectionObserver:
        """As fencegate.LockClient.observe: an async iterator of the
        election's changes, resuming after the last one seen."""
        if self._closing:
            raise FencegateError("the LockClient is closed")
        observer = ElectionObserver(self, election, after_term, after_seq)
        self._observers.add(observer)
        return observer

    async def close(self) -> None:
        """Stops renewing, releases the leases still held (best effort),
        ends its observers, closes the stream and the channels. Idempotent."""
        if self._closing:
            return
        self._closing = True  # from now on, one attempt per call
        for observer in list(self._observers):
            observer.close()
        if self._renewer is not None:
            self._renewer.cancel()
        for lease in list(self._leases):
            try:
                await asyncio.wait_for(lease.release(), self._retry.rpc_timeout)
            except (FencegateError, asyncio.TimeoutError):
                pass
        await self._session.close()

    async def __aenter__(self) -> "LockClient":
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    # -- the stream -------------------------------------------------------------

    def _on_message(self, response) -> None:
        for lost in response.lost:
            self._pushed(lost)

    def _stream_ended(self) -> None:
        now = time.monotonic()
        for lease in self._leases:
            # Renew at once, attaching the lease to the next stream; not a
            # lease whose renewal just failed (it retries on its own).
            if lease._renewal is None and not lease._renewal_failed:
                lease._next_renew = min(lease._next_renew, now)
        self._wake.set()

    def _policy(self) -> RetryPolicy:
        """The retry policy; a single attempt once close() has begun."""
        if not self._closing:
            return self._retry
        return RetryPolicy(call_timeout=self._retry.rpc_timeout,
                           rpc_timeout=self._retry.rpc_timeout, max_attempts=1)

    async def _call_retrying(self, kind: str, request, done_anyway=None) -> Any:
        """As fencegate.LockClient._call: retried on UNAVAILABLE;
        ``done_anyway(error)`` True: that error means the call is done."""
        policy = self._policy()

        async def attempt(deadline: float):
            try:
                return await self._session.call(
                    lock_pb2.LockCall(**{kind: request}),
                    min(policy.rpc_timeout, deadline - time.monotonic()))
            except FencegateError as e:
                if done_anyway is not None and done_anyway(e):
                    return None
                raise

        return await retrying(policy, time.monotonic() + policy.call_timeout, attempt)

    async def _send_acquire(self, request, ttl, wait, mode, permits, holder, request_id):
        holder = f"{self.holder}/{next(self._acquires)}" if holder is None else holder
        request.holder = _util.name_bytes(holder, "holder")
        request.ttl_ms = _util.to_ms(ttl, "ttl")
        request.mode = _mode(mode)
        request.permits = _util.int_arg(permits, "permits")
        request.request_id = request_id or _util.new_request_id()  # one for every retry
        return await self._send_parked("acquire", request, _util.seconds(wait, "wait"))

    async def _send_parked(self, kind: str, request, wait_s: float):
        """As fencegate.LockClient._send_parked: an Acquire or a Campaign,
        which may wait in line for ``wait_s`` seconds; its AcquireResponse."""
        patience = wait_s if math.isfinite(wait_s) and wait_s > 0 else 0.0
        wait_until = time.monotonic() + patience
        policy = self._policy()  # one attempt once close() has begun
        deadline = time.monotonic() + max(policy.call_timeout, patience + policy.rpc_timeout)

        async def attempt(deadline: float):
            if wait_s < 0 or not math.isfinite(wait_s):
                request.wait_ms = _util.to_ms(wait_s, "wait", ceil=True)  # refused by the service
            else:
                request.wait_ms = _util.to_ms(max(0.0, wait_until - time.monotonic()), "wait",
                                              ceil=True)
            timeout = min(request.wait_ms / 1000.0 + policy.rpc_timeout,
                          deadline - time.monotonic())
            return (await self._session.call(lock_pb2.LockCall(**{kind: request}),
                                             timeout)).acquire

        return await retrying(policy, deadline, attempt)

    def _spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- the renewal task -------------------------------------------------------

    def _add(self, lease: Lease) -> None:
        self._leases.add(lease)
        self._by_token.setdefault((lease.resource, lease.token), set()).add(lease)
        pushed = self._recent_ends.get((lease.resource, lease.token))
        if pushed is not None:  # its end came in the message that granted it
            lease._lose(pushed, server_dropped=True)
            return
        if self._renewer is None or self._renewer.done():
            self._renewer = self._spawn(self._renew_loop())
        self._wake.set()

    def _forget(self, lease: Lease) -> None:
        self._leases.discard(lease)
        listeners = self._by_token.get((lease.resource, lease.token))
        if listeners is not None:
            listeners.discard(lease)
            if not listeners:
                del self._by_token[(lease.resource, lease.token)]

    def _pushed(self, lost) -> None:
        how = ("was released by a call from elsewhere" if lost.reason == lock_pb2.LeaseLost.RELEASED
               else "expired on the lock service: its TTL ran out before a renewal reached it")
        reason = "released_elsewhere" if lost.reason == lock_pb2.LeaseLost.RELEASED else "expired"
        why = LeaseLost(
            f"lease on '{lost.resource}' with token {lost.token} {how} (pushed on the lock "
            "service's Session stream). Stop writing and acquire the lock again", reason=reason)
        # Kept a while for a lease not registered yet: a push may come in the
        # very message whose answer grants it, before its task resumes.
        self._recent_ends[(lost.resource, lost.token)] = why
        while len(self._recent_ends) > 4096:
            self._recent_ends.popitem(last=False)
        self._ended_here(lost.resource, lost.token, why)

    def _ended_here(self, resource: str, token: int, why: LeaseLost) -> None:
        """The service said (resource, token) holds nothing any more (pushed,
        or in an answer: a Resign, a refused Proclaim): its leases are lost."""
        for lease in list(self._by_token.get((resource, token), ())):
            lease._lose(why, server_dropped=True)

    async def _renew_loop(self) -> None:
        while self._leases:
            now = time.monotonic()
            wake = now + 3600.0
            for lease in list(self._leases):
                try:
                    lease.check()  # a lapse
                except LeaseLost:
                    continue
                if lease._renewal is not None and now - lease._renewal > self._retry.rpc_timeout:
                    lease._renewal = None
                if lease._renewal is None and now >= lease._next_renew:
                    lease._renewal = now
                    self._spawn(self._renew(lease, now))
                elif lease._renewal is None:
                    wake = min(wake, lease._next_renew)
                else:
                    wake = min(wake, lease._renewal + self._retry.rpc_timeout)
                wake = min(wake, lease.valid_until)
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), max(0.0, wake - time.monotonic()))
            except asyncio.TimeoutError:
                pass

    async def _renew(self, lease: Lease, sent: float) -> None:
        request = lock_pb2.RenewRequest(
            resource=_util.name_bytes(lease.resource, "resource"), token=lease.token,
            ttl_ms=_util.to_ms(lease.ttl, "ttl"), mode=lease.mode,
            signature=_util.signature_message(lease.signature))
        try:
            response = (await self._session.call(lock_pb2.LockCall(renew=request),
                                                 self._retry.rpc_timeout)).renew
            error = None
        except FencegateError as e:
            error = e
        if lease._renewal == sent:
            lease._renewal = None
        lease._renewal_failed = error is not None and not isinstance(error, NotHolder)
        if error is None:
            granted = response.ttl_ms / 1000.0
            lease.valid_until = max(lease.valid_until, sent + granted)
            lease._next_renew = sent + granted * lease._renew_fraction
            if response.signature.mac:
                lease.signature = Signature(response.signature.key_id, response.signature.mac)
        elif isinstance(error, NotHolder):
            lease._lose(LeaseLost(
                f"lease on '{lease.resource}' with token {lease.token}: the lock service "
                f"refused its renewal ({error.message}). Stop writing and acquire it again",
                reason="refused", current_token=error.current_token), server_dropped=True)
        else:
            lease._next_renew = time.monotonic() + min(lease.ttl / 12, 0.2)
        self._wake.set()


__all__ = ["Lease", "LockClient"]
