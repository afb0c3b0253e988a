"""Elections against the real servers (docs/semantics.md, "Elections"):
campaign, leader, proclaim and resign; candidates in line FIFO (one that
waited longer than its TTL gets a whole term); a deposed
leader's Proclaim refused and its write fenced by the term; an observer
that sees every change in order and resumes after a restart from the last
change it saw; the same from asyncio. No fixed sleeps but the one wait in
line under test: polls with deadlines.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import grpc
import pytest

import fencegate
import fencegate.aio
from conftest import LOCKSERVICE_BIN, _need_binaries, lockservice_args
from fencegate.v1 import lock_pb2, lock_pb2_grpc
from harness import Proxy, Server, wait_for


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


class Switch:
    """A proxy in front of a lock service that can cut its clients off
    (every connection closed, new ones refused) and let them back; the
    service's port may change (a restart)."""

    def __init__(self, server: Server) -> None:
        self._server = server
        self.on = True
        dead = socket.create_server(("127.0.0.1", 0))  # a port nobody listens on
        self._dead_port = dead.getsockname()[1]
        dead.close()
        self.proxy = Proxy(lambda: self._server.port if self.on else self._dead_port)
        self.address = self.proxy.address

    def cut_off(self) -> None:
        self.on = False
        self.proxy.cut()

    def heal(self) -> None:
        self.on = True

    def close(self) -> None:
        self.proxy.close()


class Collector:
    """Iterates an observer on a thread of its own, keeping what it saw."""

    def __init__(self, observer) -> None:
        self.observer = observer
        self.seen: list[fencegate.ElectionState] = []
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for state in self.observer:
                self.seen.append(state)
        except BaseException as e:  # the test looks at it
            self.error = e

    def keys(self) -> list[tuple]:
        return [(s.term, s.seq, s.leader, s.value) for s in self.seen]

    def wait_for_count(self, count: int, what: str) -> None:
        wait_for(lambda: len(self.seen) >= count or self.error, timeout=15, what=what)
        assert self.error is None, f"the observer ended with {self.error!r}"

    def stop(self) -> None:
        self.observer.close()
        self._thread.join(10)
        assert not self._thread.is_alive(), "close() ended the iteration"


def own_lockservice_with(workdir, request, *flags: str):
    """A lock service of the test's own, started with ``flags``; stopped
    when the generator is closed (a fixture's yield)."""
    _need_binaries()
    name = "lockservice-" + request.node.name
    server = Server(LOCKSERVICE_BIN, workdir, name, *lockservice_args(workdir), *flags)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def observed_lockservice(workdir, request):
    """A lock service of the test's own that admits one Observe stream at a
    time, so that a probe can tell when an observer's stream is registered
    (a second one is refused RESOURCE_EXHAUSTED)."""
    yield from own_lockservice_with(workdir, request, "--max_election_observers=1")


def observer_registered(server: Server, election: str) -> bool:
    """Whether the one Observe stream the service admits is taken: a probe
    is refused RESOURCE_EXHAUSTED. A probe let in is ended at once."""
    channel = grpc.insecure_channel(server.address)
    try:
        call = lock_pb2_grpc.LockServiceStub(channel).Observe(
            lock_pb2.ObserveRequest(election=election.encode()), timeout=5)
        try:
            next(call)  # let in: it is sent the state now at once
            return False
        except grpc.RpcError as e:
            return e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        finally:
            call.cancel()
    finally:
        channel.close()


# -- campaign, leader, proclaim, resign ---------------------------------------


