"""Elections: "exactly one of my replicas does this job", with the leader's
term fenced at the storage (docs/semantics.md, "Elections").

    with client.campaign("scheduler", b"10.0.0.2:8080", ttl=10) as me:
        gateway.put(me.lease, "heartbeat", b"...")   # refused once deposed
        me.proclaim(b"10.0.0.2:9090")                # says something new
    # resigned: the next candidate in line leads, in a larger term

An election is a resource of the lock service; its leader holds its
exclusive lease, and the **term** is that lease's fencing token.
``LockClient.campaign()`` returns a :class:`Leadership` whose ``lease`` is
a real :class:`~fencegate.Lease` of the client: it renews itself and is
lost exactly as any lease is (pushed end, refused renewal, or no confirmed
renewal for a TTL by the client's clock). Fenced writes take the
Leadership's ``lease``, so a deposed leader's late write is refused
(StaleToken) once a later term wrote.

``LockClient.leader()`` says who leads now; ``LockClient.observe()``
iterates over every change (a term begins, its leader proclaims, the term
ends) in (term, seq) order, and observes again after the last change seen
when the service restarts or cuts it off: an :class:`ElectionObserver`.

Thread safety: Leadership is thread-safe, as Lease. An ElectionObserver is
iterated by one thread at a time; ``close()`` may come from any thread.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Iterator, Optional

import grpc

from fencegate._election_messages import ElectionState, ObserveCursor, Value
from fencegate.errors import LeaseLost, NotHolder, from_rpc_error
from fencegate.lease import Lease

if TYPE_CHECKING:
    from fencegate.lock_client import LockClient


class Leadership:
    """The lead of an election, won by ``LockClient.campaign()``.

    Attributes: ``election``; ``lease``, the term's self-renewing Lease
    (``check()``, ``lost``, ``wait_lost()``, ``signature``; pass it to
    fenced writes); ``term`` (the lease's token); ``value`` and ``seq``,
    the last value this Leadership said and its number within the term
    (the campaign's value is 0; a candidate that campaigned again while it
    led keeps its former value on the service: ``LockClient.leader()``
    says). A context manager: resigns on exit (quietly
    when the term was already lost: the body learns of a loss from
    ``lease``, or from its next fenced write).
    """

    def __init__(self, client: "LockClient", election: str, lease: Lease,
                 value: bytes) -> None:
        self._client = client
        self.election = election
        self.lease = lease
        self._lock = threading.Lock()
        self._value = value
        self._seq = 0

    @property
    def term(self) -> int:
        """The term: the fencing token of every write made as this leader."""
        return self.lease.token

    @property
    def value(self) -> bytes:
        with self._lock:
            return self._value

    @property
    def seq(self) -> int:
        with self._lock:
            return self._seq

    @property
    def lost(self) -> bool:
        """True once the term is lost or resigned (``lease.lost``)."""
        return self.lease.lost

    def check(self) -> None:
        """Raises LeaseLost once the term is lost or resigned."""
        self.lease.check()

    def proclaim(self, value: Value) -> int:
        """Says ``value`` from now on, without losing the lead; returns its
        number within the term. The service decides, not the client's
        clock: raises NotHolder (a LeaseLost, ``current_token`` = the
        leading term or 0) if this term no longer leads, and the lease is
        then lost. Retried on UNAVAILABLE as LockClient.proclaim."""
        try:
            seq = self._client.proclaim(self.election, self.term, value,
                                        signature=self.lease.signature)
        except NotHolder as e:
            self._client._renewer.ended_here(self.election, self.term,
                                             deposed(self, e, "Proclaim"))
            raise
        with self._lock:
            if seq > self._seq:
                self._seq, self._value = seq, bytes(value)
        return seq

    def resign(self) -> None:
        """Ends the term now (the next candidate in line leads) and stops
        renewing. Idempotent once it succeeded. Raises LeaseLost when the
        term was deposed already: NotHolder if the service says so now, or
        the lease's loss if the service had said so; Unavailable when the
        service could not be reached (the term then ends with its TTL)."""
        stopped = self.lease._stop("resigned")
        if stopped == "done":
            return
        if stopped == "dropped":
            self.lease.check()  # raises the loss the service told
        try:
            self._client.resign(self.election, self.term, signature=self.lease.signature)
        except NotHolder as e:
            self._client._renewer.ended_here(self.election, self.term,
                                             deposed(self, e, "Resign"))
            raise
        # A Leadership of the same term (its candidate campaigned again)
        # hears of it here: a Resign on the stream is answered, not pushed.
        self._client._renewer.ended_here(self.election, self.term, resigned(self))

    def __enter__(self) -> "Leadership":
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            self.resign()
        except LeaseLost:
            pass  # deposed: nothing to end

    def __repr__(self) -> str:
        return (f"Leadership(election={self.election!r}, term={self.term}, "
                f"lost={self.lease.lost})")


def deposed(leadership, refusal: NotHolder, call: str) -> LeaseLost:
    """The loss of a Leadership's term whose ``call`` was refused."""
    return LeaseLost(
        f"term {leadership.term} of election '{leadership.election}' was deposed: the lock "
        f"service refused its {call} ({refusal.message}). Stop acting as the leader",
        reason="refused", current_token=refusal.current_token)


def resigned(leadership) -> LeaseLost:
    """The loss of a term that another Leadership of it resigned."""
    return LeaseLost(
        f"term {leadership.term} of election '{leadership.election}' was resigned by "
        "another Leadership of this client holding it (its candidate campaigned again). "
        "Stop acting as the leader", reason="released_elsewhere")


class ElectionObserver:
    """The changes of one election, from ``LockClient.observe()``: an
    iterator of ElectionState, in (term, seq) order, none twice. The first
    is the state now (unless not newer than ``after_term``, ``after_seq``;
    but a state without a leader whose ended term is not known, term 0,
    always is), then each change as it commits; it blocks until the next.

    When the stream ends with UNAVAILABLE (the service restarted, shut
    down, failed over), RESOURCE_EXHAUSTED (this observer fell behind, or
    too many observers) or CANCELLED by the server (a stream opened as it
    shut down), it observes again after the last change seen
    (``after_term``, ``after_seq``), pausing 0.1 s doubling to 1 s between
    attempts, for as long as it is iterated. Any other end raises its
    FencegateError (PermissionDenied, InvalidArgument). ``close()`` (from
    any thread, or leaving ``with``) ends the iteration; so does closing
    the LockClient.
    """

    def __init__(self, client: "LockClient", election: str, after_term: int,
                 after_seq: int) -> None:
        self._client = client
        self.election = election
        self._cursor = ObserveCursor(election, after_term, after_seq)
        self._lock = threading.Lock()
        self._call: Optional[grpc.Future] = None
        self._closed = threading.Event()
        self._iterator = self._changes()

    @property
    def after_term(self) -> int:
        """The term of the last change seen: where the next stream starts."""
        return self._cursor.after_term

    @property
    def after_seq(self) -> int:
        return self._cursor.after_seq

    def __iter__(self) -> "ElectionObserver":
        return self

    def __next__(self) -> ElectionState:
        return next(self._iterator)

    def close(self) -> None:
        """Ends the iteration (the stream is cancelled). Idempotent."""
        self._closed.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()

    def __enter__(self) -> "ElectionObserver":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _changes(self) -> Iterator[ElectionState]:
        connection = self._client._connection
        while not self._closed.is_set():
            with self._lock:
                if self._closed.is_set():
                    return
                call = connection.stub.Observe(self._cursor.request())
                self._call = call
            try:
                for response in call:
                    for change in response.changes:
                        state = self._cursor.seen(change)
                        if state is not None:
                            yield state
                return  # the service ended it without an error
            except grpc.RpcError as e:
                if self._closed.is_set():
                    return
                pause = self._cursor.pause_after(e.code())
                if pause is None:
                    raise from_rpc_error(e, maybe_applied=False) from None
                if e.code() == grpc.StatusCode.UNAVAILABLE:
                    connection.renew()  # as the Session stream's: no grpc backoff
            finally:
                with self._lock:
                    self._call = None
                call.cancel()  # the caller left the loop: end the stream
            self._closed.wait(pause)

