"""Lease loss and recovery against the real servers: the pushed loss, the
client's own clock, a paused holder's late write, a retried Acquire after
the lock service was killed mid-call, a stream that broke."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import fencegate
from harness import Proxy, wait_for, _die_with_parent

HERE = Path(__file__).resolve().parent


class LossRecorder:
    """An on_lost that notes when it ran and with what."""

    def __init__(self) -> None:
        self.fired = threading.Event()
        self.at = 0.0
        self.error: fencegate.LeaseLost | None = None
        self.calls = 0

    def __call__(self, error: fencegate.LeaseLost) -> None:
        self.at = time.monotonic()
        self.error = error
        self.calls += 1
        self.fired.set()


def test_a_release_from_elsewhere_reaches_on_lost_within_200ms(locks, lockservice, resource):
    lost = LossRecorder()
    # The next renewal is 20 s away: only the pushed LeaseLost can tell.
    lease = locks.acquire(resource, ttl=60, on_lost=lost)
    with fencegate.LockClient(lockservice.address) as other:
        assert other.release(resource, lease.token, signature=lease.signature) == 0
        decided = time.monotonic()  # the release's answer: the end is committed
        assert lost.fired.wait(5), "the pushed loss never reached on_lost"
    assert lost.at - decided < 0.2
    assert lost.error.reason == "released_elsewhere" and lost.calls == 1
    with pytest.raises(fencegate.LeaseLost):
        lease.check()
    assert lease.wait_lost(0)
    lease.release()  # nothing to release: the service said the token holds nothing


def test_a_lease_renews_on_the_next_stream_and_hears_pushes_there(lockservice, resource):
    proxy = Proxy(lambda: lockservice.port)
    client = fencegate.LockClient(proxy.address)
    try:
        lost = LossRecorder()
        lease = client.acquire(resource, ttl=60, on_lost=lost)
        granted_until = lease.valid_until
        proxy.cut()  # the Session stream breaks; the lease stays on the service
        with fencegate.LockClient(lockservice.address) as other:
            # The lease renews at once (not 20 s later) on a new stream, which
            # then listens to it.
            wait_for(lambda: lease.valid_until > granted_until, timeout=5,
                     what="the lease renewed after the stream broke")
            other.release(resource, lease.token, signature=lease.signature)
            decided = time.monotonic()
            assert lost.fired.wait(5), "the push on the new stream never reached on_lost"
        assert lost.at - decided < 0.2 and lost.error.reason == "released_elsewhere"
    finally:
        client.close()
        proxy.close()


def test_the_clients_own_clock_decides_when_the_service_is_unreachable(
        own_lockservice, gateway, resource):
    with fencegate.LockClient(own_lockservice.address) as client, \
            fencegate.GatewayClient(gateway.address) as gw:
        lost = LossRecorder()
        lease = client.acquire(resource, ttl=1.0, on_lost=lost)
        gw.put(lease, "k", b"first")
        own_lockservice.signal(signal.SIGSTOP)  # no renewal is answered any more
        try:
            assert lost.fired.wait(10), "the lapse never reached on_lost"
            assert lost.error.reason == "lapsed"
            # Not before the end of validity, and promptly after it.
            assert lease.valid_until <= lost.at < lease.valid_until + 0.2
        finally:
            own_lockservice.signal(signal.SIGCONT)
        with fencegate.LockClient(own_lockservice.address) as other:
            newer = other.acquire(resource, ttl=10, wait=10)  # once the service expired it
            assert newer.token > lease.token
            gw.put(newer, "k", b"newer")
            with pytest.raises(fencegate.StaleToken) as error:
                gw.put(lease, "k", b"late")
            assert error.value.current_token == newer.token
            assert gw.get(newer, "k").value == b"newer"
            newer.release()


def test_a_paused_worker_process_comes_back_and_its_late_write_is_refused(
        lockservice, gateway, locks, resource):
    stubs = [p for p in sys.path if Path(p, "fencegate", "v1").is_dir()][0]
    worker = subprocess.Popen(
        [sys.executable, str(HERE / "worker.py"), lockservice.address, gateway.address,
         resource, stubs],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=_die_with_parent)
    try:
        first = json.loads(_read_line(worker, 30))
        worker.send_signal(signal.SIGSTOP)  # a GC pause, past the TTL
        wait_for(lambda: not locks.describe(resource).held, timeout=10,
                 what="the service to expire the paused worker's lease")
        gw = fencegate.GatewayClient(gateway.address)
        with locks.lock(resource, ttl=10) as newer:
            gw.put(newer, "k", b"newer")
            worker.send_signal(signal.SIGCONT)
            worker.stdin.write("write\n")
            worker.stdin.flush()
            late = json.loads(_read_line(worker, 30))
            assert late["lost"] in ("lapsed", "expired"), late
            assert late["outcome"] == "StaleToken" and late["current_token"] == newer.token
            assert gw.get(newer, "k").value == b"newer", "no update lost"
            assert newer.token > first["token"]
        gw.close()
        assert worker.wait(30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


def test_a_retried_acquire_is_applied_once_after_the_service_was_killed_mid_call(
        own_lockservice, resource):
    proxy = Proxy(lambda: own_lockservice.port)
    client = fencegate.LockClient(proxy.address)
    try:
        client.describe(resource)  # the stream is up, through the proxy
        proxy.drop_answers()
        outcome: list = []

        def acquire() -> None:
            try:
                outcome.append(client.acquire(resource, ttl=30))
            except Exception as e:  # the test looks at it
                outcome.append(e)

        caller = threading.Thread(target=acquire)
        caller.start()
        with fencegate.LockClient(own_lockservice.address) as direct:
            wait_for(lambda: direct.describe(resource).held, what="the acquire committed")
        # Granted and durable, its answer lost: kill -9, restart on the same db.
        own_lockservice.kill9()
        proxy.cut()
        proxy.heal()
        own_lockservice.start()
        caller.join(30)
        lease = outcome[0]
        assert isinstance(lease, fencegate.Lease), lease
        with fencegate.LockClient(own_lockservice.address) as direct:
            state = direct.describe(resource)
            assert state.token == lease.token
            assert state.hold_count == 1, "the retry must not add a second hold"
            lease.release()
            assert not direct.describe(resource).held
    finally:
        client.close()
        proxy.close()


def _read_line(process: subprocess.Popen, timeout: float) -> str:
    """A line of the worker's stdout, or the test fails after ``timeout``."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()),
                              daemon=True)
    reader.start()
    reader.join(timeout)
    assert lines and lines[0], f"no line from the worker within {timeout} s"
    return lines[0]


def test_renew_now_and_wait_lost(locks, lockservice, resource):
    lease = locks.acquire(resource, ttl=30)
    before = lease.valid_until
    lease.renew()
    assert lease.valid_until > before
    assert not lease.wait_lost(0.05), "a live lease is not lost"
    with fencegate.LockClient(lockservice.address) as other:
        other.release(resource, lease.token, signature=lease.signature)
    assert lease.wait_lost(5)
    with pytest.raises(fencegate.LeaseLost):
        lease.renew()


def test_a_multi_lease_tells_its_on_lost_once(locks, lockservice, resource):
    lost = LossRecorder()
    names = [resource + "/a", resource + "/b"]
    both = locks.acquire_many(names, ttl=60, on_lost=lost)
    with fencegate.LockClient(lockservice.address) as other:
        for lease in both:
            other.release(lease.resource, lease.token, signature=lease.signature)
        assert lost.fired.wait(5)
        wait_for(lambda: all(lease.lost for lease in both), what="both leases lost")
    assert lost.calls == 1
    with pytest.raises(fencegate.LeaseLost):
        both.check()
    both.release()  # nothing left to release
