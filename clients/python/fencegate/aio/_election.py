"""Elections from asyncio: fencegate.aio.LockClient's ``campaign()`` makes
a Leadership, ``observe()`` an ElectionObserver (an async iterator). The
concepts, semantics and errors of fencegate.election; the messages are
shared with it (fencegate._election_messages).

    async with fencegate.aio.LockClient("127.0.0.1:7070") as locks:
        async with await locks.campaign("scheduler", b"10.0.0.2:8080") as me:
            await gateway.put(me.lease, "heartbeat", b"...")  # fenced by the term
        async with locks.observe("scheduler") as changes:
            async for state in changes: ...

For the client's event loop's tasks only (not thread-safe).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, AsyncIterator, Optional

import grpc
import grpc.aio

from fencegate._election_messages import ElectionState, ObserveCursor, Value
from fencegate.election import deposed, resigned
from fencegate.errors import LeaseLost, NotHolder, from_rpc_error

if TYPE_CHECKING:
    from fencegate.aio._locks import Lease, LockClient


class Leadership:
    """The lead of an election, won by ``await client.campaign(...)``; as
    fencegate.Leadership: ``election``, ``lease`` (the term's self-renewing
    fencegate.aio.Lease: ``lost`` is an asyncio.Event), ``term``, ``value``
    and ``seq``; ``async with`` resigns on exit (quietly if deposed)."""

    def __init__(self, client: "LockClient", election: str, lease: "Lease",
                 value: bytes) -> None:
        self._client = client
        self.election = election
        self.lease = lease
        self.value = value  #: the last value this leader said
        self.seq = 0  #: its number within the term (the campaign's: 0)

    @property
    def term(self) -> int:
        """The term: the fencing token of every write made as this leader."""
        return self.lease.token

    def check(self) -> None:
        """Raises LeaseLost once the term is lost or resigned."""
        self.lease.check()

    async def proclaim(self, value: Value) -> int:
        """As fencegate.Leadership.proclaim: its number within the term;
        NotHolder (and the lease lost) if this term no longer leads."""
        try:
            seq = await self._client.proclaim(self.election, self.term, value,
                                              signature=self.lease.signature)
        except NotHolder as e:
            self._client._ended_here(self.election, self.term, deposed(self, e, "Proclaim"))
            raise
        if seq > self.seq:
            self.seq, self.value = seq, bytes(value)
        return seq

    async def resign(self) -> None:
        """As fencegate.Leadership.resign: ends the term now; LeaseLost
        when it was deposed already."""
        stopped = self.lease._stop("resigned")
        if stopped == "done":
            return
        if stopped == "dropped":
            self.lease.check()  # raises the loss the service told
        try:
            await self._client.resign(self.election, self.term, signature=self.lease.signature)
        except NotHolder as e:
            self._client._ended_here(self.election, self.term, deposed(self, e, "Resign"))
            raise
        # As fencegate.Leadership.resign: its twins hear of it here.
        self._client._ended_here(self.election, self.term, resigned(self))

    async def __aenter__(self) -> "Leadership":
        return self

    async def __aexit__(self, *exc_info) -> None:
        try:
            await self.resign()
        except LeaseLost:
            pass  # deposed: nothing to end

    def __repr__(self) -> str:
        return (f"Leadership(election={self.election!r}, term={self.term}, "
                f"lost={self.lease.lost.is_set()})")


class ElectionObserver:
    """The changes of one election, from ``client.observe()``: an async
    iterator of ElectionState, as fencegate.ElectionObserver: it observes
    again after the last change seen on UNAVAILABLE, RESOURCE_EXHAUSTED or
    a CANCELLED it did not cause, pausing 0.1 s doubling to 1 s, and raises
    any other end. ``close()``, leaving ``async with`` or closing the
    client ends the iteration; cancelling the task iterating it cancels it
    as any await."""

    def __init__(self, client: "LockClient", election: str, after_term: int,
                 after_seq: int) -> None:
        self._client = client
        self.election = election
        self._cursor = ObserveCursor(election, after_term, after_seq)
        self._call: Optional[grpc.aio.UnaryStreamCall] = None
        self._closed = asyncio.Event()
        self._iterator = self._changes()

    @property
    def after_term(self) -> int:
        """The term of the last change seen: where the next stream starts."""
        return self._cursor.after_term

    @property
    def after_seq(self) -> int:
        return self._cursor.after_seq

    def __aiter__(self) -> "ElectionObserver":
        return self

    async def __anext__(self) -> ElectionState:
        return await self._iterator.__anext__()

    def close(self) -> None:
        """Ends the iteration (the stream is cancelled). Idempotent."""
        self._closed.set()
        if self._call is not None:
            self._call.cancel()

    async def __aenter__(self) -> "ElectionObserver":
        return self

    async def __aexit__(self, *exc_info) -> None:
        self.close()
        await self._iterator.aclose()

    async def _changes(self) -> AsyncIterator[ElectionState]:
        session = self._client._session
        while not self._closed.is_set():
            channel = session.channel
            call = self._call = session.stub.Observe(self._cursor.request())
            try:
                async for response in call:
                    for change in response.changes:
                        state = self._cursor.seen(change)
                        if state is not None:
                            yield state
                return  # the service ended it without an error
            except asyncio.CancelledError:
                # close() cancelled the call; a cancelled task goes on
                # being cancelled.
                if self._closed.is_set() and not asyncio.current_task().cancelling():
                    return
                raise
            except grpc.aio.AioRpcError as e:
                if self._closed.is_set():
                    return
                pause = self._cursor.pause_after(e.code())
                if pause is None:
                    raise from_rpc_error(e, maybe_applied=False) from None
                if e.code() == grpc.StatusCode.UNAVAILABLE and session.channel is channel:
                    session.renew_channel()  # as the Session stream's: no grpc backoff
            finally:
                self._call = None
                call.cancel()  # the caller left the loop: end the stream
            try:
                await asyncio.wait_for(self._closed.wait(), pause)
            except asyncio.TimeoutError:
                pass


__all__ = ["ElectionObserver", "Leadership"]
