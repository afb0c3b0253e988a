"""The examples in examples/python run as documented, against the real
servers, and say that they did what they show."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import PACKAGE_ROOT

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "python"


def _run(example: str, *args: str) -> subprocess.CompletedProcess:
    stubs = [p for p in sys.path if Path(p, "fencegate", "v1").is_dir()][0]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE_ROOT), stubs]))
    return subprocess.run([sys.executable, str(EXAMPLES / example), *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_kleppmann_example_refuses_the_late_write_and_loses_no_update(lockservice, gateway):
    done = _run("kleppmann.py", f"--lockservice={lockservice.address}",
                f"--gateway={gateway.address}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "its late write was refused: StaleToken" in done.stdout
    assert "no update lost" in done.stdout


def test_queue_worker_example_does_every_job_once(lockservice, gateway, gw):
    addresses = (f"--lockservice={lockservice.address}", f"--gateway={gateway.address}")
    enqueued = _run("queue_worker.py", *addresses, "--enqueue=5")
    assert enqueued.returncode == 0, enqueued.stdout + enqueued.stderr
    worked = _run("queue_worker.py", *addresses)
    assert worked.returncode == 0, worked.stdout + worked.stderr
    assert "processed 5 jobs" in worked.stdout and "0 jobs left" in worked.stdout
    keys = {k.key: k for k in gw.list("jobs").keys}
    assert sorted(keys) == [f"done/{i:06d}" for i in range(5)]
    assert [gw.get_unfenced("jobs", f"done/{i:06d}").value for i in range(5)] == [
        b"0", b"1", b"4", b"9", b"16"]
