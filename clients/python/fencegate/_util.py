"""Helpers shared by the clients: argument conversion, channels, retries.

The client checks types only; values (ranges, lengths, UTF-8) are the
server's to check, so there is one source of truth (InvalidArgument names
the field). Internal.
"""

from __future__ import annotations

import math
import os
import random
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable, Optional, TypeVar, Union

import grpc

from fencegate.errors import DeadlineExceeded, FencegateError, Unavailable

Duration = Union[float, int, timedelta]
T = TypeVar("T")


def seconds(value: Duration, name: str) -> float:
    """A duration (float seconds or timedelta) as float seconds."""
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be seconds (int or float) or a timedelta, "
                        f"not {type(value).__name__}")
    return float(value)


def to_ms(value: Duration, name: str, *, ceil: bool = False) -> int:
    """A duration as whole milliseconds (rounded, or rounded up)."""
    s = seconds(value, name)
    if math.isnan(s) or math.isinf(s):
        # No such millisecond count: send one the server refuses by name.
        return -1
    ms = s * 1000.0
    return int(math.ceil(ms)) if ceil else int(round(ms))


def name_bytes(value: str, name: str) -> bytes:
    """A name (resource, holder, key) as UTF-8 bytes.

    Lone surrogates pass through (surrogatepass), so that a name that is
    not valid UTF-8 reaches the server, which refuses it naming the field.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value.encode("utf-8", "surrogatepass")


def value_bytes(value: Union[bytes, bytearray, memoryview], name: str) -> bytes:
    """A stored value: bytes-like only (encode text yourself)."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, not {type(value).__name__}")
    return bytes(value)


def granted_at(sent: float, response: Any) -> float:
    """When an AcquireResponse's grant began at the latest, on the clock
    ``sent`` (when its call was sent) is on: ``sent`` plus the time the
    service says the call waited in line (waited_ms). The lease lasts its
    ttl_ms from the grant, so counting from here never outlives the
    service's own count, however long the call waited."""
    return sent + response.waited_ms / 1000.0


def int_arg(value: int, name: str) -> int:
    """``value``, if it is an int (not a bool); TypeError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return value


def signature_message(signature: Any) -> Any:
    """The TokenSignature message of a lease's ``signature``; TypeError if
    it is not a fencegate.Signature."""
    from fencegate._proto import token_pb2
    from fencegate.lease import Signature
    if not isinstance(signature, Signature):
        raise TypeError(f"signature must be a fencegate.Signature, not "
                        f"{type(signature).__name__}")
    return token_pb2.TokenSignature(key_id=signature.key_id, mac=signature.mac)


def new_request_id() -> bytes:
    """A fresh idempotency key: 32 hex digits, as the C++ client's."""
    return os.urandom(16).hex().encode()


@dataclass(frozen=True)
class TLS:
    """TLS for a client's channel, as the C++ ClientTlsFiles.

    ``ca``: PEM of the CA that signed the server's certificate (TLS on).
    ``cert`` and ``key``: the client's certificate and key, PEM, for mutual
    TLS (the lock service then records the certificate's subject as the
    holder). Either bytes (the PEM) or a path to a file holding it.
    ``server_name``: the name to check the server's certificate against,
    when it is not the target's host.
    """

    ca: Union[bytes, str, None] = None
    cert: Union[bytes, str, None] = None
    key: Union[bytes, str, None] = None
    server_name: Optional[str] = None

    def credentials(self) -> grpc.ChannelCredentials:
        if (self.cert is None) != (self.key is None):
            raise ValueError("TLS: give both cert and key (mutual TLS), or neither")
        return grpc.ssl_channel_credentials(
            root_certificates=_pem(self.ca), private_key=_pem(self.key),
            certificate_chain=_pem(self.cert))


def _pem(value: Union[bytes, str, None]) -> Optional[bytes]:
    if value is None or isinstance(value, bytes):
        return value
    with open(value, "rb") as f:
        return f.read()


def make_channel(target: str, tls: Optional[TLS],
                 options: Optional[list] = None) -> grpc.Channel:
    """A channel to "host:port": plaintext, or TLS when ``tls`` is given.

    Create channels (and so clients) after fork(): gRPC's do not survive it.
    """
    if not isinstance(target, str):
        raise TypeError(f"target must be a str 'host:port', not {type(target).__name__}")
    options = list(options or [])
    if tls is None:
        return grpc.insecure_channel(target, options=options)
    if tls.server_name:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return grpc.secure_channel(target, tls.credentials(), options=options)


