"""Generates the gRPC stubs (fencegate.v1) while building the package, and
takes the package's version from the project's (CMakeLists.txt), so that the
client and the servers of one tree report one version.

Everything else is in pyproject.toml. build_py runs generate_stubs.py into
the build directory, so the stubs ship in the wheel but never enter git.
"""

import re
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate_stubs  # noqa: E402


class BuildPyWithStubs(build_py):
    def run(self):
        generate_stubs.generate(Path(self.build_lib))
        super().run()

    def find_package_modules(self, package, package_dir):
        if package == "fencegate.v1":
            return []  # generated into build_lib by run(), not copied
        return super().find_package_modules(package, package_dir)


def project_version() -> str:
    """The VERSION of project(fencegate ...) in the tree's CMakeLists.txt."""
    cmake = Path(__file__).resolve().parent.parent.parent / "CMakeLists.txt"
    found = re.search(r"project\(fencegate\s+VERSION\s+([0-9][0-9.]*)", cmake.read_text())
    if found is None:
        raise RuntimeError(f"no project(fencegate VERSION ...) in {cmake}")
    return found.group(1)


setup(version=project_version(), cmdclass={"build_py": BuildPyWithStubs})
