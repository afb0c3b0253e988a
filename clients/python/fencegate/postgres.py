"""Fencing inside your own PostgreSQL transactions, with psycopg 3.

    from fencegate.postgres import run_fenced

    def ship(cur):
        cur.execute("UPDATE orders SET state = 'shipped' WHERE id = %s", (42,))

    with locks.lock("orders/42") as lease:
        run_fenced(conn, lease, ship)   # StaleToken if a newer holder fenced

``run_fenced`` opens a transaction, runs ``fencegate_fence(resource, token
[, key_id, mac])`` (docs/sql-fencing.md; install the functions with
``fencegate sql-install``) as its first statement, then ``body(cursor)``,
then commits: what ``body`` writes commits only if the fence held, as the
C++ library's RunFenced (include/fencegate/client/postgres_fence.h).

Errors, as the gateway's (fencegate.errors): SQLSTATE ZF001 raises
StaleToken (``current_token`` from the error's ``DETAIL:
current_token=N``), ZF002 PermissionDenied (``bad_signature``), 22004 and
22023 InvalidArgument, 25P01 FencegateError (``conn`` is in autocommit
mode: fencing needs a transaction). A serialization failure or deadlock
(40001, 40P01: at REPEATABLE READ or SERIALIZABLE a newer holder committed
while this transaction waited) runs the whole transaction again, ``body``
included, up to ``max_attempts`` times; the last one's error is raised as
FencegateError. A lost connection raises Unavailable (``maybe_applied``
True when it was lost during COMMIT). Exceptions ``body`` raises propagate,
after the rollback. Only an exclusive lease's token fences (InvalidArgument
naming ``mode`` otherwise). Nothing is raised by message text.

Needs psycopg 3 (Debian's ``python3-psycopg``); importing this module is
the only thing that does. Thread safety: use ``conn`` from one thread at a
time, as psycopg allows.
"""

from __future__ import annotations

import re
from typing import Callable, Optional, TypeVar

import psycopg

from fencegate.errors import (FencegateError, InvalidArgument, PermissionDenied, StaleToken,
                              Unavailable)
from fencegate.lease import LeaseMode

T = TypeVar("T")
_RETRY_SQLSTATES = ("40001", "40P01")


def run_fenced(conn: psycopg.Connection, lease, body: Callable[[psycopg.Cursor], T], *,
               max_attempts: int = 5) -> T:
    """Runs ``body(cursor)`` in a transaction fenced by ``lease`` (a Lease
    or a Fencing: resource, token, signature, mode); returns what ``body``
    returned. The transaction's isolation is the connection's
    (``conn.isolation_level``). See the module docstring for errors."""
    if lease.mode != LeaseMode.EXCLUSIVE:
        raise InvalidArgument(
            "mode: run_fenced takes an exclusive lease's token only; the SQL fencing API "
            "has no shared reads (a shared lease's token cannot fence) and refuses "
            "permits' tokens", field="mode")
    if conn.autocommit:
        raise FencegateError("run_fenced needs a connection with autocommit off: the fence "
                             "holds only inside the transaction it opens")
    last: Optional[FencegateError] = None
    for _ in range(max(1, max_attempts)):
        committing = False
        try:
            with conn.transaction():
                with conn.cursor() as cur:
                    signature = lease.signature
                    if signature.key_id or signature.mac:
                        cur.execute("SELECT fencegate_fence(%s, %s, %s, %s)",
                                    (lease.resource, lease.token,
                                     signature.key_id.decode("ascii", "replace"),
                                     signature.mac))
                    else:
                        cur.execute("SELECT fencegate_fence(%s, %s)",
                                    (lease.resource, lease.token))
                    result = body(cur)
                committing = True  # leaving the block commits
            return result
        except psycopg.OperationalError as e:
            if e.sqlstate in _RETRY_SQLSTATES:
                last = from_sql_error(e)
                continue
            if conn.closed or (e.sqlstate or "").startswith("08") or e.sqlstate is None:
                raise Unavailable(
                    f"the connection to PostgreSQL was lost{' during COMMIT' if committing else ''}"
                    f": {e}", maybe_applied=committing) from e
            raise from_sql_error(e) from e
        except psycopg.Error as e:
            if e.sqlstate in _RETRY_SQLSTATES:
                last = from_sql_error(e)
                continue
            raise from_sql_error(e) from e
    assert last is not None
    raise last


def from_sql_error(error: psycopg.Error) -> FencegateError:
    """The fencegate exception for an error of the SQL fencing API."""
    sqlstate = error.sqlstate or ""
    message = str(error).strip()
    if sqlstate == "ZF001":
        detail = error.diag.message_detail or ""
        found = re.search(r"current_token=(\d+)", detail)
        return StaleToken(message, current_token=int(found.group(1)) if found else 0)
    if sqlstate == "ZF002":
        return PermissionDenied(message, bad_signature=True)
    if sqlstate in ("22004", "22023"):
        return InvalidArgument(message, field="")
    if sqlstate in _RETRY_SQLSTATES:
        return FencegateError(
            f"{message} (SQLSTATE {sqlstate}: the transaction lost a race and changed "
            "nothing; run it again from BEGIN, where a stale token then fails with ZF001)")
    if sqlstate.startswith("08"):
        return Unavailable(message, maybe_applied=False)
    return FencegateError(f"SQLSTATE {sqlstate or 'unknown'}: {message}")
