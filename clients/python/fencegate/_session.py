"""SessionStream: the client's side of a server's Session stream.

One bidirectional stream, shared by a client's threads, carries many calls
at once; each call gets a ``request_id`` chosen here and one result back,
matched by that id (answers may come out of order). It serves the lock
service's stream (lock.proto, which also pushes LeaseLost: ``on_message``)
and the gateway's (gateway.proto). docs/semantics.md and docs/gateway.md,
"The session stream".

The stream is opened by the first call, and again by the first call after
it ended. When it ends (the server restarted, the connection broke), every
call still waiting fails with ``Unavailable(maybe_applied=True)``: the
server may have read and applied it. A call's own error (stale token, lost
lease, invalid field) fails that call alone, as its unary call would; the
stream stays open. An UNAVAILABLE the server answers for one call means
that call was not applied (``answered_unavailable_maybe_applied`` says
otherwise for a server where that is not certain).

Bounds: at most ``max_in_flight`` calls wait for answers; one more waits for
a place (until its deadline). Keep it at or below the server's
--max_stream_in_flight (256 by default).

Thread safety: thread-safe. Futures are completed, and ``on_message`` and
``on_end`` run, on the stream's reader thread: they must be quick and must
not wait for another call of this session. Internal.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Optional

import grpc

from fencegate.errors import DeadlineExceeded, FencegateError, Unavailable, from_rpc_status


class _Stream:
    """One gRPC stream: its call, its outgoing queue, its waiting calls."""

    def __init__(self) -> None:
        self.outgoing: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self.waiting: dict[int, Future] = {}
        self.ended = False
        self.call: Any = None
        self.reader: Optional[threading.Thread] = None

    def requests(self):
        while True:
            message = self.outgoing.get()
            if message is None:
                return
            yield message


class SessionStream:
    """Many calls in flight on one stream, each answered by its id.

    ``method()`` returns the current stub's Session multicallable;
    ``make_request`` wraps a list of calls in the stream's request message;
    ``name`` names the stream in errors ("the lock service's Session
    stream"); ``reconnect()`` is called before a stream is opened after one
    broke (Connection.renew).
    """

    def __init__(self, method: Callable[[], Callable[..., Any]],
                 make_request: Callable[[list], Any], name: str, *,
                 reconnect: Optional[Callable[[], None]] = None, max_in_flight: int = 256,
                 on_message: Optional[Callable[[Any], None]] = None,
                 on_end: Optional[Callable[[], None]] = None,
                 answered_unavailable_maybe_applied: bool = False) -> None:
        self._method = method
        self._reconnect = reconnect
        self._broken = False  # the last stream ended with an error
        self._make_request = make_request
        self._name = name
        self._max_in_flight = max(1, max_in_flight)
        self._on_message = on_message
        self._on_end = on_end
        self._answered_maybe_applied = answered_unavailable_maybe_applied
        self._lock = threading.Condition()
        self._stream: Optional[_Stream] = None
        self._in_flight = 0
        self._next_id = 1
        self._closing = False

    def is_open(self) -> bool:
        """Whether a stream is open now (a call would not open one)."""
        with self._lock:
            return self._stream is not None and not self._stream.ended

    def send(self, call: Any, deadline: float) -> Future:
        """Sends ``call`` (its request_id is set here); returns a Future of
        its result message. The future fails with the call's own error
        (FencegateError), ``Unavailable(maybe_applied=True)`` if the stream
        ended first, DeadlineExceeded when no place in flight freed up by
        ``deadline`` (time.monotonic()), or a FencegateError once close()
        was called.
        """
        future: Future = Future()
        with self._lock:
            while not self._closing and self._in_flight >= self._max_in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    future.set_exception(DeadlineExceeded(
                        f"no place on {self._name} before the call's deadline "
                        f"({self._max_in_flight} calls in flight)"))
                    return future
                self._lock.wait(left)
            if self._closing:  # not Unavailable: nothing to retry
                future.set_exception(FencegateError(f"{self._name}: the client is closed"))
                return future
            stream = self._open_locked()
            request_id = self._next_id
            self._next_id += 1
            call.request_id = request_id
            stream.waiting[request_id] = future
            self._in_flight += 1
            # Under the lock, so that calls go out in the order of their ids.
            stream.outgoing.put(self._make_request([call]))
        return future

    def close(self) -> None:
        """Ends the stream; calls still waiting get Unavailable. Idempotent."""
        with self._lock:
            self._closing = True
            stream = self._stream
            self._lock.notify_all()
        if stream is not None and stream.call is not None:
            stream.call.cancel()
            if stream.reader is not None and stream.reader is not threading.current_thread():
                stream.reader.join()

    def _open_locked(self) -> _Stream:
        if self._stream is not None and not self._stream.ended:
            return self._stream
        if self._broken and self._reconnect is not None:
            self._reconnect()
        self._broken = False
        stream = _Stream()
        stream.call = self._method()(stream.requests())
        stream.reader = threading.Thread(target=self._read, args=(stream,),
                                         name=f"fencegate {self._name} reader", daemon=True)
        self._stream = stream
        stream.reader.start()
        return stream

    def _take(self, stream: _Stream, request_id: int) -> Optional[Future]:
        with self._lock:
            future = stream.waiting.pop(request_id, None)
            if future is not None:
                self._in_flight -= 1
                self._lock.notify()
            return future

    def _read(self, stream: _Stream) -> None:
        why = "it ended"
        try:
            for response in stream.call:
                for result in response.results:
                    future = self._take(stream, result.request_id)
                    if future is None:
                        continue
                    if result.WhichOneof("result") == "error":
                        future.set_exception(from_rpc_status(
                            result.error, maybe_applied=self._answered_maybe_applied))
                    else:
                        future.set_result(result)
                if self._on_message is not None:
                    self._on_message(response)
        except grpc.RpcError as e:  # the stream's call: code() and details()
            why = f"it ended with {e.code().name}: {e.details()}"
        finally:
            with self._lock:
                stream.ended = True
                self._broken = why != "it ended"
                waiting = list(stream.waiting.values())
                stream.waiting.clear()
                self._in_flight -= len(waiting)
                self._lock.notify_all()
            stream.outgoing.put(None)  # ends the request iterator
            for future in waiting:
                future.set_exception(Unavailable(
                    f"{self._name}: {why} before the call's answer came; the call may or "
                    "may not have been applied", maybe_applied=True))
            if self._on_end is not None:
                self._on_end()
