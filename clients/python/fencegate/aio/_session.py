"""AioSession: a server's Session stream on grpc.aio, and the retry loop.

The asyncio twin of fencegate._session.SessionStream: many calls in flight
on one bidirectional stream, each with a request_id chosen here and one
result back; a call's own error fails that call alone; when the stream
ends, the calls still waiting fail with ``Unavailable(maybe_applied=True)``
and the next call opens a new stream. After a stream broke, the next one
goes on a fresh channel (as fencegate._util.Connection, for the same
reason: grpc cannot reset its reconnection backoff); old channels are
closed with the session.

Calls made while a message is being written wait in an outbox and go out
together in the next message (a message holds many calls: the protocol's
``repeated calls``), up to MAX_CALLS_PER_MESSAGE and about
MAX_BYTES_PER_MESSAGE. Each grpc.aio write costs about as much client CPU
as a whole round trip of an empty message, so under concurrency the cost
of the stream is shared by the calls of a message rather than paid by each.

For one event loop's tasks only (not thread-safe). Internal.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from typing import Any, Awaitable, Callable, Optional

import grpc
import grpc.aio

from fencegate._util import TLS, RetryPolicy
from fencegate.errors import (DeadlineExceeded, FencegateError, Unavailable, from_rpc_error,
                              from_rpc_status)

# Bounds of one message's calls: well under the servers' defaults (256
# calls, --max_stream_in_flight; 4 MiB, gRPC's receive limit of the lock
# service). A single call larger than the byte bound goes alone.
MAX_CALLS_PER_MESSAGE = 64
MAX_BYTES_PER_MESSAGE = 1 << 20

CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


class _Stream:
    """One Session stream: the grpc.aio call, its calls waiting for their
    answers (by request id), and its outbox of calls not yet written, each
    with its future; ``writing`` while a writer task drains the outbox."""

    __slots__ = ("call", "pending", "outbox", "writing")

    def __init__(self, call: Any) -> None:
        self.call = call
        self.pending: dict[int, asyncio.Future] = {}
        self.outbox: list[tuple[Any, asyncio.Future]] = []
        self.writing = False


class AioSession:
    """The channel, the stub and the Session stream of one asyncio client.

    ``stub_class`` is the generated stub; ``make_request`` wraps a list of
    calls in the stream's request message; ``name`` names the stream in
    errors. ``on_message(response)`` sees every message after its answers
    were delivered; ``on_end()`` hears that the current stream ended.
    ``connect_first``: before a stream is opened, wait for a connection, so
    that a call that could not be sent fails with
    ``Unavailable(maybe_applied=False)`` (and may be retried safely).
    """

    def __init__(self, target: str, tls: Optional[TLS], stub_class: Callable[[Any], Any],
                 make_request: Callable[[list], Any], name: str, *, max_in_flight: int = 256,
                 on_message: Optional[Callable[[Any], None]] = None,
                 on_end: Optional[Callable[[], None]] = None,
                 answered_unavailable_maybe_applied: bool = False,
                 connect_first: bool = False) -> None:
        self._target, self._tls = target, tls
        self._stub_class, self._make_request, self._name = stub_class, make_request, name
        self._on_message, self._on_end = on_message, on_end
        self._answered_maybe_applied = answered_unavailable_maybe_applied
        self._connect_first = connect_first
        self._generation = 0
        self.channel = self._new_channel()
        self.stub = stub_class(self.channel)
        self._retired: list = []  # old channels, closed with the session
        self._places = asyncio.Semaphore(max(1, max_in_flight))
        self._ids = itertools.count(1)
        self._connect_lock = asyncio.Lock()
        self._connecting = 0  # calls waiting on _connect_lock
        self._stream: Optional[_Stream] = None
        self._broken = False
        self._closed = False
        self._tasks: set[asyncio.Task] = set()

    def is_open(self) -> bool:
        return self._stream is not None and not self._stream.call.done()

    def renew_channel(self) -> None:
        """Takes a fresh channel (after a failure: no grpc backoff)."""
        self._retired.append(self.channel)
        self._generation += 1
        self.channel = self._new_channel()
        self.stub = self._stub_class(self.channel)

    async def call(self, call: Any, timeout: float) -> Any:
        """One call on the stream, at most ``timeout`` seconds: its result
        message, or its error (FencegateError). Calls are sent in the order
        they were made."""
        if self._closed:  # not Unavailable: nothing to retry
            raise FencegateError(f"{self._name}: the client is closed")
        give_up = time.monotonic() + max(timeout, 0.0)
        async with self._places:
            # Waiting for a connection, calls queue on a lock (FIFO), and
            # while any does, so do later ones: calls go out as made.
            if self._connecting or (self._connect_first and not self.is_open()):
                self._connecting += 1
                try:
                    async with self._connect_lock:
                        if self._connect_first and not self.is_open():
                            await self.wait_ready(give_up - time.monotonic())
                        future = self._enqueue(call)
                finally:
                    self._connecting -= 1
            else:
                future = self._enqueue(call)
            try:
                async with asyncio.timeout(max(0.0, give_up - time.monotonic())):
                    return await future
            except TimeoutError:
                # A call still in the outbox is not sent now (_write skips
                # it); one already written may be applied.
                raise DeadlineExceeded(f"no answer on {self._name} within {timeout:.3f} s; "
                                       "the call may still be applied") from None

    async def wait_ready(self, timeout: float) -> None:
        """Waits for the channel to connect; Unavailable(maybe_applied=False)
        if it does not within ``timeout``."""
        if self._closed:
            raise FencegateError(f"{self._name}: the client is closed")
        try:
            await asyncio.wait_for(self.channel.channel_ready(), max(0.0, timeout))
        except asyncio.TimeoutError:
            raise Unavailable(f"could not connect for {self._name}; the call was not sent",
                              maybe_applied=False) from None

    async def close(self) -> None:
        """Ends the stream and closes the channels. Idempotent."""
        self._closed = True
        if self._stream is not None:
            self._stream.call.cancel()
        channels, self._retired = self._retired + [self.channel], []
        for channel in channels:
            await channel.close()

    def _new_channel(self):
        # A distinct argument per channel gives it subchannels of its own.
        options = CHANNEL_OPTIONS + [("fencegate.channel_generation", self._generation)]
        if self._tls is None:
            return grpc.aio.insecure_channel(self._target, options=options)
        if self._tls.server_name:
            options.append(("grpc.ssl_target_name_override", self._tls.server_name))
        return grpc.aio.secure_channel(self._target, self._tls.credentials(), options=options)

    def _track(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)  # referenced until done
        task.add_done_callback(self._tasks.discard)

    def _enqueue(self, call: Any) -> asyncio.Future:
        """Puts ``call`` in the current stream's outbox (opening a stream if
        there is none) under the next request id; the future of its result."""
        stream = self._open()
        future = asyncio.get_running_loop().create_future()
        call.request_id = next(self._ids)
        stream.pending[call.request_id] = future
        stream.outbox.append((call, future))
        if not stream.writing:
            stream.writing = True
            self._track(self._write(stream))
        return future

    def _open(self) -> _Stream:
        if self.is_open():
            return self._stream
        if self._broken:
            self.renew_channel()
            self._broken = False
        self._stream = _Stream(self.stub.Session())
        self._track(self._read(self._stream))
        return self._stream

    async def _write(self, stream: _Stream) -> None:
        """Drains the outbox, many calls per message, until it is empty."""
        try:
            while stream.outbox:
                batch = _take_batch(stream.outbox)
                # A call whose caller gave up (timeout, cancelled) before it
                # was sent is not sent.
                calls = [call for call, future in batch if not future.done()]
                if not calls:
                    continue
                # A message that cannot be made fails its calls, not the writer
                # (whose death would leave every later call waiting).
                try:
                    request = self._make_request(calls)
                except Exception as e:  # noqa: BLE001 - handed to each caller
                    for call, future in batch:
                        stream.pending.pop(call.request_id, None)
                        if not future.done():
                            future.set_exception(e)
                    continue
                try:
                    await stream.call.write(request)
                except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
                    if self._stream is stream:
                        self._broken = True
                    failed, stream.outbox = batch + stream.outbox, []
                    for call, future in failed:
                        stream.pending.pop(call.request_id, None)
                        if not future.done():
                            future.set_exception(Unavailable(
                                f"{self._name} ended while the call was sent; it may or may "
                                "not have been applied", maybe_applied=True))
                    return
        finally:
            stream.writing = False

    async def _read(self, stream: _Stream) -> None:
        why = "it ended"
        pending = stream.pending
        try:
            async for response in stream.call:
                for result in response.results:
                    future = pending.pop(result.request_id, None)
                    if future is None or future.done():
                        continue
                    if result.WhichOneof("result") == "error":
                        future.set_exception(from_rpc_status(
                            result.error, maybe_applied=self._answered_maybe_applied))
                    else:
                        future.set_result(result)
                if self._on_message is not None:
                    self._on_message(response)
        except grpc.aio.AioRpcError as e:
            why = f"it ended with {e.code().name}: {e.details()}"
        except asyncio.CancelledError:
            why = "the client closed it"
        finally:
            current = self._stream is stream
            if current:
                self._broken = why != "it ended"
            for future in pending.values():
                if not future.done():
                    future.set_exception(Unavailable(
                        f"{self._name}: {why} before the call's answer came; the call may or "
                        "may not have been applied", maybe_applied=True))
            pending.clear()
            if current and self._on_end is not None:
                self._on_end()


def _take_batch(outbox: list) -> list:
    """Takes the calls of the next message from the front of ``outbox``: at
    most MAX_CALLS_PER_MESSAGE, and no more than MAX_BYTES_PER_MESSAGE
    unless the first alone is larger."""
    count, size = 0, 0
    for call, _ in outbox:
        if count == MAX_CALLS_PER_MESSAGE:
            break
        size += call.ByteSize()
        if count > 0 and size > MAX_BYTES_PER_MESSAGE:
            break
        count += 1
    batch = outbox[:count]
    del outbox[:count]
    return batch


async def retrying(policy: RetryPolicy, deadline: float,
                   attempt: Callable[[float], Awaitable[Any]],
                   retryable: Callable[[FencegateError], bool] = lambda e: True) -> Any:
    """As fencegate._util.retry_unavailable, for coroutines: Unavailable is
    retried (when ``retryable`` agrees) with jittered backoff until
    ``deadline`` (time.monotonic()); DeadlineExceeded and the rest are not."""
    backoff, attempts = policy.initial_backoff, 0
    while True:
        attempts += 1
        try:
            return await attempt(deadline)
        except Unavailable as e:
            # As in retry_unavailable: no attempt starts without the time to
            # make one.
            pause = backoff * random.uniform(0.5, 1.0)
            if (isinstance(e, DeadlineExceeded) or not retryable(e) or
                    deadline - time.monotonic() <= pause or
                    (policy.max_attempts and attempts >= policy.max_attempts)):
                raise
            await asyncio.sleep(pause)
            backoff = min(backoff * 2, policy.max_backoff)


def unary_error(error: grpc.aio.AioRpcError, *, maybe_applied: bool) -> FencegateError:
    """The exception for a failed unary grpc.aio call."""
    return from_rpc_error(error, maybe_applied=maybe_applied)