def test_campaign_leader_proclaim_and_resign(locks, resource):
    nobody = locks.leader(resource)
    assert (nobody.leader, nobody.term, nobody.seq) == (False, 0, 0), "a new election"
    with locks.campaign(resource, b"replica-1", candidate="replica-1", ttl=10) as me:
        assert me.term > 0 and me.term == me.lease.token and not me.lost
        assert (me.value, me.seq) == (b"replica-1", 0)
        now = locks.leader(resource)
        assert (now.leader, now.term, now.seq, now.value, now.candidate) == (
            True, me.term, 0, b"replica-1", "replica-1")
        assert 0 < now.remaining <= 10 and now.changed_at.year >= 2024
        assert me.proclaim(b"replica-1:8080") == 1
        assert me.proclaim(b"replica-1:9090") == 2
        assert (me.value, me.seq) == (b"replica-1:9090", 2)
        now = locks.leader(resource)
        assert (now.term, now.seq, now.value) == (me.term, 2, b"replica-1:9090")
        # A lease like any other: the term is the election's token.
        assert locks.describe(resource).token == me.term
        term = me.term
    # Left the block: resigned.
    assert me.lost and me.lease.wait_lost(0)
    ended = locks.leader(resource)
    assert (ended.leader, ended.term) == (False, term), "the ended term is remembered"
    assert ended.seq == 3, "the end's number follows the last proclaim's"
    assert not locks.describe(resource).held
    me.resign()  # idempotent


def test_a_campaign_that_may_not_wait_is_not_elected_while_another_leads(locks, resource):
    first = locks.campaign(resource, b"a", ttl=10)
    try:
        with pytest.raises(fencegate.NotAcquired) as error:
            locks.campaign(resource, b"b", wait=0)
        assert error.value.holder_token == first.term and "not elected" in str(error.value)
        with pytest.raises(fencegate.NotAcquired):
            locks.campaign(resource, b"b", wait=0.2)  # waited in line, in vain
    finally:
        first.resign()


@pytest.fixture
def short_wait_lockservice(workdir, request):
    """A lock service of the test's own whose --max_wait (0.3 s) is far below
    the clients' first step of a campaign's wait (5 min)."""
    yield from own_lockservice_with(workdir, request, "--max_wait=300ms")


def test_a_campaign_waits_in_steps_of_a_smaller_max_wait(short_wait_lockservice, resource):
    address = short_wait_lockservice.address
    with fencegate.LockClient(address) as locks, fencegate.LockClient(address) as other:
        first = locks.campaign(resource, b"a", ttl=10)
        # Refused the 5 min step naming the limit, the campaign asks within it
        # and waits its whole wait, in vain.
        start = time.monotonic()
        with pytest.raises(fencegate.NotAcquired):
            other.campaign(resource, b"b", wait=0.9)
        assert time.monotonic() - start >= 0.9
        # Waiting for good: elected once the first resigns.
        won: list = []
        waiting = threading.Thread(target=lambda: won.append(other.campaign(resource, b"b")))
        waiting.start()
        wait_for(lambda: locks.describe(resource).waiters == 1, what="b in line")
        first.resign()
        waiting.join(10)
        assert won and won[0].term > first.term
        won[0].resign()

        async def in_asyncio():
            async with fencegate.aio.LockClient(address) as aio:
                again = await aio.campaign(resource, b"c", ttl=10)
                start = time.monotonic()
                with pytest.raises(fencegate.NotAcquired):
                    await aio.campaign(resource, b"d", wait=0.9)
                assert time.monotonic() - start >= 0.9
                await again.resign()
        run(in_asyncio())


def test_candidates_wait_in_line_and_the_next_leads_in_a_larger_term(
        locks, lockservice, resource):
    first = locks.campaign(resource, b"first", candidate="first", ttl=10)
    with fencegate.LockClient(lockservice.address) as other:
        won: list = []
        waiting = threading.Thread(
            target=lambda: won.append(other.campaign(resource, b"second",
                                                     candidate="second", ttl=1)))
        waiting.start()  # waits for good (the default)
        wait_for(lambda: locks.describe(resource).waiters == 1, what="the second in line")
        assert locks.leader(resource).candidate == "first"
        # The time under test: the second waits in line longer than its own
        # TTL, and still gets a whole term (counted from its grant: the
        # service says how long the call waited).
        time.sleep(1.5)
        first.resign()
        waiting.join(10)
        second = won[0]
        assert second.term > first.term
        assert first.lost and not second.lost
        second.lease.check()  # raises LeaseLost if it lapsed on this clock
        now = locks.leader(resource)
        assert (now.leader, now.term, now.seq, now.value, now.candidate) == (
            True, second.term, 0, b"second", "second")
        # The first is deposed: the service refuses its term.
        with pytest.raises(fencegate.NotHolder) as error:
            locks.proclaim(resource, first.term, b"late", signature=first.lease.signature)
        assert error.value.current_token == second.term
        second.resign()
    assert not locks.leader(resource).leader


