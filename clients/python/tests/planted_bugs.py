#!/usr/bin/python3
"""Planted bugs: the Python client's tests must be able to fail.

Each bug below is one a hand-made client could have (issue 33), written as
exact text replacements in the package. They are never applied to the
package in the tree: ``planted_bugs.py NAME`` copies
``clients/python/fencegate`` into a temporary directory, plants the bug
there, and runs the tests that must catch it against that copy (pytest with
``FENCEGATE_PY_PACKAGE_DIR`` pointing at it; conftest.py checks that every
module under test comes from there). It exits 0 only if

- the bug was planted: every replaced text was found exactly once, and
- every one of its tests ran and failed, with a failure matching ``expect``
  (so a test that fails for another reason, a server that would not start,
  does not count as catching the bug).

A bug that no longer applies (the package changed under it), a test that
passes, is skipped or is not found, fails it loudly: update the bug here.

Why exact replacements rather than unified diffs: a replacement names the
text it changes, must find it exactly once, and says which bug and file
when it does not; ``patch`` applies hunks with offsets and fuzz, so a diff
can land somewhere else after the code moved, and it needs a tool and a
tree layout. The runner prints each planted bug as a unified diff all the
same, so a log shows exactly what was broken.

    planted_bugs.py --list                 # the bugs' names
    planted_bugs.py NAME [--keep]          # plant one, run its tests

Needs FENCEGATE_LOCKSERVICE_BIN and FENCEGATE_GATEWAY_BIN, as the tests do
(ctest: python.planted_bug.NAME, tests/python_tests.cmake).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from harness import _die_with_parent

HERE = Path(__file__).resolve().parent  # clients/python/tests
PACKAGE = HERE.parent / "fencegate"


@dataclass(frozen=True)
class Edit:
    file: str  # under fencegate/
    old: str  # found exactly once
    new: str


@dataclass(frozen=True)
class PlantedBug:
    name: str
    what: str
    edits: tuple[Edit, ...]
    tests: tuple[str, ...]  # pytest node ids under tests/
    expect: str  # a regular expression each test's failure must match


BUGS = (
    PlantedBug(
        "lock_context_keeps_lease",
        "`with client.lock(...)` does not release the lease on exit",
        (Edit("lock_client.py",
              "        lease, self._lease = self._lease, None\n"
              "        if lease is not None:\n"
              "            lease.release()\n",
              "        lease, self._lease = self._lease, None  # planted bug: never released\n"),),
        ("test_locks.py::test_lock_context_manager_releases_on_exit_and_on_error",),
        r"LockState\(held=True"),
    PlantedBug(
        "aio_lock_context_keeps_lease",
        "`async with client.lock(...)` does not release the lease on exit",
        (Edit("aio/_locks.py",
              "        lease._cancel = None\n"
              "        await lease.release()\n",
              "        lease._cancel = None  # planted bug: never released\n"),),
        ("test_aio.py::test_async_lock_context_manager_releases_on_exit_and_on_error",),
        r"released on exit"),
    PlantedBug(
        "renewer_stops_after_one_renewal",
        "the renewal thread renews a lease once, then never again",
        (Edit("_renewer.py",
              "                lease._next_renew = sent + granted * lease._renew_fraction\n",
              "                lease._next_renew = float(\"inf\")  # planted bug: no next renewal\n"),),
        ("test_locks.py::test_acquire_renews_past_its_ttl_and_releases",),
        r"LeaseLost: .* lapsed"),
    PlantedBug(
        "aio_renewer_stops_after_one_renewal",
        "the asyncio renewal task renews a lease once, then never again",
        (Edit("aio/_locks.py",
              "            lease._next_renew = sent + granted * lease._renew_fraction\n",
              "            lease._next_renew = float(\"inf\")  # planted bug: no next renewal\n"),),
        ("test_aio.py::test_async_lock_renews_past_its_ttl_and_releases",),
        r"LeaseLost: .* lapsed"),
    PlantedBug(
        "stale_token_mapped_to_unavailable",
        "the error mapper turns ABORTED/STALE_TOKEN into a retryable Unavailable "
        "(both clients share it)",
        (Edit("errors.py",
              "            return StaleToken(message, current_token=current)\n",
              "            return Unavailable(message, maybe_applied=False)  # planted bug\n"),),
        ("test_gateway.py::test_a_stale_token_is_raised_at_once_never_retried[stream]",
         "test_gateway.py::test_a_stale_token_is_raised_at_once_never_retried[unary]",
         "test_aio.py::test_an_async_stale_token_is_raised_at_once_never_retried"),
        r"a stale token must raise StaleToken, not "),
    PlantedBug(
        "pushed_loss_ignored",
        "a LeaseLost pushed on the lock service's Session stream is ignored",
        (Edit("lock_client.py",
              "            self._renewer.pushed(lost.resource, lost.token, reason)\n",
              "            pass  # planted bug: the push is dropped\n"),),
        ("test_lease_loss.py::test_a_release_from_elsewhere_reaches_on_lost_within_200ms",),
        r"the pushed loss never reached on_lost"),
    PlantedBug(
        "aio_pushed_loss_ignored",
        "the asyncio client ignores a LeaseLost pushed on the Session stream",
        (Edit("aio/_locks.py",
              "        for lost in response.lost:\n"
              "            self._pushed(lost)\n",
              "        for lost in response.lost:\n"
              "            pass  # planted bug: the push is dropped\n"),),
        ("test_aio.py::test_a_pushed_loss_sets_lease_lost_within_200ms",),
        r"lease\.lost\.wait\(\), 5\)[\s\S]*TimeoutError"),
    PlantedBug(
        "gateway_signature_not_sent",
        "fenced gateway calls go without the token's signature (both clients share "
        "the request builders)",
        (Edit("_gateway_messages.py",
              "    signature = lease.signature\n"
              "    return token_pb2.TokenSignature(key_id=signature.key_id, mac=signature.mac)\n",
              "    return token_pb2.TokenSignature()  # planted bug: the signature is left out\n"),),
        ("test_gateway.py::test_fenced_put_get_delete[stream]",
         "test_gateway.py::test_fenced_put_get_delete[unary]",
         "test_aio.py::test_async_gateway_calls_and_a_stale_token[stream]"),
        r"PermissionDenied: .*carries no signature"),
    PlantedBug(
        "acquire_retry_new_request_id",
        "a retried Acquire is sent with a fresh request id instead of the first "
        "attempt's",
        (Edit("lock_client.py",
              "            # request id: it takes back the first attempt's place or grant.\n",
              "            # request id: it takes back the first attempt's place or grant.\n"
              "            request.request_id = _util.new_request_id()  # planted bug\n"),),
        ("test_lease_loss.py::"
         "test_a_retried_acquire_is_applied_once_after_the_service_was_killed_mid_call",),
        r"the retry must not add a second hold"),
    PlantedBug(
        "aio_acquire_retry_new_request_id",
        "the asyncio client sends a retried Acquire with a fresh request id",
        (Edit("aio/_locks.py",
              "        async def attempt(deadline: float):\n"
              "            if wait_s < 0 or not math.isfinite(wait_s):\n",
              "        async def attempt(deadline: float):\n"
              "            request.request_id = _util.new_request_id()  # planted bug\n"
              "            if wait_s < 0 or not math.isfinite(wait_s):\n"),),
        ("test_aio.py::"
         "test_an_async_retried_acquire_is_applied_once_after_the_service_was_killed_mid_call",),
        r"the retry must not add a second hold"),
    PlantedBug(
        "observer_resumes_from_the_start",
        "an election observer forgets the last change it saw, so after a restart it "
        "observes from (0, 0) again and shows changes twice (both clients share the "
        "cursor)",
        (Edit("_election_messages.py",
              "        self.after_term, self.after_seq = change.term, change.seq\n",
              "        pass  # planted bug: the last change seen is not kept\n"),),
        ("test_election.py::test_observe_resumes_after_a_restart_from_the_last_change_seen",
         "test_election.py::test_async_observe_sees_changes_in_order_and_resumes_after_a_restart"),
        r"sent nothing it had seen"),
    PlantedBug(
        "observer_gives_up_when_refused",
        "an election observer refused RESOURCE_EXHAUSTED (too many observers, or it fell "
        "behind) raises instead of observing again",
        (Edit("_election_messages.py",
              "RESUMABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED,\n",
              "RESUMABLE = (grpc.StatusCode.UNAVAILABLE,  # planted bug: no RESOURCE_EXHAUSTED\n"),),
        ("test_election.py::test_an_observer_refused_a_place_keeps_trying_until_one_frees",),
        r"the observer ended with ResourceExhausted"),
)


class NotPlanted(Exception):
    """The bug's text is not (or not once) in the package: update the bug."""


