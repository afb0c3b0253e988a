"""LockClient and Lease against the real lock service: acquire, renew,
release, try-lock, FIFO waits, kinds of lock, context managers, bad input."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

import fencegate
from harness import wait_for


def test_acquire_renews_past_its_ttl_and_releases(locks, resource):
    lost = []
    lease = locks.acquire(resource, ttl=1.0, on_lost=lost.append)
    assert lease.token > 0 and lease.hold_count == 1
    assert lease.signature.mac, "the service signs tokens: the grant carries a signature"
    start = time.monotonic()
    # 2.5 TTLs: only renewals (each "extend to" now + ttl) keep it alive.
    wait_for(lambda: time.monotonic() > start + 2.5, what="2.5 TTLs to pass")
    lease.check()
    state = locks.describe(resource)
    assert state.held and state.token == lease.token
    assert state.holder.startswith(locks.holder + "/")
    assert lease.valid_until > time.monotonic()

    lease.release()
    assert not locks.describe(resource).held
    with pytest.raises(fencegate.LeaseLost) as error:
        lease.check()
    assert error.value.reason == "released"
    assert lease.lost and lost == [], "on_lost is not called on release"
    lease.release()  # idempotent


def test_try_lock_on_a_held_resource_is_not_acquired(locks, lockservice, resource):
    with locks.lock(resource, ttl=10) as held:
        with fencegate.LockClient(lockservice.address) as other:
            start = time.monotonic()
            with pytest.raises(fencegate.NotAcquired) as error:
                other.acquire(resource, ttl=10)  # wait=0: a try-lock
            assert time.monotonic() - start < 2.0, "a try-lock answers at once"
            assert error.value.holder_token == held.token
            assert error.value.retry_after > 0 and not error.value.lock_delay
        assert locks.describe(resource).token == held.token


def test_waiting_acquire_runs_out_of_patience(locks, lockservice, resource):
    with locks.lock(resource, ttl=10):
        with fencegate.LockClient(lockservice.address) as other:
            start = time.monotonic()
            with pytest.raises(fencegate.NotAcquired):
                other.acquire(resource, ttl=10, wait=timedelta(milliseconds=300))
            assert time.monotonic() - start >= 0.3
            assert locks.describe(resource).waiters == 0


def test_waiters_are_granted_in_arrival_order(locks, lockservice, resource):
    first = locks.acquire(resource, ttl=10)
    waiters = [fencegate.LockClient(lockservice.address) for _ in range(3)]
    granted: list[tuple[int, fencegate.Lease]] = []
    lock = threading.Lock()

    def wait_in_line(i: int) -> None:
        lease = waiters[i].acquire(resource, ttl=10, wait=20)
        with lock:
            granted.append((i, lease))

    threads = []
    for i in range(3):
        threads.append(threading.Thread(target=wait_in_line, args=(i,)))
        threads[-1].start()
        # The next one queues only once this one is parked: arrival order.
        wait_for(lambda: locks.describe(resource).waiters == i + 1, what=f"waiter {i}")
    first.release()
    for turn in range(3):
        wait_for(lambda: len(granted) == turn + 1, what=f"grant {turn}")
        i, lease = granted[turn]
        assert i == turn, f"FIFO: waiter {turn} must be granted next, not {i}"
        assert lease.token > first.token
        lease.release()
    for t in threads:
        t.join()
    tokens = [lease.token for _, lease in granted]
    assert tokens == sorted(tokens) and len(set(tokens)) == 3
    for w in waiters:
        w.close()


def test_two_threads_of_one_client_exclude_each_other(locks, resource):
    with locks.lock(resource, ttl=10):
        with pytest.raises(fencegate.NotAcquired):
            # Another thread would do the same: each acquire is its own holder.
            locks.acquire(resource, ttl=10)


def test_lock_context_manager_releases_on_exit_and_on_error(locks, resource):
    with locks.lock(resource, ttl=10) as lease:
        assert locks.describe(resource).token == lease.token
    assert not locks.describe(resource).held
    with pytest.raises(ZeroDivisionError):
        with locks.lock(resource, ttl=10) as lease:
            1 / 0
    assert not locks.describe(resource).held


def test_reentrant_acquire_shares_the_token_and_counts_holds(locks, resource):
    a = locks.acquire(resource, ttl=10, holder="me")
    b = locks.acquire(resource, ttl=10, holder="me")
    assert b.token == a.token and b.hold_count == 2
    b.release()
    assert locks.describe(resource).hold_count == 1
    a.release()
    assert not locks.describe(resource).held


def test_shared_leases_and_a_semaphore(locks, lockservice, resource):
    with fencegate.LockClient(lockservice.address) as other:
        r1 = locks.acquire(resource, ttl=10, mode="shared")
        r2 = other.acquire(resource, ttl=10, mode=fencegate.LeaseMode.SHARED)
        assert r1.token != r2.token and r1.mode == fencegate.LeaseMode.SHARED
        with pytest.raises(fencegate.NotAcquired):
            other.acquire(resource, ttl=10, holder="writer")
        r1.release()
        r2.release()

        sem = resource + "/sem"
        p1 = locks.acquire(sem, ttl=10, mode="permit", permits=2)
        p2 = other.acquire(sem, ttl=10, mode="permit", permits=2)
        with pytest.raises(fencegate.NotAcquired):
            locks.acquire(sem, ttl=10, mode="permit", permits=2, holder="third")
        with pytest.raises(fencegate.InvalidArgument) as error:
            locks.acquire(sem, ttl=10, mode="permit", permits=3, holder="fourth")
        assert error.value.field == "permits"
        assert locks.describe(sem).holders == 2
        p1.release()
        p2.release()


def test_acquire_many_grants_all_or_none(locks, lockservice, resource):
    names = [resource + "/a", resource + "/b"]
    with locks.acquire_many(names, ttl=10) as both:
        assert [lease.resource for lease in both] == names
        assert both[names[0]].token != both[names[1]].token
        assert all(locks.describe(n).held for n in names)
        with fencegate.LockClient(lockservice.address) as other:
            with pytest.raises(fencegate.NotAcquired) as error:
                other.acquire_many([resource + "/c", names[1]], ttl=10)
            assert error.value.resource == names[1]
            assert not locks.describe(resource + "/c").held, "nothing of the set was granted"
    assert not any(locks.describe(n).held for n in names)


@pytest.mark.parametrize("kwargs, field", [
    (dict(ttl=0.001), "ttl_ms"),       # below the service's --min_ttl (100 ms)
    (dict(ttl=-1), "ttl_ms"),
    (dict(wait=-1), "wait_ms"),
    (dict(holder="bad\x01holder"), "holder"),
    (dict(mode=7), "mode"),
    (dict(permits=2), "permits"),      # permits with an exclusive lease
])
def test_bad_input_raises_invalid_argument_naming_the_field(locks, resource, kwargs, field):
    with pytest.raises(fencegate.InvalidArgument) as error:
        locks.acquire(resource, **{"ttl": 10, **kwargs})
    assert error.value.field == field, error.value.message
    state = locks.describe(resource)
    assert not state.held and state.waiters == 0, "a refused acquire changes nothing"


def test_bad_names_are_refused_by_the_service(locks):
    with pytest.raises(fencegate.InvalidArgument) as error:
        locks.acquire("", ttl=10)
    assert error.value.field == "resource"
    with pytest.raises(fencegate.InvalidArgument) as error:
        locks.acquire("x" * 10_000, ttl=10)
    assert error.value.field == "resource"
    with pytest.raises(fencegate.InvalidArgument) as error:
        locks.acquire("lone \ud800 surrogate", ttl=10)  # not UTF-8 on the wire
    assert error.value.field == "resource"


def test_the_client_checks_only_types(locks):
    with pytest.raises(TypeError):
        locks.acquire(b"bytes-name", ttl=10)
    with pytest.raises(TypeError):
        locks.acquire("r", ttl="10")
    with pytest.raises(TypeError):
        locks.acquire("r", ttl=10, permits=True)


def test_release_of_a_token_that_holds_nothing_is_not_holder(locks, resource):
    lease = locks.acquire(resource, ttl=10)
    lease.release()
    with pytest.raises(fencegate.NotHolder) as error:
        locks.release(resource, lease.token, signature=lease.signature)
    assert isinstance(error.value, fencegate.LeaseLost) and error.value.current_token == 0


def test_a_closed_client_refuses_calls_at_once(lockservice, resource):
    client = fencegate.LockClient(lockservice.address)
    lease = client.acquire(resource, ttl=10)
    client.close()
    assert lease.lost, "close() released the lease"
    start = time.monotonic()
    with pytest.raises(fencegate.FencegateError) as error:
        client.acquire(resource, ttl=10)
    assert not isinstance(error.value, fencegate.Unavailable), "nothing to retry"
    assert time.monotonic() - start < 1.0
    with fencegate.LockClient(lockservice.address) as other:
        assert not other.describe(resource).held
