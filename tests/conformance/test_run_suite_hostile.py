"""A whole run survives a hostile adapter: every misbehaving case becomes a recorded result,
and the cases around it are judged as if nothing had happened.

The hostile adapter (adapters_hostile/hostile_adapter.py) misbehaves on the cases whose id
names a misbehaviour and hands every other case to the stdlib example adapter, which passes
the bundled corpus; so any failure of a normal case is damage done by its neighbour.
"""

from __future__ import annotations

import asyncio
import functools
import shlex
import sys
from pathlib import Path

import pytest

from conformance.adapters.subprocess import SubprocessAdapterSession
from conformance.options import RunOptions, bundled_fixtures
from conformance.results import RunResult
from conformance.run.runner import run_suite
from conformance.verdicts import CaseStatus
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario

pytestmark = pytest.mark.timeout(60)

HOSTILE = Path(__file__).parent / "adapters_hostile" / "hostile_adapter.py"
OPTIONS = RunOptions(timeout_s=2.0)
GRACE_S = 0.5
MAX_EVENTS = 1000
MISBEHAVIOURS: dict[str, CaseStatus] = {  # a word in the case id -> how the case is recorded
    "hang": "timeout",
    "exit": "crash",
    "garbage": "protocol-error",  # a line that is not JSON
    "megaline": "protocol-error",  # a 10 MB line that is not JSON
    "huge": "protocol-error",  # a 20 MB line, over the line cap
    "other": "protocol-error",  # an event for another case id
    "flood": "protocol-error",  # more events than the cap, then `end`
    "flood-forever": "protocol-error",  # events past the cap, never `end` (then a timeout)
    "deep": "protocol-error",  # JSON nested 100 000 deep
    "bigint": "protocol-error",  # an integer of 5 000 digits
    "surrogate": "protocol-error",  # a lone surrogate in a string: valid JSON, not text
}
# Quick bundled cases (no retry waits or stalls), one after each misbehaving case.
NORMAL = [
    "tool-cont-null-id-name",
    "utf8-byte-split",
    "reset-mid-stream",
    "invalid-json-payload",
    "empty-stop-with-usage",
    "disconnect-incomplete-chunked",
    "tool-parallel-interleaved",
]


def command(*flags: str) -> str:
    return shlex.join([sys.executable, str(HOSTILE), "--delegate", *flags])


def renamed(scenario: Scenario, case_id: str) -> Scenario:
    return scenario.model_copy(update={"id": case_id})


@functools.cache
def bundled() -> dict[str, Scenario]:
    return {scenario.id: scenario for scenario in load_fixtures([bundled_fixtures()])}


def interleaved() -> list[Scenario]:
    """Each misbehaving case (on a bundled scenario), then a normal bundled case."""
    cases: list[Scenario] = []
    for number, word in enumerate(MISBEHAVIOURS):
        normal = bundled()[NORMAL[number % len(NORMAL)]]
        cases += [renamed(normal, f"c-{word}"), renamed(normal, f"{normal.id}-{number}")]
    return cases


def run(command: str, scenarios: list[Scenario], hello_timeout_s: float = 10.0) -> RunResult:
    async def main() -> RunResult:
        session = await SubprocessAdapterSession.start(
            command,
            hello_timeout_s=hello_timeout_s,
            grace_s=GRACE_S,
            max_events_per_case=MAX_EVENTS,
        )
        try:
            return await run_suite(session, scenarios, OPTIONS)
        finally:
            await session.close()

    return asyncio.run(main())


def test_every_misbehaviour_is_recorded_and_its_neighbours_are_judged() -> None:
    scenarios = interleaved()
    assert not any(word in s.id for s in scenarios[1::2] for word in MISBEHAVIOURS)

    result = run(command(), scenarios)

    assert [case.case for case in result.cases] == [scenario.id for scenario in scenarios]
    for hostile, normal in zip(result.cases[::2], result.cases[1::2], strict=True):
        word = hostile.case.removeprefix("c-")
        assert (hostile.status, word) == (MISBEHAVIOURS[word], word), hostile.detail
        assert hostile.verdicts, f"{hostile.case} was not judged"
        assert normal.status == "completed", normal.detail
        assert normal.verdicts
        failures = {
            id_: verdict.reason
            for id_, verdict in normal.verdicts.items()
            if verdict.verdict in ("fail", "non-strict")
        }
        assert failures == {}, f"{normal.case} after {hostile.case}"
    # Whatever the adapter printed, the results stay small (lines are quoted, not kept) and
    # can be written as UTF-8.
    assert len(result.to_json().encode()) < 2_000_000


def test_a_restart_that_never_greets_makes_the_rest_of_the_run_crashes(tmp_path: Path) -> None:
    marker = tmp_path / "greeted"
    normal = bundled()[NORMAL[0]]
    scenarios = [
        normal,
        renamed(normal, "c-exit"),
        renamed(normal, "after-1"),
        renamed(normal, "after-2"),
    ]

    result = run(command("--silent-restart", str(marker)), scenarios, hello_timeout_s=0.5)

    assert [case.status for case in result.cases] == ["completed", "crash", "crash", "crash"]
    for case in result.cases[2:]:
        assert "adapter unavailable: restart failed" in case.detail
        assert "no hello line within 0.5 s" in case.detail
        assert case.verdicts, f"{case.case} was not judged"