def test_a_candidate_campaigning_again_gets_its_term_back_and_one_resign_ends_it(
        locks, resource):
    first = locks.campaign(resource, b"v0", candidate="me", ttl=10)
    again = locks.campaign(resource, b"v9", candidate="me", wait=0)
    assert again.term == first.term
    assert locks.describe(resource).hold_count == 1, "no second hold"
    state = locks.leader(resource)
    assert (state.term, state.seq, state.value) == (first.term, 0, b"v0"), "value unchanged"
    again.resign()
    # The other Leadership of the term knows at once (a Resign on the
    # stream is answered, not pushed).
    with pytest.raises(fencegate.LeaseLost) as error:
        first.check()
    assert error.value.reason == "released_elsewhere"
    assert not locks.leader(resource).leader
    with pytest.raises(fencegate.LeaseLost):
        first.resign()  # the service already ended it


def test_a_deposed_leader_is_refused_its_proclaim_and_its_write(
        own_lockservice, gateway, gw, resource):
    switch = Switch(own_lockservice)
    cut_off = fencegate.LockClient(switch.address)
    other = fencegate.LockClient(own_lockservice.address)
    try:
        first = cut_off.campaign(resource, b"first", ttl=1.0)
        gw.put(first.lease, "k", b"first")
        won: list = []
        waiting = threading.Thread(
            target=lambda: won.append(other.campaign(resource, b"second", ttl=10, wait=20)))
        waiting.start()
        wait_for(lambda: other.describe(resource).waiters == 1, what="the second in line")
        switch.cut_off()  # the leader renews no more: its term ends with its TTL
        waiting.join(20)
        second = won[0]
        assert second.term > first.term
        assert first.lease.wait_lost(10), "the client's clock ends the term too"
        gw.put(second.lease, "k", b"second")
        switch.heal()
        # The service decides: it refuses the deposed term.
        with pytest.raises(fencegate.NotHolder) as error:
            first.proclaim(b"late")
        assert error.value.current_token == second.term
        with pytest.raises(fencegate.StaleToken) as stale:
            gw.put(first.lease, "k", b"late")
        assert stale.value.current_token == second.term
        assert gw.get(second.lease, "k").value == b"second", "no update lost"
        with pytest.raises(fencegate.LeaseLost):
            first.resign()  # deposed: nothing to end
        state = other.leader(resource)
        assert (state.term, state.value) == (second.term, b"second")
        second.resign()
    finally:
        cut_off.close()
        other.close()
        switch.close()


def test_observe_sees_a_term_begin_its_proclaims_and_its_end_in_order(locks, resource):
    with locks.observe(resource) as observer:
        seen = Collector(observer)
        seen.wait_for_count(1, "the state now")
        assert seen.keys() == [(0, 0, False, b"")], "nobody leads a new election"
        me = locks.campaign(resource, b"v0", candidate="me", ttl=10)
        me.proclaim(b"v1")
        me.proclaim(b"v2")
        me.resign()
        seen.wait_for_count(5, "the term's changes")
        assert seen.keys() == [(0, 0, False, b""), (me.term, 0, True, b"v0"),
                               (me.term, 1, True, b"v1"), (me.term, 2, True, b"v2"),
                               (me.term, 3, False, b"")]
        assert all(s.election == resource for s in seen.seen)
        assert seen.seen[1].candidate == "me" and seen.seen[1].remaining > 0
        seen.stop()
    assert seen.error is None
    # A new observer that resumes after the end is sent nothing older.
    with locks.observe(resource, after_term=me.term, after_seq=3) as later:
        resumed = Collector(later)
        again = locks.campaign(resource, b"w", ttl=10)
        resumed.wait_for_count(1, "the next term")
        assert resumed.keys()[0] == (again.term, 0, True, b"w")
        again.resign()
        resumed.stop()


