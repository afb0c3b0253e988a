"""The gateway's messages for both gateway clients (sync and asyncio): the
types a program sees, the requests built from them, the results read back.
Plain functions of their arguments (thread-safe). The client checks types
only; the gateway checks values (InvalidArgument naming the field).
Internal: import the types from ``fencegate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol, Sequence

from fencegate import _util
from fencegate._proto import gateway_pb2, token_pb2
from fencegate.errors import FencegateError, Unavailable
from fencegate.lease import LeaseMode, Signature


class Fenced(Protocol):
    """What a fenced call needs: a Lease, or a Fencing."""

    resource: str
    token: int
    mode: LeaseMode

    @property
    def signature(self) -> Signature: ...


@dataclass(frozen=True)
class Fencing:
    """A token without its Lease (e.g. handed to another process)."""

    resource: str
    token: int
    signature: Signature = Signature()
    mode: LeaseMode = LeaseMode.EXCLUSIVE


@dataclass(frozen=True)
class Mutation:
    """One change of a multi_write: ``value`` None deletes the key;
    ``expected_version`` makes it a compare-and-set (0: must not exist)."""

    key: str
    value: Optional[bytes] = None
    expected_version: Optional[int] = None


@dataclass(frozen=True)
class WriteResult:
    version: int  # the key's new version (for a delete: the revision of the delete)
    max_token: int  # the resource's fence after the write


@dataclass(frozen=True)
class MultiWriteResult:
    versions: tuple[int, ...]  # in mutation order (all equal: one revision)
    max_token: int


@dataclass(frozen=True)
class ReadResult:
    found: bool
    value: bytes
    version: int  # 0 when not found
    max_token: int


@dataclass(frozen=True)
class ResourceSummary:
    max_token: int
    key_count: int
    total_bytes: int


@dataclass(frozen=True)
class KeyInfo:
    key: str
    version: int
    size_bytes: int


@dataclass(frozen=True)
class ListPage:
    keys: tuple[KeyInfo, ...]
    next_page_token: str  # empty on the last page



def write_request(lease: Fenced, key: str, value: Optional[bytes], delete: bool,
                  expected_version: Optional[int]) -> Any:
    return gateway_pb2.WriteRequest(
        resource=_util.name_bytes(lease.resource, "resource"), token=lease.token,
        signature=_signature(lease), mode=lease.mode,
        mutation=_mutation(key, value, delete, expected_version))


def multi_write_request(lease: Fenced, mutations: Sequence[Mutation]) -> Any:
    return gateway_pb2.MultiWriteRequest(
        resource=_util.name_bytes(lease.resource, "resource"), token=lease.token,
        signature=_signature(lease), mode=lease.mode,
        mutations=[_mutation(m.key, m.value, m.value is None, m.expected_version)
                   for m in mutations])


def read_request(lease: Fenced, key: str) -> Any:
    return gateway_pb2.ReadRequest(
        resource=_util.name_bytes(lease.resource, "resource"),
        key=_util.name_bytes(key, "key"), token=lease.token, signature=_signature(lease),
        mode=lease.mode)


def plain_read_request(resource: str, key: str) -> Any:
    return gateway_pb2.ReadRequest(resource=_util.name_bytes(resource, "resource"),
                                   key=_util.name_bytes(key, "key"))


def fence_request(lease: Fenced) -> Any:
    return gateway_pb2.FenceRequest(
        resource=_util.name_bytes(lease.resource, "resource"), token=lease.token,
        signature=_signature(lease), mode=lease.mode)


def describe_request(resource: str) -> Any:
    return gateway_pb2.DescribeResourceRequest(resource=_util.name_bytes(resource, "resource"))


def list_request(resource: str, page_size: int, page_token: str) -> Any:
    return gateway_pb2.ListRequest(resource=_util.name_bytes(resource, "resource"),
                                   page_size=check_int(page_size, "page_size"),
                                   page_token=_util.name_bytes(page_token, "page_token"))


def write_result(r) -> WriteResult:
    return WriteResult(version=r.version, max_token=r.max_token)


def multi_write_result(r) -> MultiWriteResult:
    return MultiWriteResult(versions=tuple(r.versions), max_token=r.max_token)


def read_result(r) -> ReadResult:
    return ReadResult(found=r.found, value=r.value, version=r.version, max_token=r.max_token)


def summary(r) -> ResourceSummary:
    return ResourceSummary(max_token=r.max_token, key_count=r.key_count,
                           total_bytes=r.total_bytes)


def list_page(r) -> ListPage:
    return ListPage(keys=tuple(KeyInfo(k.key, k.version, k.size_bytes) for k in r.keys),
                    next_page_token=r.next_page_token)


def write_retryable(error: FencegateError) -> bool:
    """Whether a write may be sent again: only if it surely was not applied
    (writes carry no request id)."""
    return isinstance(error, Unavailable) and not error.maybe_applied


def always_retryable(error: FencegateError) -> bool:
    """Reads and fences (idempotent) are retried whatever happened."""
    return True


def check_int(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return value


def _signature(lease: Fenced) -> token_pb2.TokenSignature:
    signature = lease.signature
    return token_pb2.TokenSignature(key_id=signature.key_id, mac=signature.mac)


def _mutation(key: str, value: Optional[bytes], delete: bool,
              expected_version: Optional[int]) -> Any:
    mutation = gateway_pb2.Mutation(key=_util.name_bytes(key, "key"))
    if delete:
        mutation.delete = True
    else:
        mutation.value = _util.value_bytes(value, "value")  # type: ignore[arg-type]
    if expected_version is not None:
        mutation.expected_version = check_int(expected_version, "expected_version")
    return mutation
