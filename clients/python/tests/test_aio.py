"""fencegate.aio against the real servers: renewal, release, 100 concurrent
tasks on one client, the pushed loss as an asyncio.Event, cancel_on_loss,
the gateway's calls over both transports, pipelining, a lost answer. Each
test runs its own event loop (asyncio.run)."""

from __future__ import annotations

import asyncio
import time

import pytest

import fencegate
import fencegate.aio
from harness import Proxy, wait_for


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def test_async_lock_renews_past_its_ttl_and_releases(lockservice, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            async with locks.lock(resource, ttl=1.0) as lease:
                start = time.monotonic()
                while time.monotonic() < start + 2.5:  # 2.5 TTLs: only renewals keep it
                    await asyncio.sleep(0.05)
                lease.check()
                assert not lease.lost.is_set()
                assert (await locks.describe(resource)).token == lease.token
            assert lease.lost.is_set()
            assert not (await locks.describe(resource)).held
            with pytest.raises(fencegate.NotAcquired):
                async with locks.lock(resource, ttl=10, wait=0) as held:
                    await locks.acquire(resource, ttl=10)  # another holder: not acquired
            assert held.lost.is_set()

    run(main())


def test_async_lock_context_manager_releases_on_exit_and_on_error(lockservice, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            async with locks.lock(resource, ttl=10) as lease:
                assert (await locks.describe(resource)).token == lease.token
            assert not (await locks.describe(resource)).held, "released on exit"
            assert lease.lost.is_set()
            with pytest.raises(ZeroDivisionError):
                async with locks.lock(resource, ttl=10):
                    1 / 0
            assert not (await locks.describe(resource)).held, "released when the body raised"

    run(main())


def test_an_async_release_retried_with_its_request_id_drops_one_hold(lockservice, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            first = await locks.acquire(resource, ttl=10, holder="reentrant")
            again = await locks.acquire(resource, ttl=10, holder="reentrant")
            assert again.token == first.token and again.hold_count == 2
            once = dict(signature=first.signature, request_id=b"release-sent-twice")
            assert await locks.release(resource, first.token, **once) == 1
            # The same release again (its answer lost, say): applied once.
            assert await locks.release(resource, first.token, **once) == 1
            state = await locks.describe(resource)
            assert state.held and state.token == first.token and state.hold_count == 1
            assert await locks.release(resource, first.token, signature=first.signature) == 0
            assert not (await locks.describe(resource)).held

    run(main())


def test_async_renew_fraction_sets_when_each_lease_renews(lockservice, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            before = time.monotonic()
            late = await locks.acquire(resource, ttl=10, renew_fraction=0.5)
            after = time.monotonic()
            assert before + 5.0 <= late._next_renew <= after + 5.0
            before = time.monotonic()
            usual = await locks.acquire(resource + "-usual", ttl=9)
            after = time.monotonic()
            assert before + 3.0 <= usual._next_renew <= after + 3.0, "a third of the TTL"

    run(main())


def test_100_concurrent_tasks_take_turns(lockservice, resource):
    inside = 0
    tokens: list[int] = []

    async def worker(locks) -> None:
        nonlocal inside
        async with locks.lock(resource, ttl=10, wait=50) as lease:
            inside += 1
            assert inside == 1, "two tasks held the lock at once"
            tokens.append(lease.token)
            await asyncio.sleep(0)  # let the others run meanwhile
            inside -= 1

    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            await asyncio.gather(*(worker(locks) for _ in range(100)))
            assert not (await locks.describe(resource)).held

    run(main())
    assert len(tokens) == 100 and tokens == sorted(tokens) and len(set(tokens)) == 100


def test_a_pushed_loss_sets_lease_lost_within_200ms(lockservice, locks, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as aio_locks:
            lease = await aio_locks.acquire(resource, ttl=60)
            # The next renewal is 20 s away: only the push can tell.
            loop = asyncio.get_running_loop()
            released = await loop.run_in_executor(
                None, lambda: locks.release(resource, lease.token, signature=lease.signature))
            decided = time.monotonic()
            assert released == 0
            await asyncio.wait_for(lease.lost.wait(), 5)
            assert time.monotonic() - decided < 0.2
            with pytest.raises(fencegate.LeaseLost) as error:
                lease.check()
            assert error.value.reason == "released_elsewhere"

    run(main())


def test_cancel_on_loss_cancels_the_body_and_raises_lease_lost(lockservice, locks, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as aio_locks:
            with pytest.raises(fencegate.LeaseLost):
                async with aio_locks.lock(resource, ttl=60, cancel_on_loss=True) as lease:
                    loop = asyncio.get_running_loop()
                    await loop.run_in_executor(None, lambda: locks.release(
                        resource, lease.token, signature=lease.signature))
                    await asyncio.sleep(30)  # cancelled by the loss, long before this
                    pytest.fail("the body was not cancelled")
            assert not asyncio.current_task().cancelling()

    start = time.monotonic()
    run(main())
    assert time.monotonic() - start < 5


def test_an_async_retried_acquire_is_applied_once_after_the_service_was_killed_mid_call(
        own_lockservice, resource):
    # As test_lease_loss.py's synchronous test: the retry carries the first
    # attempt's request id, so the service answers it with that grant.
    proxy = Proxy(lambda: own_lockservice.port)

    def kill_and_restart_once_granted() -> None:
        with fencegate.LockClient(own_lockservice.address) as direct:
            wait_for(lambda: direct.describe(resource).held, what="the acquire committed")
        # Granted and durable, its answer lost: kill -9, restart on the same db.
        own_lockservice.kill9()
        proxy.cut()
        proxy.heal()
        own_lockservice.start()

    async def main():
        async with fencegate.aio.LockClient(proxy.address) as locks:
            await locks.describe(resource)  # the stream is up, through the proxy
            proxy.drop_answers()
            acquire = asyncio.ensure_future(locks.acquire(resource, ttl=30))
            await asyncio.get_running_loop().run_in_executor(None,
                                                             kill_and_restart_once_granted)
            lease = await asyncio.wait_for(acquire, 30)
            state = await locks.describe(resource)
            assert state.token == lease.token
            assert state.hold_count == 1, "the retry must not add a second hold"
            await lease.release()
            assert not (await locks.describe(resource)).held

    try:
        run(main())
    finally:
        proxy.close()


def test_async_bad_input_names_the_field(lockservice, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            with pytest.raises(fencegate.InvalidArgument) as error:
                await locks.acquire(resource, ttl=0.001)
            assert error.value.field == "ttl_ms"
            assert not (await locks.describe(resource)).held

    run(main())


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_async_gateway_calls_and_a_stale_token(lockservice, gateway, resource, transport):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks, \
                fencegate.aio.GatewayClient(gateway.address, transport=transport) as gw:
            old = await locks.acquire(resource, ttl=10)
            first = await gw.put(old, "k", b"1")
            assert (await gw.get(old, "k")).value == b"1"
            with pytest.raises(fencegate.VersionMismatch):
                await gw.compare_and_set(old, "k", b"2", expected_version=0)
            await old.release()
            async with locks.lock(resource, ttl=10) as newer:
                assert await gw.fence(newer) == newer.token
                with pytest.raises(fencegate.StaleToken) as error:
                    await gw.put(old, "k", b"late")
                assert error.value.current_token == newer.token
                result = await gw.multi_write(newer, [fencegate.Mutation("k", b"2"),
                                                      fencegate.Mutation("j", b"3")])
                assert result.versions[0] > first.version
                assert (await gw.get_unfenced(resource, "k")).value == b"2"
                assert (await gw.describe(resource)).key_count == 2
                assert [k.key for k in (await gw.list(resource)).keys] == ["j", "k"]

    run(main())


def test_an_async_stale_token_is_raised_at_once_never_retried(lockservice, gateway, resource):
    # As the synchronous test: StaleToken is final, never retried as transient.
    retry = fencegate.RetryPolicy(call_timeout=2.0, rpc_timeout=2.0)

    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks, \
                fencegate.aio.GatewayClient(gateway.address, retry=retry) as gw:
            old = await locks.acquire(resource, ttl=10)
            await old.release()
            async with locks.lock(resource, ttl=10) as new:
                await gw.fence(new)
                for late_call in (lambda: gw.put(old, "k", b"late"), lambda: gw.get(old, "k")):
                    start = time.monotonic()
                    try:
                        await late_call()
                        error = None
                    except fencegate.FencegateError as e:
                        error = e
                    assert isinstance(error, fencegate.StaleToken), (
                        f"a stale token must raise StaleToken, not {error!r}")
                    assert time.monotonic() - start < 1.5, "raised at once, not retried"
                    assert error.current_token == new.token

    run(main())


def test_async_concurrent_large_puts_fit_the_servers_message_limit(lockservice, gateway,
                                                                    resource):
    # Calls made together share a message (fencegate/aio/_session.py); 40
    # puts of 512 KiB in one would be 20 MiB, past the gateway's receive
    # limit, which would end the stream and fail them all.
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks, \
                fencegate.aio.GatewayClient(gateway.address) as gw:
            async with locks.lock(resource, ttl=30) as lease:
                value = bytes(512 * 1024)
                results = await asyncio.gather(
                    *(gw.put(lease, f"big{i}", value) for i in range(40)))
                assert len({r.version for r in results}) == 40
                assert (await gw.get(lease, "big39")).value == value

    run(main())


def test_async_pipelined_puts_take_effect_in_order(lockservice, gateway, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks, \
                fencegate.aio.GatewayClient(gateway.address) as gw:
            async with locks.lock(resource, ttl=10) as lease:
                results = await asyncio.gather(
                    *(gw.put(lease, "k", str(i).encode()) for i in range(50)))
                versions = [r.version for r in results]
                assert versions == sorted(versions) and len(set(versions)) == 50
                assert (await gw.get(lease, "k")).value == b"49"

    run(main())


def test_an_async_write_whose_answer_was_lost_may_have_been_applied(lockservice, gateway,
                                                                     gw, resource):
    proxy = Proxy(lambda: gateway.port)

    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks, \
                fencegate.aio.GatewayClient(proxy.address) as through_proxy:
            async with locks.lock(resource, ttl=10) as lease:
                await through_proxy.fence(lease)  # the stream is up, through the proxy
                proxy.drop_answers()
                put = asyncio.ensure_future(through_proxy.put(lease, "k", b"v"))
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, lambda: wait_for(
                    lambda: gw.describe(resource).key_count == 1, what="the put applied"))
                proxy.cut()
                with pytest.raises(fencegate.Unavailable) as error:
                    await put
                assert error.value.maybe_applied
                assert gw.describe(resource).key_count == 1, "applied once, not sent again"

    try:
        run(main())
    finally:
        proxy.close()