def test_observe_resumes_after_a_restart_from_the_last_change_seen(
        observed_lockservice, resource):
    switch = Switch(observed_lockservice)  # the observer follows the restarted service
    client = fencegate.LockClient(switch.address)
    try:
        me = client.campaign(resource, b"v0", ttl=30)
        seen = Collector(client.observe(resource))
        seen.wait_for_count(1, "the state now")  # observing, before anything changes
        me.proclaim(b"v1")
        me.proclaim(b"v2")
        seen.wait_for_count(3, "the changes before the restart")
        before = seen.keys()
        assert before == [(me.term, 0, True, b"v0"), (me.term, 1, True, b"v1"),
                          (me.term, 2, True, b"v2")]
        observed_lockservice.stop()  # its observers end UNAVAILABLE
        observed_lockservice.start()  # the same database: the term goes on
        wait_for(lambda: seen.error or observer_registered(observed_lockservice, resource),
                 timeout=15, what="the observer to observe the restarted service again")
        assert seen.error is None, f"the observer ended with {seen.error!r}"
        assert me.proclaim(b"v3") == 3, "the term survived the restart"
        seen.wait_for_count(4, "the change after the restart")
        assert seen.keys()[3] == (me.term, 3, True, b"v3"), (
            f"resumed after (term {me.term}, seq 2): sent nothing it had seen, "
            f"but saw {seen.keys()[3:]}")
        me.resign()
        seen.wait_for_count(5, "the end of the term")
        assert seen.keys()[3:] == [(me.term, 3, True, b"v3"), (me.term, 4, False, b"")]
        assert (seen.observer.after_term, seen.observer.after_seq) == (me.term, 4)
        seen.stop()
        assert seen.error is None
    finally:
        client.close()
        switch.close()


def test_an_observer_refused_a_place_keeps_trying_until_one_frees(
        observed_lockservice, resource):
    channel = grpc.insecure_channel(observed_lockservice.address)
    client = fencegate.LockClient(observed_lockservice.address)
    try:
        other = lock_pb2_grpc.LockServiceStub(channel).Observe(
            lock_pb2.ObserveRequest(election=resource.encode()), timeout=30)
        next(other)  # it holds the one place the service admits
        seen = Collector(client.observe(resource))
        # Refused RESOURCE_EXHAUSTED at least once: it paused, and will retry.
        wait_for(lambda: seen.observer._cursor._pause > 0.1 or seen.error,
                 what="the observer to be refused a place")
        assert not seen.seen
        other.cancel()  # the place frees
        seen.wait_for_count(1, "the observer to get the place")
        assert [(s.term, s.leader) for s in seen.seen] == [(0, False)]
        seen.stop()
    finally:
        client.close()
        channel.close()


def test_closing_the_client_ends_its_observers(lockservice, resource):
    client = fencegate.LockClient(lockservice.address)
    seen = Collector(client.observe(resource))
    seen.wait_for_count(1, "the state now")
    client.close()
    seen.stop()
    assert seen.error is None
    with pytest.raises(fencegate.FencegateError):
        client.observe(resource)


def test_closing_an_async_client_ends_its_observers(lockservice, resource):
    async def main():
        locks = fencegate.aio.LockClient(lockservice.address)
        seen: list = []

        async def observe():
            async for state in locks.observe(resource):
                seen.append(state)

        task = asyncio.create_task(observe())
        while not seen:  # bounded by run()'s 60 s
            assert not task.done(), task.exception()
            await asyncio.sleep(0.01)
        await locks.close()
        await asyncio.wait_for(task, 10)  # the iteration ended, without an error
        assert [(s.term, s.leader) for s in seen] == [(0, False)]
        with pytest.raises(fencegate.FencegateError):
            locks.observe(resource)

    run(main())


