"""docs/python.md as a new user follows it: the install into a virtual
environment that sees Debian's packages, then the quick start, as written.

The commands are the ones docs/python.md gives ("Install": venv with
--system-site-packages, pip install --no-build-isolation --no-index
./clients/python from the root of the tree); the quick start is the first
python block under "## Quick start", run by the environment's interpreter
from an empty directory (so nothing of the source tree is imported) against
this run's servers, whose addresses replace the documented defaults. A
change to the docs, the packaging or the client that breaks the path fails
here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

DOCS = Path(__file__).resolve().parents[3] / "docs" / "python.md"
TREE = DOCS.parents[1]
DEFAULT_LOCKSERVICE, DEFAULT_GATEWAY = "127.0.0.1:7070", "127.0.0.1:7071"


def _section(name: str) -> str:
    text = DOCS.read_text()
    start = text.index(f"\n## {name}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def _quick_start_code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", _section("Quick start"), re.S)
    assert blocks, "docs/python.md has no python block under '## Quick start'"
    code = blocks[0]
    assert DEFAULT_LOCKSERVICE in code and DEFAULT_GATEWAY in code, (
        "the quick start no longer names the servers' default addresses")
    return code


def _venv_commands() -> list[str]:
    """The install commands of docs/python.md's virtual environment path."""
    install = _section("Install")
    lines = [line.strip() for block in re.findall(r"```\n(.*?)```", install, re.S)
             for line in block.splitlines()]
    commands = [line for line in lines if "venvs/fencegate" in line]
    assert len(commands) == 3, f"expected the three venv commands, found {commands}"
    return commands


def test_install_in_a_venv_then_the_quick_start_works_as_written(tmp_path, lockservice,
                                                                   gateway):
    home = tmp_path / "home"
    home.mkdir()
    for command in _venv_commands():
        # As a user runs it: from the tree's root, ~ being this run's.
        done = subprocess.run(["bash", "-c", command], cwd=TREE, capture_output=True,
                              text=True, timeout=300,
                              env={"HOME": str(home), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    python = home / "venvs" / "fencegate" / "bin" / "python"

    code = (_quick_start_code().replace(DEFAULT_LOCKSERVICE, lockservice.address)
            .replace(DEFAULT_GATEWAY, gateway.address))
    work = tmp_path / "elsewhere"
    work.mkdir()
    outputs = []
    for _ in range(2):
        done = subprocess.run([str(python), "-c", code], cwd=work, capture_output=True,
                              text=True, timeout=120, env={"HOME": str(home)})
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.split())
    # "token <t> total <n>": the count goes up by one, under a larger token.
    (_, first_token, _, first_total), (_, second_token, _, second_total) = outputs
    assert (int(first_total), int(second_total)) == (1, 2)
    assert int(second_token) > int(first_token)

    where = subprocess.run([str(python), "-c", "import fencegate; print(fencegate.__file__)"],
                           cwd=work, capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(str(home / "venvs" / "fencegate")), where.stdout
