"""fencegate: distributed locks with fencing tokens, from Python.

    import fencegate

    locks = fencegate.LockClient("127.0.0.1:7070")
    gateway = fencegate.GatewayClient("127.0.0.1:7071")
    with locks.lock("orders", ttl=10) as lease:
        gateway.put(lease, "total", b"42")   # refused (StaleToken) once stale
    with locks.campaign("scheduler", b"10.0.0.2:8080") as me:   # elections
        gateway.put(me.lease, "heartbeat", b"...")   # fenced by the term

The lock service hands out leases whose fencing tokens only grow; the
gateway refuses any write that carries a token older than one it has seen.
A paused or cut-off holder can therefore never damage data a newer holder
touched. docs/python.md is the guide; docs/semantics.md the contract.
"""

# The generated stubs (fencegate.v1) may live in another directory named
# fencegate on sys.path (the tests generate them into a temporary one).
from importlib import metadata as _metadata
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from fencegate._election_messages import ElectionState  # noqa: E402
from fencegate._util import TLS, RetryPolicy  # noqa: E402
from fencegate.election import ElectionObserver, Leadership  # noqa: E402
from fencegate.errors import (  # noqa: E402
    DeadlineExceeded, FencegateError, InvalidArgument, LeaseLost, NotAcquired, NotHolder,
    PermissionDenied, ResourceExhausted, StaleToken, Unavailable, VersionMismatch)
from fencegate.gateway_client import (  # noqa: E402
    Fencing, GatewayClient, KeyInfo, ListPage, MultiWriteResult, Mutation, ReadResult,
    ResourceSummary, WriteResult)
from fencegate.lease import Lease, LeaseMode, MultiLease, Signature  # noqa: E402
from fencegate.lock_client import LockClient, LockState  # noqa: E402

# The installed package's version, the project's: from setup.py, or from
# python3-fencegate's dist-info.
try:
    __version__ = _metadata.version("fencegate")
except _metadata.PackageNotFoundError:  # run from the source tree
    __version__ = "0+source"

__all__ = [
    "DeadlineExceeded", "ElectionObserver", "ElectionState", "FencegateError", "Fencing",
    "GatewayClient", "InvalidArgument", "KeyInfo", "Leadership", "Lease", "LeaseLost",
    "LeaseMode", "ListPage", "LockClient", "LockState",
    "MultiLease", "MultiWriteResult", "Mutation", "NotAcquired", "NotHolder",
    "PermissionDenied", "ReadResult", "ResourceExhausted", "ResourceSummary", "RetryPolicy",
    "Signature", "StaleToken", "TLS", "Unavailable", "VersionMismatch", "WriteResult",
]
