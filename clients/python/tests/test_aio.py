"""fencegate.aio against the real lock service: renewal, release, 100
concurrent tasks on one client, the pushed loss as an asyncio.Event, and
cancel_on_loss. Each test runs its own event loop (asyncio.run)."""

from __future__ import annotations

import asyncio
import time

import pytest

import fencegate
import fencegate.aio


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


def test_async_bad_input_names_the_field(lockservice, resource):
    async def main():
        async with fencegate.aio.LockClient(lockservice.address) as locks:
            with pytest.raises(fencegate.InvalidArgument) as error:
                await locks.acquire(resource, ttl=0.001)
            assert error.value.field == "ttl_ms"
            assert not (await locks.describe(resource)).held

    run(main())
