"""Fixtures: the stubs generated for this run, and the real servers.

The servers are the binaries named by FENCEGATE_LOCKSERVICE_BIN and
FENCEGATE_GATEWAY_BIN (ctest sets them; tests/python_tests.cmake); without
them every test that needs a server is skipped, saying so. Both servers
sign and check tokens (--signing_keys), so every fenced call must carry its
lease's signature.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCE_ROOT = HERE.parent  # clients/python
# The directory holding the package under test (its fencegate/): this tree's,
# or the copy named by FENCEGATE_PY_PACKAGE_DIR. planted_bugs.py points it
# at a copy with one planted bug, to show the tests catch it.
PACKAGE_ROOT = Path(os.environ.get("FENCEGATE_PY_PACKAGE_DIR") or SOURCE_ROOT).resolve()

# The stubs go to a directory of this run (never into the source tree);
# fencegate/__init__.py extends its __path__ to every "fencegate" directory
# on sys.path, so fencegate.v1 is found there.
_STUBS = Path(tempfile.mkdtemp(prefix="fencegate-stubs-"))
atexit.register(shutil.rmtree, _STUBS, True)
# Before any installed fencegate, whose stubs could be of another version.
sys.path[0:0] = [str(HERE), str(PACKAGE_ROOT), str(_STUBS)]
_spec = importlib.util.spec_from_file_location("generate_stubs",
                                               SOURCE_ROOT / "generate_stubs.py")
generate_stubs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate_stubs)
generate_stubs.generate(_STUBS)

import fencegate  # noqa: E402

# Every module of the package comes from PACKAGE_ROOT (the stubs aside).
_strays = [f"{name} from {getattr(module, '__file__', None)}"
           for name, module in sys.modules.items()
           if name.split(".")[0] == "fencegate" and not name.startswith("fencegate.v1")
           and PACKAGE_ROOT / "fencegate" not in
           Path(getattr(module, "__file__", None) or "/").parents]
if _strays:
    raise RuntimeError(f"the fencegate under test must come from {PACKAGE_ROOT / 'fencegate'}, "
                       f"not: {', '.join(_strays)}")

from harness import SIGNING_KEYS, Server, stop_all  # noqa: E402

LOCKSERVICE_BIN = os.environ.get("FENCEGATE_LOCKSERVICE_BIN", "")
GATEWAY_BIN = os.environ.get("FENCEGATE_GATEWAY_BIN", "")


def _need_binaries() -> None:
    missing = [name for name, path in (("FENCEGATE_LOCKSERVICE_BIN", LOCKSERVICE_BIN),
                                       ("FENCEGATE_GATEWAY_BIN", GATEWAY_BIN))
               if not path or not os.access(path, os.X_OK)]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not set to an executable: these tests run "
                    "against the real fencegate-lockservice and fencegate-gateway "
                    "(ctest sets them; see tests/python_tests.cmake)")


@pytest.fixture(scope="session", autouse=True)
def _stop_servers_left_running():
    yield
    stop_all()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fencegate")
    (path / "keys.txt").write_text(SIGNING_KEYS)
    return path


def lockservice_args(workdir: Path) -> list[str]:
    return [f"--signing_keys={workdir / 'keys.txt'}"]


@pytest.fixture(scope="session")
def lockservice(workdir):
    """One lock service for the tests that do not restart it."""
    _need_binaries()
    server = Server(LOCKSERVICE_BIN, workdir, "lockservice", *lockservice_args(workdir))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def gateway(workdir):
    _need_binaries()
    server = Server(GATEWAY_BIN, workdir, "gateway", f"--signing_keys={workdir / 'keys.txt'}")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_lockservice(workdir, request):
    """A lock service of the test's own, which it may pause, kill or restart."""
    _need_binaries()
    name = "lockservice-" + request.node.name.replace("[", "-").replace("]", "")
    server = Server(LOCKSERVICE_BIN, workdir, name, *lockservice_args(workdir))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def locks(lockservice):
    import fencegate

    client = fencegate.LockClient(lockservice.address)
    yield client
    client.close()


@pytest.fixture
def gw(gateway):
    import fencegate

    client = fencegate.GatewayClient(gateway.address)
    yield client
    client.close()


@pytest.fixture
def resource(request) -> str:
    """A resource name of the test's own, so tests share no state."""
    return "py/" + request.node.name
