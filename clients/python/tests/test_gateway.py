"""GatewayClient against the real gateway (and lock service): fenced writes
and reads with a Lease's token and signature, stale tokens, compare-and-set,
multi-writes, pipelining, bad input, lost answers."""

from __future__ import annotations

import socket
import threading
import time

import pytest

import fencegate
from harness import Proxy, wait_for


@pytest.fixture(params=["stream", "unary"])
def gws(gateway, request):
    """The gateway client over each transport."""
    client = fencegate.GatewayClient(gateway.address, transport=request.param)
    yield client
    client.close()


def test_fenced_put_get_delete(locks, gws, resource):
    with locks.lock(resource, ttl=10) as lease:
        written = gws.put(lease, "k", b"v1")
        assert written.max_token == lease.token and written.version > 0
        got = gws.get(lease, "k")
        assert (got.found, got.value, got.version) == (True, b"v1", written.version)
        assert gws.get_unfenced(resource, "k").value == b"v1"
        deleted = gws.delete(lease, "k")
        assert deleted.version > written.version
        assert not gws.get(lease, "k").found
        assert gws.describe(resource).max_token == lease.token


def test_a_newer_holder_shuts_out_the_older_token(locks, gws, resource):
    old = locks.acquire(resource, ttl=10)
    gws.put(old, "k", b"old")
    old.release()
    with locks.lock(resource, ttl=10) as new:
        assert new.token > old.token
        assert gws.fence(new) == new.token
        for late_call in (lambda: gws.put(old, "k", b"late"),
                          lambda: gws.get(old, "k"),
                          lambda: gws.fence(old),
                          lambda: gws.multi_write(old, [fencegate.Mutation("k", b"late")])):
            with pytest.raises(fencegate.StaleToken) as error:
                late_call()
            assert error.value.current_token == new.token
        assert gws.get(new, "k").value == b"old", "a refused write changes nothing"


def test_compare_and_set(locks, gws, resource):
    with locks.lock(resource, ttl=10) as lease:
        first = gws.compare_and_set(lease, "k", b"1", expected_version=0)
        with pytest.raises(fencegate.VersionMismatch) as error:
            gws.compare_and_set(lease, "k", b"2", expected_version=0)
        assert error.value.current_version == first.version
        second = gws.compare_and_set(lease, "k", b"2", expected_version=first.version)
        assert gws.get(lease, "k") == fencegate.ReadResult(True, b"2", second.version,
                                                           lease.token)


def test_multi_write_is_all_or_nothing(locks, gws, resource):
    with locks.lock(resource, ttl=10) as lease:
        result = gws.multi_write(lease, [fencegate.Mutation("a", b"1"),
                                         fencegate.Mutation("b", b"2")])
        assert len(result.versions) == 2 and result.versions[0] == result.versions[1]
        with pytest.raises(fencegate.VersionMismatch):
            gws.multi_write(lease, [fencegate.Mutation("a", b"x"),
                                    fencegate.Mutation("b", None, expected_version=0)])
        assert gws.get(lease, "a").value == b"1" and gws.get(lease, "b").found
        page = gws.list(resource)
        assert [k.key for k in page.keys] == ["a", "b"] and page.next_page_token == ""


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_a_stale_token_is_raised_at_once_never_retried(locks, gateway, resource, transport):
    # StaleToken is final (docs/errors.md): a client that took it for a
    # transient error would retry until the call's deadline (2 s here) and
    # raise Unavailable, and the writer would not learn that its lease is gone.
    retry = fencegate.RetryPolicy(call_timeout=2.0, rpc_timeout=2.0)
    with fencegate.GatewayClient(gateway.address, transport=transport, retry=retry) as gw:
        old = locks.acquire(resource, ttl=10)
        old.release()
        with locks.lock(resource, ttl=10) as new:
            gw.fence(new)
            for late_call in (lambda: gw.put(old, "k", b"late"),
                              lambda: gw.get(old, "k")):
                start = time.monotonic()
                error = _call(late_call)
                assert isinstance(error, fencegate.StaleToken), (
                    f"a stale token must raise StaleToken, not {error!r}")
                assert time.monotonic() - start < 1.5, "raised at once, not retried"
                assert error.current_token == new.token


def test_a_token_without_its_signature_is_refused(locks, gws, resource):
    with locks.lock(resource, ttl=10) as lease:
        forged = fencegate.Fencing(resource, lease.token)  # no signature
        with pytest.raises(fencegate.PermissionDenied) as error:
            gws.put(forged, "k", b"v")
        assert error.value.bad_signature
        assert gws.describe(resource).max_token == 0, "nothing changed, not even the fence"


def test_shared_and_permit_tokens_do_not_write(locks, gws, resource):
    with locks.lock(resource, ttl=10, mode="shared") as reader:
        assert not gws.get(reader, "k").found
        with pytest.raises(fencegate.InvalidArgument) as error:
            gws.put(reader, "k", b"v")
        assert error.value.field == "mode"


@pytest.mark.parametrize("key, value, field", [
    ("", b"v", "mutation.key"),
    ("k", b"x" * (8 << 20), None),  # over the gateway's limits: refused, named or not
], ids=["empty-key", "huge-value"])
def test_bad_writes_change_nothing(locks, gws, resource, key, value, field):
    with locks.lock(resource, ttl=10) as lease:
        with pytest.raises((fencegate.InvalidArgument, fencegate.ResourceExhausted)) as error:
            gws.put(lease, key, value)
        if field is not None:
            assert error.value.field == field, error.value.message
        assert gws.describe(resource) == fencegate.ResourceSummary(0, 0, 0)


