"""fencegate.postgres.run_fenced against a real PostgreSQL of the test's own
(Debian's binaries, /usr/lib/postgresql/<version>/bin; skipped without
them), sharing its fence with a gateway on the same database, with signed
tokens checked in SQL."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

import fencegate
from harness import SIGNING_KEYS, Server, _die_with_parent, wait_for

psycopg = pytest.importorskip("psycopg", reason="python3-psycopg is not installed")
from fencegate.postgres import run_fenced  # noqa: E402

SQL_API = (Path(__file__).resolve().parents[3] / "gateway" / "postgres" / "sql"
           / "fencegate_sql_api.sql")


def _bindir() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.skip("PostgreSQL is not installed (/usr/lib/postgresql/<version>/bin)")
    return os.path.dirname(found[-1])


def _as_postgres():
    """Runs the child as the postgres user when we are root (PostgreSQL
    refuses root), and kills it if the test process dies."""
    _die_with_parent()
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def postgres(workdir):
    bindir = _bindir()
    if not SQL_API.is_file():
        pytest.skip(f"{SQL_API} not found")
    base = Path(tempfile.mkdtemp(prefix="fg-pg-", dir="/tmp"))
    os.chmod(base, 0o755)
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(base, user.pw_uid, user.pw_gid)
    subprocess.run([f"{bindir}/initdb", f"--pgdata={base}/data", "--username=fencegate",
                    "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync",
                    "--no-instructions"], check=True, capture_output=True,
                   preexec_fn=_as_postgres)
    port = _free_port()
    with open(base / "postgres.log", "wb") as log:
        server = subprocess.Popen(
            [f"{bindir}/postgres", "-D", f"{base}/data", "-p", str(port), "-k", str(base),
             "-c", "listen_addresses=127.0.0.1", "-c", "shared_buffers=32MB"],
            stdout=log, stderr=log, preexec_fn=_as_postgres)
    uri = f"postgresql://fencegate@127.0.0.1:{port}/postgres"

    def ready() -> bool:
        try:
            psycopg.connect(uri).close()
            return True
        except psycopg.OperationalError:
            return False

    try:
        wait_for(ready, timeout=60, what="PostgreSQL to accept connections", interval=0.1)
        yield uri
    finally:
        server.send_signal(signal.SIGINT)  # fast shutdown
        server.wait(30)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def pg_gateway(postgres, workdir):
    """A gateway on the database (it creates the fence tables), then the SQL
    fencing API, with the lock service's signing key: signing is on in SQL."""
    from conftest import GATEWAY_BIN, _need_binaries

    _need_binaries()
    server = Server(GATEWAY_BIN, workdir, "gateway-pg", f"--storage={postgres}",
                    f"--signing_keys={workdir / 'keys.txt'}")
    server.start()
    subprocess.run(["psql", postgres, "-q", "-v", "ON_ERROR_STOP=1", "-f", str(SQL_API)],
                   check=True, capture_output=True)
    key_id, secret = SIGNING_KEYS.split()[:2]
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute("INSERT INTO fencegate_keys(id, secret) VALUES (%s, %s) "
                     "ON CONFLICT DO NOTHING", (key_id, bytes.fromhex(secret)))
        conn.execute("CREATE TABLE orders(id int PRIMARY KEY, state text)")
    client = fencegate.GatewayClient(server.address)
    yield client
    client.close()
    server.stop()


def _state(uri: str, order: int):
    with psycopg.connect(uri) as conn:
        row = conn.execute("SELECT state FROM orders WHERE id = %s", (order,)).fetchone()
        return row[0] if row else None


def test_run_fenced_commits_under_the_fence(postgres, pg_gateway, locks, resource):
    with psycopg.connect(postgres) as conn, locks.lock(resource, ttl=10) as lease:
        got = run_fenced(conn, lease, lambda cur: cur.execute(
            "INSERT INTO orders VALUES (1, 'new') RETURNING id").fetchone()[0])
        assert got == 1
        assert _state(postgres, 1) == "new"
        # One fence, shared with the gateway on the same database.
        assert pg_gateway.describe(resource).max_token == lease.token


def test_a_stale_token_is_refused_and_its_transaction_rolled_back(postgres, pg_gateway, locks,
                                                                  resource):
    old = locks.acquire(resource, ttl=10)
    old.release()
    with psycopg.connect(postgres) as conn, locks.lock(resource, ttl=10) as newer:
        pg_gateway.fence(newer)  # the newer holder fences at the gateway
        with pytest.raises(fencegate.StaleToken) as error:
            run_fenced(conn, old, lambda cur: cur.execute(
                "INSERT INTO orders VALUES (2, 'late')"))
        assert error.value.current_token == newer.token
        assert _state(postgres, 2) is None, "the stale transaction committed nothing"
        run_fenced(conn, newer, lambda cur: cur.execute("INSERT INTO orders VALUES (2, 'ok')"))
        assert _state(postgres, 2) == "ok"


def test_a_token_without_its_signature_is_refused(postgres, pg_gateway, locks, resource):
    with psycopg.connect(postgres) as conn, locks.lock(resource, ttl=10) as lease:
        with pytest.raises(fencegate.PermissionDenied) as error:
            run_fenced(conn, fencegate.Fencing(resource, lease.token),
                       lambda cur: cur.execute("INSERT INTO orders VALUES (3, 'x')"))
        assert error.value.bad_signature
        assert _state(postgres, 3) is None


def test_a_shared_lease_cannot_fence(postgres, pg_gateway, locks, resource):
    with psycopg.connect(postgres) as conn, locks.lock(resource, ttl=10, mode="shared") as lease:
        with pytest.raises(fencegate.InvalidArgument) as error:
            run_fenced(conn, lease, lambda cur: None)
        assert error.value.field == "mode"
