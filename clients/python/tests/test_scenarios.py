"""The shared client scenarios, run by the Python client.

tests/scenarios/client_scenarios.json holds behaviours the C++ and the
Python clients must agree on, written once as data; this runner plays each
scenario (one test per scenario name) with the synchronous API
(fencegate.LockClient, fencegate.GatewayClient) against the real servers of
conftest.py (both sign tokens), and tests/e2e/client_scenarios_test.cc plays
the same file with the C++ client. The file's "about" and docs/testing.md
("Client scenarios") state the vocabulary; this runner maps it onto the
Python API, and fails a step whose op, argument or expectation it does not
know (never skips it), so an op added to the file must be implemented here
and in the C++ runner alike.

FENCEGATE_CLIENT_SCENARIOS names another file to run (a mutant, to show
that the runner fails on it).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path
from typing import Any, Optional

import pytest

import fencegate
from fencegate.errors import (FencegateError, InvalidArgument, LeaseLost, NotAcquired,
                              NotHolder, PermissionDenied, ResourceExhausted, StaleToken,
                              VersionMismatch)

SCENARIOS = Path(os.environ.get("FENCEGATE_CLIENT_SCENARIOS") or
                 Path(__file__).resolve().parents[3] / "tests" / "scenarios" /
                 "client_scenarios.json")


def _load() -> list[dict]:
    scenarios = json.loads(SCENARIOS.read_text())["scenarios"]
    names = [s["name"] for s in scenarios]
    for name in names:
        if not re.fullmatch(r"[a-z0-9_]+", name):
            raise ValueError(f"{SCENARIOS}: scenario name {name!r} is not lower_snake_case")
    if len(set(names)) != len(names):
        raise ValueError(f"{SCENARIOS}: a scenario name is used twice")
    return scenarios


_SCENARIOS = _load()
_RUN = uuid.uuid4().hex[:8]  # resources of this run: "scn-py-<run>/<scenario>/<name>"

# Per op: the step's arguments (besides op, expect and note) and the keys a
# successful call's expectation may check. Anything else fails the step.
_ARGS = {
    "acquire": {"resource", "holder", "ttl_ms", "wait_ms", "mode", "permits", "as", "client"},
    "acquire_many": {"resources", "holder", "ttl_ms", "wait_ms", "mode", "as", "client"},
    "release": {"lease"},
    "renew": {"lease"},
    "check": {"lease"},
    "lost": {"lease"},
    "wait_lost": {"lease", "timeout_ms"},
    "release_token": {"lease", "unsigned", "client"},
    "renew_token": {"lease", "unsigned", "ttl_ms", "client"},
    "describe": {"resource", "client"},
    "put": {"lease", "unsigned", "key", "value", "expected_version"},
    "delete": {"lease", "unsigned", "key", "expected_version"},
    "multi_write": {"lease", "unsigned", "mutations"},
    "get": {"lease", "unsigned", "key"},
    "get_unfenced": {"resource", "key"},
    "fence": {"lease", "unsigned"},
}
_SUCCESS = {
    "acquire": {"token_above", "token_same_as"},
    "release_token": {"holds_left"},
    "lost": {"lost"},
    "wait_lost": {"lost"},
    "describe": {"held", "token_of", "mode", "hold_count", "holders", "permits"},
    "put": {"version", "max_token_of"},
    "delete": {"version", "max_token_of"},
    "multi_write": {"versions", "max_token_of"},
    "get": {"found", "value", "version", "max_token_of"},
    "get_unfenced": {"found", "value", "version", "max_token_of"},
    "fence": {"max_token_of"},
}
# Per error kind: the keys its expectation may check.
_ERRORS = {
    "stale_token": {"current_token_of"},
    "version_mismatch": {"current_version"},
    "not_holder": {"current_token_of", "current_token"},
    "lease_lost": set(),
    "not_acquired": {"holder_token_of"},
    "permission_denied": set(),
    "invalid_argument": {"field"},
    "resource_exhausted": set(),
}
_MUTATION_KEYS = {"key", "value", "delete", "expected_version"}


def _kind(error: FencegateError) -> Optional[str]:
    """The scenario file's name for an error of the client, by its class."""
    for cls, kind in ((StaleToken, "stale_token"), (VersionMismatch, "version_mismatch"),
                      (NotHolder, "not_holder"), (LeaseLost, "lease_lost"),
                      (NotAcquired, "not_acquired"), (PermissionDenied, "permission_denied"),
                      (InvalidArgument, "invalid_argument"),
                      (ResourceExhausted, "resource_exhausted")):
        if isinstance(error, cls):
            return kind
    return None


