"""The election calls' messages for both lock clients (sync and asyncio):
the state a program sees, the requests built from it, the wait of a
campaign in steps, and where an observer resumes. Plain functions of their
arguments; ObserveCursor belongs to one observer. The client checks types
only; the service checks values (InvalidArgument naming the field).
Internal: import ElectionState from ``fencegate``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional, Union

import grpc

from fencegate import _util
from fencegate._proto import lock_pb2
from fencegate.errors import (FencegateError, InvalidArgument, NotAcquired, NotHolder,
                              Unavailable)
from fencegate.lease import Signature

# The longest wait one Campaign call asks for at first: the service's
# default --max_wait (as the C++ client's). A longer wait is several calls;
# a service with a smaller --max_wait refuses the wait naming its limit
# (InvalidArgument.max_value), and the calls after that ask for the limit.
MOST_WAIT_PER_CALL = 300.0

# An observer's pauses before it observes again: from the first, doubling
# to the last (as the C++ client's); back to the first once a stream works.
OBSERVE_FIRST_PAUSE = 0.1
OBSERVE_LAST_PAUSE = 1.0

# What ends an Observe stream that the observer opens again: the service
# went away (a restart, a shutdown, an etcd failover), or cut off an
# observer that fell behind or found no place; also CANCELLED that the
# observer did not cause (it checks first): gRPC's answer to a stream that
# reached a server as it was shutting down.
RESUMABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED,
             grpc.StatusCode.CANCELLED)

Value = Union[bytes, bytearray, memoryview]


@dataclass(frozen=True)
class ElectionState:
    """An election's state: who leads (``leader()``), or how a change left
    it (``observe()``); lock.proto's ElectionChange.

    ``leader`` True: ``candidate`` leads in ``term`` (the term's fencing
    token) saying ``value``, its ``seq``-th value (0: the campaign's own).
    False: nobody leads; ``term`` is the term that ended last (0: not
    known) and ``seq`` its end's number. ``remaining``: with a leader, its
    lease's time left in seconds when the change was decided.
    ``changed_at``: the service's wall clock then (UTC).
    """

    election: str
    leader: bool
    term: int
    seq: int
    value: bytes
    candidate: str
    remaining: float
    changed_at: datetime


def state_of(change: Any) -> ElectionState:
    """The ElectionState of a lock.proto ElectionChange."""
    return ElectionState(
        election=change.election, leader=change.leader, term=change.term, seq=change.seq,
        value=change.value, candidate=change.candidate,
        remaining=change.remaining_ms / 1000.0,
        changed_at=datetime.fromtimestamp(change.changed_at_unix_ms / 1000.0, timezone.utc))


def campaign_request(election: str, candidate: str, value: Value, ttl: _util.Duration,
                     request_id: Optional[bytes]) -> Any:
    """A CampaignRequest without its wait (each call of a campaign sets it)."""
    if request_id is not None and not isinstance(request_id, bytes):
        raise TypeError("request_id must be bytes")
    return lock_pb2.CampaignRequest(
        election=_util.name_bytes(election, "election"),
        candidate=_util.name_bytes(candidate, "candidate"),
        value=_util.value_bytes(value, "value"), ttl_ms=_util.to_ms(ttl, "ttl"),
        request_id=request_id or _util.new_request_id())  # one for every call and retry


def proclaim_request(election: str, term: int, value: Value, signature: Signature) -> Any:
    return lock_pb2.ProclaimRequest(
        election=_util.name_bytes(election, "election"), term=_term(term),
        value=_util.value_bytes(value, "value"), signature=_util.signature_message(signature))


def resign_request(election: str, term: int, signature: Signature) -> Any:
    return lock_pb2.ResignRequest(election=_util.name_bytes(election, "election"),
                                  term=_term(term), signature=_util.signature_message(signature))


def leader_request(election: str) -> Any:
    return lock_pb2.LeaderRequest(election=_util.name_bytes(election, "election"))


class CampaignWait:
    """A campaign's wait, in calls of at most MOST_WAIT_PER_CALL each.

    ``wait`` None (or infinite) waits for good. A negative or NaN wait is
    sent as it is, for the service to refuse naming the field.
    """

    def __init__(self, wait: Optional[_util.Duration]) -> None:
        self._wait = math.inf if wait is None else _util.seconds(wait, "wait")
        self._until = time.monotonic() + self._wait if self._wait > 0 else 0.0
        self._most = MOST_WAIT_PER_CALL
        self._step = 0.0

    def step(self) -> float:
        """The wait of the next call, in seconds."""
        if math.isnan(self._wait) or self._wait < 0:
            return self._wait
        self._step = min(max(0.0, self._until - time.monotonic()), self._most)
        return self._step

    def fit(self, refused: InvalidArgument) -> bool:
        """Whether the last call's wait was refused for being above the
        service's --max_wait; if so, the next calls ask for that at most."""
        limit = refused.max_value / 1000.0
        if refused.field != "wait_ms" or not 0 < limit < self._step:
            return False
        self._most = limit
        return True

    def over(self) -> bool:
        """Whether the wait ran out (after a call that was not granted)."""
        return not self._wait > 0 or time.monotonic() >= self._until


class ResignAttempts:
    """The attempts of one Resign, retried on UNAVAILABLE: once an attempt
    may have been applied (the stream ended before its answer), a later
    attempt's LEASE_LOST means the term ended either way."""

    def __init__(self) -> None:
        self._maybe_ended = False

    def ended(self, error: FencegateError) -> bool:
        """Whether ``error``, an attempt's, means the term ended."""
        if isinstance(error, NotHolder):
            return self._maybe_ended
        if isinstance(error, Unavailable) and error.maybe_applied:
            self._maybe_ended = True
        return False


def not_elected(election: str, response: Any) -> NotAcquired:
    """The error of a campaign not granted within its wait."""
    retry_after = response.retry_after_ms / 1000.0
    delay = response.reason == lock_pb2.AcquireResponse.LOCK_DELAY
    held = ("held back by a lock-delay after a term expired" if delay
            else f"it is led in term {response.holder_token}")
    return NotAcquired(f"not elected in election '{election}': {held}; retry in "
                       f"{retry_after:g} s, campaign with a longer wait, or observe it",
                       resource=election, holder_token=response.holder_token,
                       retry_after=retry_after, lock_delay=delay)


class ObserveCursor:
    """Where one observer is: the last change seen, from which it observes
    again, and the pause before it does. Not thread-safe (its observer's)."""

    def __init__(self, election: str, after_term: int, after_seq: int) -> None:
        self.election_bytes = _util.name_bytes(election, "election")
        self.after_term = _util.int_arg(after_term, "after_term")
        self.after_seq = _util.int_arg(after_seq, "after_seq")
        self._pause = OBSERVE_FIRST_PAUSE

    def request(self) -> Any:
        """The ObserveRequest that resumes after the last change seen."""
        return lock_pb2.ObserveRequest(election=self.election_bytes,
                                       after_term=self.after_term, after_seq=self.after_seq)

    def seen(self, change: Any) -> Optional[ElectionState]:
        """A change came: the stream works. Returns its state, and resumes
        after it from now on, if it is new to the observer (the service's
        own rule, applied again here: a service that sends the state again
        on a resume, or a stream opened twice, shows nothing twice); None
        otherwise."""
        self._pause = OBSERVE_FIRST_PAUSE
        if not new_to_observer(change, self.after_term, self.after_seq):
            return None
        self.after_term, self.after_seq = change.term, change.seq
        return state_of(change)

    def pause_after(self, code: grpc.StatusCode) -> Optional[float]:
        """How long to pause before observing again after a stream ended
        with ``code``; None when that end is not to be resumed (the
        caller's to see)."""
        if code not in RESUMABLE:
            return None
        pause, self._pause = self._pause, min(self._pause * 2, OBSERVE_LAST_PAUSE)
        return pause


def new_to_observer(change: Any, after_term: int, after_seq: int) -> bool:
    """Whether an observer that saw (after_term, after_seq) is told
    ``change`` (docs/semantics.md): anything when it saw nothing (0, 0);
    otherwise what is newer in (term, seq) order, or a state without a
    leader whose ended term is not known (term 0: after a restart)."""
    if after_term == 0 and after_seq == 0:
        return True
    if change.term != after_term:
        return change.term > after_term or (not change.leader and change.term == 0)
    return change.seq > after_seq


def _term(term: int) -> int:
    return _util.int_arg(term, "term")


