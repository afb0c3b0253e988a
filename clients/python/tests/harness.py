"""Test harness: the real server binaries as child processes, a TCP proxy
that can lose answers, and polling with deadlines (never fixed sleeps).

Only processes started here are ever signalled, by their PID. Every child
gets PR_SET_PDEATHSIG (SIGKILL), so none outlives a killed pytest, and
every server still running at exit is stopped. All traffic stays on
127.0.0.1.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Optional, TypeVar

T = TypeVar("T")

SIGNING_KEYS = "k1 " + "ab" * 32 + " sign\n"


def wait_for(condition: Callable[[], T], timeout: float = 10.0, what: str = "condition",
             interval: float = 0.01) -> T:
    """Polls ``condition`` until it returns a truthy value; fails the test
    (AssertionError naming ``what``) if ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def _die_with_parent() -> None:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


_STARTED: list["Server"] = []  # every server started here, for stop_all()


def stop_all() -> None:
    """Stops every server started here that still runs (a test that failed
    half-way, a fixture that did not finish)."""
    for server in _STARTED:
        server.stop()


atexit.register(stop_all)


class Server:
    """One fencegate server binary, on 127.0.0.1 with a port it picked."""

    def __init__(self, binary: str, workdir: Path, name: str, *extra: str) -> None:
        self.binary = binary
        self.workdir = workdir
        self.name = name
        self.extra = list(extra)
        self.db = workdir / f"{name}.db"
        self.log = workdir / f"{name}.log"
        self.proc: Optional[subprocess.Popen] = None
        self.port = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> "Server":
        port_file = self.workdir / f"{self.name}.port"
        port_file.unlink(missing_ok=True)
        args = [self.binary, "--listen=127.0.0.1:0", f"--port_file={port_file}",
                "--metrics_listen=", f"--db={self.db}", *self.extra]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=log, preexec_fn=_die_with_parent)
        if self not in _STARTED:
            _STARTED.append(self)

        def serving() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.proc.returncode}: "
                                     f"{self.log.read_text()[-2000:]}")
            text = port_file.read_text().strip() if port_file.exists() else ""
            if text.isdigit():
                self.port = int(text)
                return True
            return False

        wait_for(serving, timeout, f"{self.name} to serve")
        return self

    def signal(self, sig: int) -> None:
        assert self.proc is not None and self.proc.poll() is None
        os.kill(self.proc.pid, sig)

    def kill9(self) -> None:
        self.signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, signal.SIGCONT)  # a paused one must hear SIGTERM
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class Proxy:
    """A TCP proxy on 127.0.0.1 in front of a server whose port may change.

    ``drop_answers()`` keeps forwarding the client's bytes but throws away
    the server's, so a call is applied and its answer lost;
    ``cut()`` closes every connection (the client sees UNAVAILABLE);
    ``heal()`` forwards normally again, to ``upstream()``'s current port.
    """

    def __init__(self, upstream: Callable[[], int]) -> None:
        self._upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._dropping = False
        self._closed = False
        self.refused = 0  # connections closed at once: the server was down
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def drop_answers(self) -> None:
        with self._lock:
            self._dropping = True

    def heal(self) -> None:
        with self._lock:
            self._dropping = False

    def cut(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.cut()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self._upstream()))
            except OSError:
                client.close()
                self.refused += 1
                continue
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pipe, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, True), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, answers: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                with self._lock:
                    drop = answers and self._dropping
                if not drop:
                    dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
