"""The renewal scheduler: one thread per LockClient serves all its leases.

It renews each live lease when ``ttl * renew_fraction`` has passed since its
last confirmed renewal, without waiting for the answer (the renewal goes on
the Session stream; its answer comes back on the stream's reader thread),
so one slow renewal holds up no other lease. It also decides losses: a
pushed LeaseLost or a refused renewal (heard), or a lapse of validity on the
client's clock; and it runs ``on_lost`` callbacks, outside its lock.

Thread safety: ``lock`` guards this object and the mutable state of every
Lease of the client. Internal.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import TYPE_CHECKING, Optional

from fencegate.errors import FencegateError, LeaseLost, NotHolder
from fencegate.lease import Lease, OnLost, Signature

if TYPE_CHECKING:
    from fencegate.lock_client import LockClient

_log = logging.getLogger("fencegate")
_RECENT_ENDS = 4096  # pushed ends kept for leases not registered yet


class Renewer:
    def __init__(self, client: "LockClient", rpc_timeout: float) -> None:
        self.lock = threading.Condition()
        self._client = client
        self._rpc_timeout = rpc_timeout
        self._leases: set[Lease] = set()
        self._by_token: dict[tuple[str, int], set[Lease]] = {}
        # Ends pushed for (resource, token): a push may come between the
        # acquire's answer and the Lease's registration.
        self._recent_ends: "collections.OrderedDict[tuple[str, int], LeaseLost]" = (
            collections.OrderedDict())
        self._thread: Optional[threading.Thread] = None
        self._stopping = False

    def add(self, lease: Lease) -> None:
        """Starts renewing ``lease`` (and listening for its pushed end)."""
        with self.lock:
            key = (lease.resource, lease.token)
            self._leases.add(lease)
            self._by_token.setdefault(key, set()).add(lease)
            if key in self._recent_ends:
                lease._heard = self._recent_ends[key]
            if self._thread is None and not self._stopping:
                self._thread = threading.Thread(target=self._run, name="fencegate renewer",
                                                daemon=True)
                self._thread.start()
            self.lock.notify_all()

    def leases(self) -> list[Lease]:
        with self.lock:
            return list(self._leases)

    def forget_locked(self, lease: Lease) -> None:
        """Stops renewing and listening (lost or released)."""
        self._leases.discard(lease)
        key = (lease.resource, lease.token)
        listeners = self._by_token.get(key)
        if listeners is not None:
            listeners.discard(lease)
            if not listeners:
                del self._by_token[key]

    def heard(self, lease: Lease, why: LeaseLost) -> None:
        """The service ended the lease (a refused renewal): lost at once."""
        with self.lock:
            if lease._heard is None:
                lease._heard = why
            self.lock.notify_all()

    def pushed(self, resource: str, token: int, reason: str) -> None:
        """A LeaseLost pushed on the Session stream (reader thread)."""
        how = ("expired on the lock service: its TTL ran out before a renewal reached it"
               if reason == "expired" else "was released by a call from elsewhere")
        why = LeaseLost(
            f"lease on '{resource}' with token {token} {how} (pushed on the lock service's "
            "Session stream). Stop writing and acquire the lock again", reason=reason)
        with self.lock:
            key = (resource, token)
            self._recent_ends[key] = why
            while len(self._recent_ends) > _RECENT_ENDS:
                self._recent_ends.popitem(last=False)
            self._tell_locked(key, why)

    def ended_here(self, resource: str, token: int, why: LeaseLost) -> None:
        """The service said (resource, token) holds nothing any more, in an
        answer to this client (a Resign: answered, not pushed; a refused
        Proclaim): every lease of that token still listening is lost."""
        with self.lock:
            self._tell_locked((resource, token), why)

    def _tell_locked(self, key: tuple[str, int], why: LeaseLost) -> None:
        for lease in self._by_token.get(key, ()):
            if lease._heard is None:
                lease._heard = why
        self.lock.notify_all()

    def stream_ended(self) -> None:
        """The Session stream ended: renew every lease now, which opens the
        next stream and makes it listen to them."""
        with self.lock:
            now = time.monotonic()
            for lease in self._leases:
                # Not a lease whose renewal just failed: it retries on its
                # own schedule (renewing at once would loop while the
                # service is down, each new stream failing at once).
                if lease._renewal is None and not lease._renewal_failed:
                    lease._next_renew = min(lease._next_renew, now)
            self.lock.notify_all()

    def renewed(self, lease: Lease, sent: float, response, error: Optional[Exception]) -> None:
        """A renewal sent at ``sent`` was answered (response) or failed."""
        with self.lock:
            if lease._renewal == sent:
                lease._renewal = None
            lease._renewal_failed = error is not None and not isinstance(error, NotHolder)
            if error is None:
                granted = response.ttl_ms / 1000.0
                lease._valid_until = max(lease._valid_until, sent + granted)
                lease._next_renew = sent + granted * lease._renew_fraction
                if response.signature.mac:
                    lease._signature = Signature(response.signature.key_id,
                                                 response.signature.mac)
            elif isinstance(error, NotHolder):
                if lease._heard is None:
                    lease._heard = LeaseLost(
                        f"lease on '{lease.resource}' with token {lease.token}: the lock "
                        f"service refused its renewal ({error.message}). Stop writing and "
                        "acquire the lock again",
                        reason="refused", current_token=error.current_token)
            else:
                # Transient: try again soon, while the lease is still valid.
                lease._next_renew = time.monotonic() + min(
                    lease.ttl * lease._renew_fraction / 4, 0.2)
            self.lock.notify_all()

    def run_callback(self, lease: Lease, callback: Optional[OnLost]) -> None:
        """Runs an on_lost handed out by Lease._lose_locked, outside the lock."""
        if callback is None:
            return
        try:
            callback(lease._ended)  # type: ignore[arg-type]
        except Exception:  # a callback's bug must not stop the renewals
            _log.exception("fencegate: on_lost of %r raised", lease)
        finally:
            lease._done.set()

    def stop(self) -> None:
        """Stops the thread (leases are no longer renewed). Idempotent."""
        with self.lock:
            self._stopping = True
            thread = self._thread
            self.lock.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            callbacks: list[tuple[Lease, OnLost]] = []
            to_send: list[tuple[Lease, float, Signature]] = []
            with self.lock:
                if self._stopping:
                    return
                now = time.monotonic()
                wake = now + 3600.0
                for lease in list(self._leases):
                    callback = lease._notice_end_locked(now)
                    if callback is not None:
                        callbacks.append((lease, callback))
                        continue
                    if lease._renewal is not None and now - lease._renewal > self._rpc_timeout:
                        lease._renewal = None  # no answer in time: send another
                    if lease._renewal is None:
                        if now >= lease._next_renew:
                            lease._renewal = now
                            to_send.append((lease, now, lease._signature))
                        else:
                            wake = min(wake, lease._next_renew)
                    else:
                        wake = min(wake, lease._renewal + self._rpc_timeout)
                    wake = min(wake, lease._valid_until)
                if not callbacks and not to_send:
                    self.lock.wait(max(0.0, wake - now))
                    continue
            for lease, callback in callbacks:
                self.run_callback(lease, callback)
            for lease, sent, signature in to_send:
                try:
                    self._client._renew_async(lease, sent, signature)
                except FencegateError as e:
                    self.renewed(lease, sent, None, e)
