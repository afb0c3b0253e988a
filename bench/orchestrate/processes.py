"""The processes a benchmark run starts, and waiting for them with deadlines.

Processes keeps every server this run started by name, and only those are
ever signalled: stop_all() sends each SIGTERM (PostgreSQL SIGINT, its fast
shutdown), gives each 15 s to exit, then SIGKILL, and reaps it. Each runs in
a process group of its own, so a Ctrl-C at the terminal reaches only the
script and its load generator (as bash's background jobs ignored it): the
servers are stopped by stop_all, from main's cleanup, on exit, error or
Ctrl-C.

  log(message)                        "bench: message" on stderr
  wait_until(procs, name, s, ready)   poll ready() every 0.1 s until it holds,
                                      the process dies or s seconds pass
  free_port()                         a free TCP port on 127.0.0.1
  quiet(argv, ...)                    whether a command succeeds, bounded

Standard library only.
"""

import os
import signal
import socket
import subprocess
import sys
import time

from .options import Exit

STOP_GRACE_S = 15


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def tail(path, n):
    """The last `n` lines of a text file, "" when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


class Processes:
    """Name -> subprocess.Popen of every process this run started."""

    def __init__(self, work):
        self.work = work
        self.procs = {}

    def start(self, name, argv, log_path=None, env=None):
        """Starts `argv` as `name`, stdout and stderr to `log_path` (default
        WORK/NAME.log; os.devnull for none)."""
        log_path = log_path or os.path.join(self.work, f"{name}.log")
        with open(log_path, "w") as out:
            try:
                self.procs[name] = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    env=env, process_group=0)
            except OSError as e:
                out.write(f"cannot run {argv[0]}: {e}\n")
                self.die_with_log(log_path, f"{name} could not start: {argv[0]}: {e}")
        return self.procs[name]

    def pid(self, name):
        """The PID of `name` as a string, "" when it was not started."""
        p = self.procs.get(name)
        return str(p.pid) if p else ""

    def pids(self):
        return [p.pid for p in self.procs.values()]

    def alive(self, name):
        p = self.procs.get(name)
        return p is not None and p.poll() is None

    def log_path(self, name):
        return os.path.join(self.work, f"{name}.log")

    def die_with_log(self, log_path, message):
        log(message)
        if os.path.isfile(log_path):
            sys.stderr.write(tail(log_path, 20))
        raise Exit(1)

    def stop(self, name, sig=signal.SIGTERM, grace_s=STOP_GRACE_S):
        """Signals `name`, waits up to `grace_s` for it, then SIGKILL; forgets it.
        Returns its exit status as a shell gives it (128 + signal)."""
        p = self.procs.pop(name, None)
        if p is None:
            return 0
        _signal(p, sig)
        return _reap(name, p, grace_s)

    def stop_all(self):
        """Every process still here: all signalled first, then each reaped."""
        procs, self.procs = self.procs, {}
        for name, p in procs.items():
            # PostgreSQL: fast shutdown (SIGTERM would wait for its clients to leave).
            _signal(p, signal.SIGINT if name == "postgres" else signal.SIGTERM)
        for name, p in procs.items():
            status = _reap(name, p, STOP_GRACE_S)
            # etcd and the servers stopped by SIGTERM end with its status (143).
            if status != 0 and not (name.startswith("etcd") and status == 143):
                log(f"{name} (pid {p.pid}) exited with status {status}")


def _signal(p, sig):
    if p.poll() is None:
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            pass


def _reap(name, p, grace_s):
    try:
        p.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        log(f"{name} (pid {p.pid}) ignored SIGTERM for {grace_s} s; killing it")
        p.kill()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            log(f"{name} (pid {p.pid}) still there 10 s after SIGKILL; left behind")
            return 137
    return 128 - p.returncode if p.returncode < 0 else p.returncode


def wait_until(procs, name, seconds, ready, log_path=None):
    """Polls ready() until it returns true; dies with `name`'s log when the
    process `name` exits first or `seconds` pass."""
    log_path = log_path or procs.log_path(name)
    deadline = time.monotonic() + seconds
    while not ready():
        if not procs.alive(name):
            procs.die_with_log(log_path, f"{name} died while starting")
        if time.monotonic() >= deadline:
            procs.die_with_log(log_path, f"{name} not ready after {seconds}s")
        time.sleep(0.1)


def quiet(argv, env=None, timeout=10):
    """Whether `argv` exits 0 within `timeout` seconds; its output dropped."""
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env, timeout=timeout).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def output(argv, env=None, timeout=10):
    """`argv`'s stdout, "" when it fails or takes longer than `timeout` seconds."""
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              env=env, timeout=timeout).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


# A free TCP port on 127.0.0.1 (for servers that cannot listen on port 0 and
# report it: etcd, Redis, PostgreSQL).
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