def test_values_are_bytes(locks, gw, resource):
    with locks.lock(resource, ttl=10) as lease:
        with pytest.raises(TypeError):
            gw.put(lease, "k", "text")


def test_pipelined_puts_take_effect_in_order(locks, gw, resource):
    with locks.lock(resource, ttl=10) as lease:
        futures = [gw.put_async(lease, "k", str(i).encode()) for i in range(50)]
        versions = [f.result(timeout=10).version for f in futures]
        assert versions == sorted(versions) and len(set(versions)) == 50
        assert gw.get(lease, "k").value == b"49"


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_a_write_whose_answer_was_lost_says_it_may_have_been_applied(
        locks, gateway, resource, transport):
    proxy = Proxy(lambda: gateway.port)
    client = fencegate.GatewayClient(proxy.address, transport=transport)
    direct = fencegate.GatewayClient(gateway.address)
    try:
        with locks.lock(resource, ttl=10) as lease:
            client.fence(lease)  # connected through the proxy
            proxy.drop_answers()
            outcome: list = []
            writer = threading.Thread(
                target=lambda: outcome.append(_call(lambda: client.put(lease, "k", b"v"))))
            writer.start()
            wait_for(lambda: direct.describe(resource).key_count == 1, what="the put applied")
            proxy.cut()
            writer.join(20)
            assert len(outcome) == 1
            assert isinstance(outcome[0], fencegate.Unavailable), outcome[0]
            assert outcome[0].maybe_applied
            proxy.heal()
            got = direct.get(lease, "k")
            assert got.value == b"v"
            # Not sent again: the one write is the resource's only revision.
            assert direct.put(lease, "k2", b"x").version == got.version + 1
    finally:
        client.close()
        direct.close()
        proxy.close()


def _call(fn):
    try:
        return fn()
    except Exception as e:  # the test looks at it
        return e


def test_a_closed_client_refuses_calls_at_once(gateway, resource):
    client = fencegate.GatewayClient(gateway.address)
    client.get_unfenced(resource, "k")
    client.close()
    with pytest.raises(fencegate.FencegateError) as error:
        client.get_unfenced(resource, "k")
    assert not isinstance(error.value, fencegate.Unavailable), "nothing to retry"


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_an_unreachable_gateway_raises_unavailable_saying_nothing_was_sent(locks, resource,
                                                                          transport):
    """No server behind the address: the call is never sent, so it raises
    Unavailable(maybe_applied=False) once the call's deadline has passed, never
    grpc's own timeout exception."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    address = f"127.0.0.1:{closed.getsockname()[1]}"
    client = fencegate.GatewayClient(
        address, transport=transport,
        retry=fencegate.RetryPolicy(call_timeout=1.0, rpc_timeout=0.3))
    try:
        with locks.lock(resource, ttl=10) as lease:
            with pytest.raises(fencegate.Unavailable) as error:
                client.put(lease, "k", b"v")
            assert not error.value.maybe_applied
    finally:
        client.close()
        closed.close()


def test_writes_after_the_gateway_restarted_are_sent_once_it_is_back(locks, workdir, resource):
    from conftest import GATEWAY_BIN
    from harness import Server
    own = Server(GATEWAY_BIN, workdir, "gateway-restarted",
                 f"--signing_keys={workdir / 'keys.txt'}").start()
    proxy = Proxy(lambda: own.port)
    client = fencegate.GatewayClient(proxy.address)
    try:
        with locks.lock(resource, ttl=30) as lease:
            first = client.put(lease, "k", b"1")
            own.kill9()
            proxy.cut()  # the stream breaks
            _wait_stream_ended(client)
            own.start()  # on the same database
            # Never sent while the gateway was down: sent once it is back.
            second = client.put(lease, "k", b"2")
            assert second.version == first.version + 1
            assert client.get(lease, "k").value == b"2"
    finally:
        client.close()
        proxy.close()
        own.stop()


def test_a_write_made_while_the_gateway_is_down_is_sent_once_it_is_back(locks, workdir,
                                                                         resource):
    from conftest import GATEWAY_BIN
    from harness import Server
    own = Server(GATEWAY_BIN, workdir, "gateway-down",
                 f"--signing_keys={workdir / 'keys.txt'}").start()
    proxy = Proxy(lambda: own.port)
    client = fencegate.GatewayClient(proxy.address)
    try:
        with locks.lock(resource, ttl=30) as lease:
            first = client.put(lease, "k", b"1")
            own.kill9()
            proxy.cut()
            _wait_stream_ended(client)
            outcome: list = []
            writer = threading.Thread(
                target=lambda: outcome.append(_call(lambda: client.put(lease, "k", b"2"))))
            writer.start()
            wait_for(lambda: proxy.refused >= 3, what="the write to try while the gateway is down")
            started = time.monotonic()
            own.start()  # on the same database
            writer.join(20)
            assert isinstance(outcome[0], fencegate.WriteResult), outcome[0]
            assert outcome[0].version == first.version + 1, "sent once"
            assert time.monotonic() - started < 3.0, "sent soon after the gateway was back"
    finally:
        client.close()
        proxy.close()
        own.stop()


def _wait_stream_ended(client: fencegate.GatewayClient) -> None:
    """Waits until the client has seen its Session stream end. A put sent
    before that goes out on the dead stream, and its honest answer is
    Unavailable(maybe_applied=True), never retried: these tests are about
    writes made once the client knows the gateway is gone."""
    wait_for(lambda: not client._session.is_open(),  # pylint: disable=protected-access
             what="the client to see its Session stream end")