def plant(bug: PlantedBug, package: Path) -> str:
    """Applies ``bug`` to the package copy at ``package``; returns its diff."""
    diff = []
    for edit in bug.edits:
        path = package / edit.file
        if not path.is_file():
            raise NotPlanted(f"{bug.name}: fencegate/{edit.file} does not exist")
        text = path.read_text()
        found = text.count(edit.old)
        if found != 1:
            raise NotPlanted(
                f"{bug.name}: the text to replace is found {found} times in "
                f"fencegate/{edit.file}, not once; the package changed under this planted "
                f"bug: update it in {Path(__file__).name}. The text:\n{edit.old}")
        changed = text.replace(edit.old, edit.new)
        path.write_text(changed)
        diff += difflib.unified_diff(text.splitlines(True), changed.splitlines(True),
                                     f"a/fencegate/{edit.file}", f"b/fencegate/{edit.file}")
    return "".join(diff)


def _failures(junit: Path) -> dict[str, tuple[str, str]]:
    """(test file stem, test name) -> (outcome, text) from pytest's junit XML;
    outcome is "failed", "error", "skipped" or "passed"."""
    results: dict[str, tuple[str, str]] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        key = case.get("classname", "").split(".")[-1] + ".py::" + case.get("name", "")
        outcome, text = "passed", ""
        for kind, name in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
            element = case.find(kind)
            if element is not None:
                outcome = name
                text = (element.get("message") or "") + "\n" + (element.text or "")
                break
        results[key] = (outcome, text)
    return results


