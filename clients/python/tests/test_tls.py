"""TLS and mutual TLS against a lock service of the test's own, with
certificates made for the run by the openssl command (skipped without it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import fencegate
from conftest import LOCKSERVICE_BIN, _need_binaries
from harness import Server


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _certificates(directory: Path) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client one (CN=alice)."""
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", "/CN=fencegate test CA", "-keyout", "ca.key", "-out", "ca.pem",
             cwd=directory)
    for name, subject, extension in (
            ("server", "/CN=localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
            ("client", "/CN=alice", "extendedKeyUsage=clientAuth")):
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", subject,
                 "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=directory)
        (directory / f"{name}.ext").write_text(extension + "\n")
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext",
                 "-out", f"{name}.pem", cwd=directory)
    return directory


@pytest.fixture(scope="module")
def mtls_lockservice(tmp_path_factory):
    _need_binaries()
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    directory = _certificates(tmp_path_factory.mktemp("tls"))
    server = Server(LOCKSERVICE_BIN, directory, "lockservice-mtls",
                    f"--tls_cert={directory / 'server.pem'}",
                    f"--tls_key={directory / 'server.key'}",
                    f"--tls_client_ca={directory / 'ca.pem'}")
    server.start()
    yield server, directory
    server.stop()


def test_mutual_tls_records_the_certificates_subject_as_holder(mtls_lockservice, resource):
    server, certs = mtls_lockservice
    tls = fencegate.TLS(ca=str(certs / "ca.pem"), cert=(certs / "client.pem").read_bytes(),
                        key=str(certs / "client.key"))
    with fencegate.LockClient(server.address, tls=tls, holder="worker") as locks:
        with locks.lock(resource, ttl=10) as lease:
            state = locks.describe(resource)
            assert state.token == lease.token
            assert state.holder.startswith("CN=alice/worker/"), state.holder


def test_a_client_without_tls_or_without_a_certificate_is_refused(mtls_lockservice, resource):
    server, certs = mtls_lockservice
    quick = fencegate.RetryPolicy(call_timeout=0.5, rpc_timeout=0.5)
    for tls in (None, fencegate.TLS(ca=str(certs / "ca.pem"))):
        with fencegate.LockClient(server.address, tls=tls, retry=quick) as locks:
            with pytest.raises(fencegate.Unavailable):
                locks.acquire(resource, ttl=10)


def test_half_a_client_certificate_is_refused_at_once(mtls_lockservice):
    server, certs = mtls_lockservice
    with pytest.raises(ValueError):
        fencegate.LockClient(server.address, tls=fencegate.TLS(cert=str(certs / "client.pem")))