def test_bad_election_input_names_the_field(locks, resource):
    with pytest.raises(fencegate.InvalidArgument) as error:
        locks.campaign(resource, b"x" * 5000, wait=0)
    assert error.value.field == "value"
    with pytest.raises(fencegate.InvalidArgument) as error:
        locks.proclaim(resource, 0, b"v")
    assert error.value.field == "term"
    with pytest.raises(TypeError):
        locks.campaign(resource, "text, not bytes", wait=0)


# -- asyncio -----------------------------------------------------------------


def test_async_campaign_leader_proclaim_and_resign(lockservice, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            async with await locks.campaign(resource, b"v0", candidate="me", ttl=10) as me:
                assert me.term == me.lease.token and me.seq == 0
                now = await locks.leader(resource)
                assert (now.leader, now.term, now.value, now.candidate) == (
                    True, me.term, b"v0", "me")
                assert await me.proclaim(b"v1") == 1
                assert (await locks.leader(resource)).value == b"v1"
            assert me.lease.lost.is_set()
            ended = await locks.leader(resource)
            assert (ended.leader, ended.term, ended.seq) == (False, me.term, 2)

    run(main())


def test_async_one_resign_ends_a_term_its_candidate_campaigned_for_twice(
        lockservice, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            first = await locks.campaign(resource, b"v0", candidate="me", ttl=10)
            again = await locks.campaign(resource, b"v9", candidate="me", wait=0)
            assert again.term == first.term
            await again.resign()
            assert first.lease.lost.is_set(), "the other Leadership knows at once"
            with pytest.raises(fencegate.LeaseLost):
                first.check()
            async with first:  # leaving: deposed, nothing to end, no error
                pass

    run(main())


def test_async_candidates_wait_in_line_and_a_deposed_term_is_refused(lockservice, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            first = await locks.campaign(resource, b"first", ttl=10)
            second_task = asyncio.create_task(locks.campaign(resource, b"second", ttl=10))
            while (await locks.describe(resource)).waiters != 1:  # bounded by run()'s 60 s
                await asyncio.sleep(0.01)
            with pytest.raises(fencegate.NotAcquired):
                await locks.campaign(resource, b"third", wait=0)
            await first.resign()
            second = await second_task
            assert second.term > first.term
            with pytest.raises(fencegate.NotHolder) as error:
                await first.proclaim(b"late")
            assert error.value.current_token == second.term
            assert first.lease.lost.is_set()
            await second.resign()

    run(main())


def test_async_observe_sees_changes_in_order_and_resumes_after_a_restart(
        observed_lockservice, resource):
    switch = Switch(observed_lockservice)

    async def main():
        async with fencegate.aio.LockClient(switch.address) as locks:
            me = await locks.campaign(resource, b"v0", ttl=30)
            seen: list = []

            async def observe():
                async with locks.observe(resource) as observer:
                    async for state in observer:
                        seen.append((state.term, state.seq, state.leader, state.value))

            async def until(count: int) -> None:
                while len(seen) < count:  # bounded by run()'s 60 s
                    assert not task.done(), task.exception()
                    await asyncio.sleep(0.01)

            task = asyncio.create_task(observe())
            await until(1)  # observing, before anything changes
            await me.proclaim(b"v1")
            await until(2)
            assert seen == [(me.term, 0, True, b"v0"), (me.term, 1, True, b"v1")]
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, observed_lockservice.stop)
            await loop.run_in_executor(None, observed_lockservice.start)
            await loop.run_in_executor(None, lambda: wait_for(
                lambda: task.done() or observer_registered(observed_lockservice, resource),
                timeout=15, what="the observer to observe the restarted service again"))
            assert not task.done(), task.exception()
            assert await me.proclaim(b"v2") == 2
            await me.resign()
            await until(4)
            assert seen[2:] == [(me.term, 2, True, b"v2"), (me.term, 3, False, b"")], (
                f"resumed after (term {me.term}, seq 1): sent nothing it had seen, "
                f"but saw {seen[2:]}")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    try:
        run(main())
    finally:
        switch.close()