def run(bug: PlantedBug, keep: bool) -> int:
    work = Path(tempfile.mkdtemp(prefix=f"fencegate-planted-{bug.name}-"))
    try:
        copy = work / "package"
        shutil.copytree(PACKAGE, copy / "fencegate",
                        ignore=shutil.ignore_patterns("__pycache__", "v1"))
        try:
            diff = plant(bug, copy / "fencegate")
        except NotPlanted as e:
            print(f"FAIL: planted bug {e}", file=sys.stderr)
            return 2
        print(f"planted bug {bug.name}: {bug.what}\n{diff}", flush=True)

        junit = work / "junit.xml"
        env = dict(os.environ, FENCEGATE_PY_PACKAGE_DIR=str(copy))
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEs",
             f"--junitxml={junit}", *(str(HERE / t) for t in bug.tests)],
            # Below ctest's TIMEOUT (120 s), so that this script stops pytest
            # itself; pytest dies with this script, and its servers with it.
            cwd=work, env=env, timeout=100, check=False, preexec_fn=_die_with_parent)
        took = time.monotonic() - started
        if not junit.is_file():
            print(f"FAIL: planted bug {bug.name}: pytest did not run the tests "
                  f"(exit {done.returncode})", file=sys.stderr)
            return 1
        results = _failures(junit)
        problems = [] if done.returncode == 1 else [f"pytest exited {done.returncode}, not 1"]
        for test in bug.tests:
            outcome, text = results.get(test, ("not run", ""))
            if outcome != "failed":
                problems.append(f"{test}: {outcome} {text.strip()[:300]}")
            elif not re.search(bug.expect, text):
                problems.append(f"{test}: failed, but not with /{bug.expect}/: "
                                f"{text.strip()[:600]}")
            else:
                first = text.strip().splitlines()[0] if text.strip() else ""
                print(f"caught by {test}: {first[:200]}")
        if problems:
            print(f"FAIL: planted bug {bug.name} NOT CAUGHT as it must be:\n  " +
                  "\n  ".join(problems), file=sys.stderr)
            return 1
        print(f"OK: planted bug {bug.name} caught by {len(bug.tests)} test(s) in {took:.1f} s")
        return 0
    finally:
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", help="the planted bug to run")
    parser.add_argument("--list", action="store_true", help="print the bugs' names")
    parser.add_argument("--keep", action="store_true", help="keep the patched copy")
    args = parser.parse_args()
    by_name = {bug.name: bug for bug in BUGS}
    if args.list:
        print("\n".join(by_name))
        return 0
    if args.name not in by_name:
        parser.error(f"name one of: {', '.join(by_name)}")
    return run(by_name[args.name], args.keep)


if __name__ == "__main__":
    sys.exit(main())
