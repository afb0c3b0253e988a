"""A worker process for the paused-holder test (Kleppmann's scenario).

    worker.py LOCK_ADDRESS GATEWAY_ADDRESS RESOURCE STUBS_DIR

Acquires RESOURCE (ttl 1 s), writes b"worker" through the gateway, prints
{"token": N}, then waits for a line on stdin (the test pauses it with
SIGSTOP meanwhile). On that line it writes b"late" under the same lease and
prints {"lost": <reason or null>, "outcome": <exception name or "ok">,
"current_token": N}. It creates its clients after it started: gRPC channels
must not cross a fork().
"""

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The package under test: a copy with a planted bug (conftest.py), or this tree's.
sys.path.insert(0, os.environ.get("FENCEGATE_PY_PACKAGE_DIR") or str(HERE.parent))
sys.path.append(sys.argv[4])

import fencegate  # noqa: E402


def main() -> None:
    lock_address, gateway_address, resource = sys.argv[1:4]
    locks = fencegate.LockClient(lock_address)
    gateway = fencegate.GatewayClient(gateway_address)
    lease = locks.acquire(resource, ttl=1.0)
    gateway.put(lease, "k", b"worker")
    print(json.dumps({"token": lease.token}), flush=True)
    sys.stdin.readline()
    try:
        lease.check()
        lost = None
    except fencegate.LeaseLost as e:
        lost = e.reason
    try:
        gateway.put(lease, "k", b"late")
        outcome, current = "ok", 0
    except fencegate.StaleToken as e:
        outcome, current = "StaleToken", e.current_token
    print(json.dumps({"lost": lost, "outcome": outcome, "current_token": current}),
          flush=True)
    gateway.close()
    locks.close()


if __name__ == "__main__":
    main()
