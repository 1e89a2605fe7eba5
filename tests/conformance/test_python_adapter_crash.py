"""A Python adapter that raises: its traceback is kept as the case's stderr, and the reasons
name the exception it raised."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator

import httpx
import pytest
import yaml

from conformance.adapters.base import TRACEBACK_LINES, PythonAdapterSession
from conformance.events import Capabilities, End, Event, Hello, RunCase, Thrown
from conformance.invariants.conforming import conforming_evidence
from conformance.invariants.transport import check_reset_is_transport
from conformance.options import RunOptions
from conformance.results import CaseResult
from conformance.run.runner import run_suite
from fakeprovider.scenario import Scenario

RESET_CASE = """\
id: reset
title: A reset after one text delta (TRANSPORT)
expect: {finish: error, code: TRANSPORT, attempts: 3}
attempts:
  - stream:
      steps:
        - chunk: {choices: [{index: 0, delta: {role: assistant, content: Hi}, finish_reason: null}]}
        - reset
"""


CLOSED = "peer closed the connection"


def read_body(message: str) -> None:
    raise httpx.ReadError(message)


class Crashing:
    """Declares no error codes and raises a ReadError from inside its reading."""

    hello = Hello(protocol=1, name="crashing", version="0", capabilities=Capabilities())

    def __init__(self, message: str) -> None:
        self.message = message

    def run(self, case: RunCase) -> Iterator[Event]:
        read_body(self.message)
        yield from ()


def crashed(message: str = CLOSED) -> CaseResult:
    scenario = Scenario.model_validate(yaml.safe_load(RESET_CASE))
    session = PythonAdapterSession(Crashing(message))
    result = asyncio.run(run_suite(session, [scenario], RunOptions(timeout_s=5.0)))
    return result.cases[0]


def test_the_traceback_is_kept_as_the_case_stderr() -> None:
    stderr = crashed().stderr
    assert stderr.startswith("Traceback (most recent call last):")
    assert "in read_body" in stderr
    assert stderr.endswith(f"httpx.ReadError: {CLOSED}")


def test_a_long_traceback_keeps_its_last_lines() -> None:
    lines = crashed("\n".join(f"line {n}" for n in range(100))).stderr.splitlines()
    assert len(lines) == TRACEBACK_LINES
    assert lines[-1] == "line 99"


def test_the_crash_verdict_names_the_exception() -> None:
    assert f"ReadError: {CLOSED}" in crashed().verdicts["G1"].reason


@pytest.mark.parametrize("error_codes", [True, False])
def test_a_reason_names_what_was_thrown_without_a_code(error_codes: bool) -> None:
    """Judged alone (G1 owns the crash in a run): H3's reason quotes the exception."""
    scenario = Scenario.model_validate(yaml.safe_load(RESET_CASE))
    evidence = dataclasses.replace(
        conforming_evidence(scenario, RunOptions()),
        events=(Thrown(message=f"ReadError: {CLOSED}"), End()),
        capabilities=Capabilities(error_codes=error_codes),
    )
    judgement = check_reset_is_transport(evidence)
    assert judgement is not None and not judgement.held
    assert f"threw (no code): ReadError: {CLOSED}" in judgement.reason
    assert "None" not in judgement.reason
