"""Lease: a granted lock that renews itself and says when it is lost.

Made by ``LockClient.acquire()`` (or ``lock()``, ``acquire_many()``). One
renewal thread per LockClient serves all its leases (never a thread per
lease); it renews each lease every ``ttl * renew_fraction`` ("extend to"
now + ttl) on the client's Session stream.

Validity is kept on the client's monotonic clock, pessimistically: a lease
is valid until (time the last confirmed renewal, or the acquire, was SENT)
+ the TTL granted. The service measures from later, so the client gives up
no later than the service does. The lease is lost, for good, as soon as

- the lock service pushes that it ended the lease (its TTL ran out there,
  or a call from elsewhere released it): heard on the Session stream the
  moment the service commits the end; or
- a renewal is refused (the token no longer holds the resource); or
- its validity passes with no confirmed renewal (the service cannot be
  reached, or this process was paused): the client's own clock decides.

Then ``lost`` is True, ``check()`` raises :class:`~fencegate.LeaseLost`,
``on_lost(error)`` runs once (on the client's renewal thread, or on the
thread of a ``check()`` that noticed a lapse first), and ``wait_lost()``
returns. A loss interrupts nothing: the program learns of it from
``check()``, ``on_lost``, or the refusal of its next fenced write
(StaleToken), which is what keeps the data safe.

Thread safety: thread-safe. ``on_lost`` must be quick and must not call
``release()`` or ``wait_lost()`` of its lease.
"""

from __future__ import annotations

import enum
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, Optional, Sequence

from fencegate.errors import FencegateError, LeaseLost, NotHolder

if TYPE_CHECKING:
    from fencegate.lock_client import LockClient

OnLost = Callable[[LeaseLost], None]


class LeaseMode(enum.IntEnum):
    """The kind of lease (token.proto LeaseMode; docs/semantics.md)."""

    EXCLUSIVE = 0  #: one holder; its token writes at the gateway
    SHARED = 1  #: many readers at once; its token only reads (fenced)
    PERMIT = 2  #: one of a semaphore's ``permits``; the gateway refuses its token


@dataclass(frozen=True)
class Signature:
    """A token's signature (empty when the service does not sign)."""

    key_id: bytes = b""
    mac: bytes = b""