class _Runner:
    """Plays one scenario: its leases by name, its clients, its checks."""

    def __init__(self, scenario: dict, lockservice, locks, gw) -> None:
        self.name = scenario["name"]
        self.lockservice = lockservice
        self.clients = {"main": locks}
        self.gw = gw
        self.leases: dict[str, Any] = {}
        self.multis: list[Any] = []

    # -- names -----------------------------------------------------------

    def resource(self, name: str) -> str:
        return f"scn-py-{_RUN}/{self.name}/{name}" if name else ""

    def holder(self, step: dict) -> Optional[str]:
        if "holder" not in step:
            return None  # the client's fresh holder of its own
        name = step["holder"]
        return f"scn-py-{_RUN}/{self.name}/{name}" if name else ""

    def lease(self, name: str):
        assert name in self.leases, f"no lease named {name!r} was granted before this step"
        return self.leases[name]

    def token_of(self, name: str) -> int:
        return self.lease(name).token

    def fenced(self, step: dict):
        lease = self.lease(step["lease"])
        if step.get("unsigned", False):
            return fencegate.Fencing(lease.resource, lease.token, mode=lease.mode)
        return lease

    def client(self, step: dict):
        which = step.get("client", "main")
        assert which in ("main", "other"), f"unknown client {which!r}"
        if which not in self.clients:
            self.clients[which] = fencegate.LockClient(self.lockservice.address)
        return self.clients[which]

    def close(self) -> None:
        for lease in list(self.leases.values()):
            try:
                lease.release()
            except FencegateError:
                pass  # it expires after its TTL
        other = self.clients.get("other")
        if other is not None:
            other.close()

    # -- steps -----------------------------------------------------------

    def run(self, steps: list[dict]) -> None:
        for i, step in enumerate(steps):
            try:
                self.step(step)
            except AssertionError as e:
                raise AssertionError(f"scenario {self.name}, step {i + 1} "
                                     f"{json.dumps(step)}: {e}") from None

    def step(self, step: dict) -> None:
        op = step.get("op")
        assert op in _ARGS, f"this runner does not know the op {op!r}"
        unknown = set(step) - _ARGS[op] - {"op", "expect", "note"}
        assert not unknown, f"this runner does not know the arguments {sorted(unknown)} of {op}"
        expect = dict(step.get("expect", {}))
        kind = expect.pop("error", None)
        allowed = _ERRORS.get(kind, set()) if kind is not None else _SUCCESS.get(op, set())
        assert kind is None or kind in _ERRORS, f"unknown error kind {kind!r}"
        unknown = set(expect) - allowed
        assert not unknown, (f"this runner does not know the expectations {sorted(unknown)} "
                             f"of {op} {'failing with ' + kind if kind else 'succeeding'}")
        try:
            result = getattr(self, "op_" + op)(step)
        except FencegateError as error:
            got = _kind(error)
            assert kind is not None, f"expected success, got {type(error).__name__}: {error}"
            assert got == kind, f"expected {kind}, got {type(error).__name__}: {error}"
            self.check_error(kind, expect, error)
            return
        assert kind is None, f"expected the error {kind}, but the call succeeded"
        if expect:
            self.check_result(op, expect, result)

    def check_error(self, kind: str, expect: dict, error: FencegateError) -> None:
        for key, want in expect.items():
            if key == "field":
                assert error.field == want, f"field {error.field!r}, expected {want!r}"
            elif key == "current_token_of":
                assert error.current_token == self.token_of(want), (
                    f"current token {error.current_token}, expected {want}'s "
                    f"{self.token_of(want)}")
            elif key == "current_token":
                assert error.current_token == want, (
                    f"current token {error.current_token}, expected {want}")
            elif key == "current_version":
                assert error.current_version == want, (
                    f"current version {error.current_version}, expected {want}")
            elif key == "holder_token_of":
                assert error.holder_token == self.token_of(want), (
                    f"holder token {error.holder_token}, expected {want}'s "
                    f"{self.token_of(want)}")
            else:  # unreachable: _ERRORS lists what is handled here
                raise AssertionError(f"unhandled expectation {key!r}")

    def check_result(self, op: str, expect: dict, result: Any) -> None:
        for key, want in expect.items():
            if key == "token_above":
                assert result.token > self.token_of(want), (
                    f"token {result.token}, expected above {want}'s {self.token_of(want)}")
            elif key == "token_same_as":
                assert result.token == self.token_of(want), (
                    f"token {result.token}, expected {want}'s {self.token_of(want)}")
            elif key in ("token_of", "max_token_of"):
                got = result.token if key == "token_of" else result.max_token
                assert got == self.token_of(want), (
                    f"{key[:-3]} {got}, expected {want}'s {self.token_of(want)}")
            elif key == "mode":
                assert result.mode.name.lower() == want, f"mode {result.mode.name}, expected {want}"
            elif key == "value":
                assert result.value == want.encode(), f"value {result.value!r}, expected {want!r}"
            elif key == "versions":
                assert list(result.versions) == want, f"versions {result.versions}, expected {want}"
            elif key in ("lost", "holds_left"):
                assert result == want, f"{key} {result}, expected {want}"
            elif key in ("held", "hold_count", "holders", "permits", "found", "version"):
                got = getattr(result, key)
                assert got == want, f"{key} {got}, expected {want}"
            else:  # unreachable: _SUCCESS lists what is handled here
                raise AssertionError(f"unhandled expectation {key!r}")

    # -- the ops (their names are the file's) ---------------------------

    def acquire_options(self, step: dict) -> dict:
        return dict(ttl=step.get("ttl_ms", 10000) / 1000.0,
                    wait=step.get("wait_ms", 0) / 1000.0,
                    mode=step.get("mode", "exclusive"), holder=self.holder(step))

    def op_acquire(self, step: dict):
        lease = self.client(step).acquire(self.resource(step["resource"]),
                                          permits=step.get("permits", 0),
                                          **self.acquire_options(step))
        if "as" in step:
            self.leases[step["as"]] = lease
        return lease

    def op_acquire_many(self, step: dict):
        multi = self.client(step).acquire_many([self.resource(r) for r in step["resources"]],
                                               **self.acquire_options(step))
        self.multis.append(multi)
        leases = list(multi)
        names = step.get("as", [])
        assert len(names) in (0, len(leases)), "'as' must name every lease of the set"
        self.leases.update(zip(names, leases))
        return multi

    def op_release(self, step: dict) -> None:
        self.lease(step["lease"]).release()

    def op_renew(self, step: dict) -> None:
        self.lease(step["lease"]).renew()

    def op_check(self, step: dict) -> None:
        self.lease(step["lease"]).check()

    def op_lost(self, step: dict) -> bool:
        return self.lease(step["lease"]).lost

    def op_wait_lost(self, step: dict) -> bool:
        return self.lease(step["lease"]).wait_lost(timeout=step["timeout_ms"] / 1000.0)

    def op_release_token(self, step: dict) -> int:
        f = self.fenced(step)
        return self.client(step).release(f.resource, f.token, signature=f.signature,
                                         mode=f.mode)

    def op_renew_token(self, step: dict) -> None:
        f = self.fenced(step)
        self.client(step).renew(f.resource, f.token, ttl=step.get("ttl_ms", 10000) / 1000.0,
                                signature=f.signature, mode=f.mode)

    def op_describe(self, step: dict):
        return self.client(step).describe(self.resource(step["resource"]))

    def op_put(self, step: dict):
        return self.gw.put(self.fenced(step), step["key"], step["value"].encode(),
                           expected_version=step.get("expected_version"))

    def op_delete(self, step: dict):
        return self.gw.delete(self.fenced(step), step["key"],
                              expected_version=step.get("expected_version"))

    def op_multi_write(self, step: dict):
        mutations = []
        for m in step["mutations"]:
            unknown = set(m) - _MUTATION_KEYS
            assert not unknown, f"this runner does not know the mutation keys {sorted(unknown)}"
            assert ("value" in m) != m.get("delete", False), "a mutation puts a value or deletes"
            mutations.append(fencegate.Mutation(
                m["key"], m["value"].encode() if "value" in m else None,
                m.get("expected_version")))
        return self.gw.multi_write(self.fenced(step), mutations)

    def op_get(self, step: dict):
        return self.gw.get(self.fenced(step), step["key"])

    def op_get_unfenced(self, step: dict):
        return self.gw.get_unfenced(self.resource(step["resource"]), step["key"])

    def op_fence(self, step: dict):
        max_token = self.gw.fence(self.fenced(step))
        return _MaxToken(max_token)


class _MaxToken:
    def __init__(self, max_token: int) -> None:
        self.max_token = max_token


def test_every_op_has_a_method() -> None:
    """The vocabulary tables and the op methods name the same ops."""
    methods = {name[3:] for name in dir(_Runner) if name.startswith("op_")}
    assert methods == set(_ARGS)


@pytest.mark.parametrize("scenario", _SCENARIOS, ids=[s["name"] for s in _SCENARIOS])
def test_scenario(scenario: dict, lockservice, locks, gw) -> None:
    assert set(scenario) <= {"name", "description", "steps"}, (
        f"unknown scenario keys {sorted(set(scenario) - {'name', 'description', 'steps'})}")
    assert scenario.get("description"), "every scenario says what it shows"
    runner = _Runner(scenario, lockservice, locks, gw)
    try:
        runner.run(scenario["steps"])
    finally:
        runner.close()