def _busy(channel: grpc.Channel) -> bool:
    """Whether grpc 1.51 still works for a call of ``channel``: its
    connectivity polling thread, or its call-event thread (while calls are
    managed). Closing or dropping a channel meanwhile can crash the process
    (that thread then reads freed memory), so channels are closed only when
    idle. Private attributes, read defensively: unknown means idle."""
    state = getattr(channel, "_connectivity_state", None)
    if state is not None and getattr(state, "polling", False):
        return True
    calls = getattr(channel, "_call_state", None)
    return calls is not None and getattr(calls, "managed_calls", 0) > 0


def close_channel(channel: grpc.Channel, wait: float = 1.0) -> bool:
    """Closes ``channel`` once it is idle (see _busy), waiting at most
    ``wait`` seconds; returns whether it closed."""
    give_up = time.monotonic() + wait
    while _busy(channel):
        if time.monotonic() >= give_up:
            _NEVER_DROPPED.append(channel)  # a leak rather than a crash
            return False
        time.sleep(0.01)
    channel.close()
    return True


_NEVER_DROPPED: list = []


class Connection:
    """A client's channel and stub, made afresh after a broken stream.

    grpc 1.51 in Python cannot reset a channel's reconnection backoff (the
    C++ client calls ResetConnectionBackoff): a channel whose calls failed
    while its server was down may wait many seconds to reconnect after the
    server is back. So after a stream broke the client takes a new channel
    (a distinct argument gives it subchannels of its own, without that
    backoff), at most one every ``min_interval`` seconds. Old channels are
    kept, and closed once idle, never while a call may use them.
    Thread-safe.
    """

    def __init__(self, target: str, tls: Optional[TLS], options: list,
                 make_stub: Callable[[grpc.Channel], Any], min_interval: float = 0.5) -> None:
        self._target = target
        self._tls = tls
        self._options = options
        self._make_stub = make_stub
        self._min_interval = min_interval
        self._lock = threading.Lock()
        self._generation = 0
        self._renewed_at = time.monotonic()
        self._retired: list[grpc.Channel] = []
        self._closed = False
        self.channel = make_channel(target, tls, options)
        self.stub = make_stub(self.channel)

    def renew(self) -> None:
        """Replaces the channel by a fresh one (unless one was made within
        ``min_interval``); closes the old ones that are idle."""
        with self._lock:
            if self._closed or time.monotonic() - self._renewed_at < self._min_interval:
                return
            self._renewed_at = time.monotonic()
            self._generation += 1
            self._retired.append(self.channel)
            self.channel = make_channel(
                self._target, self._tls,
                self._options + [("fencegate.channel_generation", self._generation)])
            self.stub = self._make_stub(self.channel)
            idle = [c for c in self._retired if not _busy(c)]
            self._retired = [c for c in self._retired if c not in idle]
        for channel in idle:
            close_channel(channel, wait=0)

    def close(self) -> None:
        """Closes every channel (each once idle, waiting a second at most)."""
        with self._lock:
            self._closed = True
            channels, self._retired = self._retired + [self.channel], []
        for channel in channels:
            close_channel(channel)


@dataclass(frozen=True)
class RetryPolicy:
    """How UNAVAILABLE is retried (as the C++ client's RetryPolicy).

    ``call_timeout``: a whole call's deadline, attempts and pauses included
    (enough to ride out a restart of a server). ``rpc_timeout``: one
    attempt's. ``max_attempts``: 0 = until the deadline; 1 = never retry.
    Pauses: jittered, from ``initial_backoff`` doubling to ``max_backoff``.
    """

    call_timeout: float = 15.0
    rpc_timeout: float = 5.0
    max_attempts: int = 0
    initial_backoff: float = 0.05
    max_backoff: float = 1.0


def retry_unavailable(policy: RetryPolicy, deadline: float,
                      attempt: Callable[[float], T],
                      retryable: Callable[[FencegateError], bool] = lambda e: True) -> T:
    """Runs attempt(deadline_of_attempt) until it returns, retrying
    Unavailable (when ``retryable`` agrees) with backoff until ``deadline``
    (time.monotonic()). Anything else is raised at once. The caller reuses
    its request id across attempts; that is what makes retries safe.
    """
    backoff = policy.initial_backoff
    attempts = 0
    while True:
        attempts += 1
        try:
            return attempt(deadline)
        except Unavailable as e:
            if isinstance(e, DeadlineExceeded) or not retryable(e):
                raise
            if policy.max_attempts and attempts >= policy.max_attempts:
                raise
            # No attempt starts without the time to make one: one begun at the
            # deadline could only end in DeadlineExceeded ("may have been
            # applied"), even for a call that was never sent.
            pause = backoff * random.uniform(0.5, 1.0)
            if deadline - time.monotonic() <= pause:
                e.message = f"{e.message} (gave up after {attempts} attempts)"
                e.args = (e.message,)
                raise
            time.sleep(pause)
            backoff = min(backoff * 2, policy.max_backoff)