class Lease:
    """A granted lease. See the module docstring for the contract.

    Attributes (read-only): ``resource``, ``token`` (attach it, with
    ``signature``, to every fenced write: GatewayClient does), ``mode``,
    ``ttl`` (seconds asked for each renewal), ``hold_count``.
    Also a context manager: ``with client.acquire(...) as lease:`` releases
    on exit.
    """

    def __init__(self, client: "LockClient", resource: str, token: int, mode: LeaseMode,
                 ttl: float, granted_ttl: float, sent: float, signature: Signature,
                 hold_count: int, on_lost: Optional[OnLost], renew_fraction: float) -> None:
        self._client = client
        self.resource = resource
        self.token = token
        self.mode = mode
        self.ttl = ttl
        self.hold_count = hold_count
        self._renew_fraction = renew_fraction
        # Guarded by the renewer's lock (client._renewer.lock):
        self._signature = signature
        self._valid_until = sent + granted_ttl
        self._next_renew = sent + granted_ttl * renew_fraction
        self._renewal: Optional[float] = None  # send time of the renewal in flight
        self._renewal_failed = False  # the last renewal failed: retrying soon
        self._ended: Optional[LeaseLost] = None
        self._heard: Optional[LeaseLost] = None  # pushed, or a refused renewal
        self._released = False
        self._server_dropped = False  # the service said the token holds nothing
        self._on_lost = on_lost
        self._done = threading.Event()  # ended, and on_lost has returned

    # -- what the program asks -------------------------------------------

    @property
    def signature(self) -> Signature:
        """The token's signature: the grant's, then each renewal's."""
        with self._client._renewer.lock:
            return self._signature

    @property
    def valid_until(self) -> float:
        """When the lease lapses unless renewed, on time.monotonic()."""
        with self._client._renewer.lock:
            return self._valid_until

    @property
    def lost(self) -> bool:
        """True once the lease is lost or released."""
        try:
            self.check()
        except LeaseLost:
            return True
        return False

    def check(self) -> None:
        """Returns while the lease is valid; raises LeaseLost once it is
        lost (``reason`` says how) or released (``reason == "released"``)."""
        renewer = self._client._renewer
        with renewer.lock:
            callback = self._notice_end_locked(time.monotonic())
            ended = self._ended
        renewer.run_callback(self, callback)
        if ended is not None:
            raise ended

    def wait_lost(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the lease is lost (and on_lost has returned) or
        released, or ``timeout`` seconds pass. Returns whether it ended."""
        give_up = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                self.check()  # notices a lapse
            except LeaseLost:
                pass
            with self._client._renewer.lock:
                lapse = self._valid_until
            now = time.monotonic()
            wake = lapse if give_up is None else min(lapse, give_up)
            if self._done.wait(max(0.0, wake - now) + 0.001):
                return True
            if give_up is not None and time.monotonic() >= give_up:
                return self._done.is_set()

    def renew(self) -> None:
        """Renews now, in the caller's thread (before a long step, say).
        Raises LeaseLost if the lease is lost, or the call's error."""
        self.check()
        sent = time.monotonic()
        try:
            response = self._client.renew(self.resource, self.token, ttl=self.ttl,
                                          signature=self.signature, mode=self.mode)
        except NotHolder as e:
            self._client._renewer.heard(self, LeaseLost(
                f"lease on '{self.resource}' with token {self.token}: the lock service "
                f"refused its renewal ({e.message}). Stop writing and acquire it again",
                reason="refused", current_token=e.current_token))
            self.check()  # raises that LeaseLost (and runs on_lost)
            raise  # not reached
        self._client._renewer.renewed(self, sent, response, None)

    def release(self) -> None:
        """Stops renewing and releases the lease on the service, also one
        that only lapsed here (a restarted service may still hold it),
        unless the service already said the token holds nothing. A release
        the service answers LEASE_LOST is done (nothing was held).
        Idempotent. Raises the call's error (Unavailable) otherwise."""
        if self._stop("released") is not None:
            return
        try:
            self._client.release(self.resource, self.token, signature=self.signature,
                                 mode=self.mode)
        except NotHolder:
            pass  # it had already ended on the service: nothing to release

    def _stop(self, how: str) -> Optional[str]:
        """Stops renewing and listening before the lease is ended on the
        service by this program (release, or a leadership's resign): None
        when that call is to be sent; "done" when it was released or
        resigned already, "dropped" when the service said the token holds
        nothing (both: send nothing)."""
        renewer = self._client._renewer
        with renewer.lock:
            if self._released:
                return "done"
            if self._server_dropped:
                return "dropped"
            self._released = True
            if self._ended is None:
                self._ended = LeaseLost(
                    f"lease on '{self.resource}' with token {self.token} was {how}",
                    reason="released")
                self._on_lost = None
            renewer.forget_locked(self)
        self._done.set()
        return None

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()

    def __repr__(self) -> str:
        return (f"Lease(resource={self.resource!r}, token={self.token}, "
                f"mode={self.mode.name}, lost={self._ended is not None})")

    # -- the renewer's side (its lock held where named _locked) ------------

    def _lose_locked(self, why: LeaseLost) -> Optional[OnLost]:
        """Marks the lease lost if it is not yet; returns on_lost to run."""
        if self._ended is not None:
            return None
        self._ended = why
        callback, self._on_lost = self._on_lost, None
        self._client._renewer.forget_locked(self)
        return callback or _NOTHING  # not None: this call lost it

    def _notice_end_locked(self, now: float) -> Optional[OnLost]:
        """Loses the lease if the service ended it or its validity passed."""
        if self._ended is not None:
            return None
        if self._heard is not None:
            self._server_dropped = True
            return self._lose_locked(self._heard)
        if now >= self._valid_until:
            return self._lose_locked(LeaseLost(
                f"lease on '{self.resource}' with token {self.token} lapsed: no renewal was "
                f"confirmed within its TTL of {self.ttl:g} s (lock service unreachable, or "
                "this process was paused). Stop writing and acquire the lock again",
                reason="lapsed"))
        return None


def _nothing(_: LeaseLost) -> None:
    pass


_NOTHING: OnLost = _nothing


class MultiLease:
    """The leases of one ``acquire_many()``: one per resource, in the order
    asked, granted together. ``on_lost`` (given to acquire_many) runs once,
    for whichever lease is lost first. Each lease is renewed, lost and
    released on its own; ``release()`` releases them all. A context manager.
    Thread-safe.
    """

    def __init__(self, leases: Sequence[Lease]) -> None:
        self.leases: tuple[Lease, ...] = tuple(leases)

    def __getitem__(self, resource: str) -> Lease:
        for lease in self.leases:
            if lease.resource == resource:
                return lease
        raise KeyError(resource)

    def __iter__(self) -> Iterator[Lease]:
        return iter(self.leases)

    def __len__(self) -> int:
        return len(self.leases)

    def check(self) -> None:
        """Raises LeaseLost if any of the leases is lost or released."""
        for lease in self.leases:
            lease.check()

    def release(self) -> None:
        """Releases every lease; raises the first error after trying all."""
        first: Optional[FencegateError] = None
        for lease in self.leases:
            try:
                lease.release()
            except FencegateError as e:
                first = first or e
        if first is not None:
            raise first

    def __enter__(self) -> "MultiLease":
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()
