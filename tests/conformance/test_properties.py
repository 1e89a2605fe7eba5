"""The central property, one family at a time: the reference adapter keeps it on every
generated case (test_properties_find_mutants.py: each mutant breaks it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import hypothesis
import pytest

from conformance.results import CaseResult, InvariantVerdict
from conformance.run.case_runner import CaseRunner
from conformance.run.properties import breaches, check_family, families, family_invariants
from conformance.run.runner import ObservedCase
from fakeprovider.build import ScenarioBuilder, stream

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reference() -> Iterator[CaseRunner]:
    with CaseRunner() as runner:
        yield runner


def test_the_reference_runs_in_process(reference: CaseRunner) -> None:
    assert reference.transport == "in-process"


@pytest.mark.parametrize("family", families())
def test_the_reference_keeps_every_family(reference: CaseRunner, family: str) -> None:
    run = check_family(reference, family)
    assert run.failure is None, str(run.failure)
    assert run.examples >= hypothesis.settings().max_examples
    # Not vacuous: most of the family's invariants judged cases (all do at larger budgets).
    assert len(run.exercised) >= len(family_invariants(family)) / 2, run.exercised


def test_a_passing_example_builds_no_result(
    reference: CaseRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A result dumps the case's events, requests and scenario; only a breach is reported.
    def unread(*args: object, **kwargs: object) -> CaseResult:
        raise AssertionError("a passing case's result was built")

    monkeypatch.setattr(ObservedCase, "judged", unread)
    run = check_family(reference, "C", settings=hypothesis.settings(max_examples=5))
    assert run.failure is None
    assert run.examples >= 5


def test_running_a_case_formats_no_result(
    reference: CaseRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # asyncio.Runner.run formats its main task, result included, as it puts back the SIGINT
    # handler (Python 3.11): for a case's result that cost more than judging it.
    formatted: list[str] = []

    def counted(name: str) -> Callable[[object], str]:
        return lambda _: formatted.append(name) or name

    monkeypatch.setattr(CaseResult, "__repr__", counted("CaseResult"))
    monkeypatch.setattr(ObservedCase, "__repr__", counted("ObservedCase"))
    scenario = ScenarioBuilder("gen-formatted").attempt(stream().text("Hi").done()).build()
    assert reference.run(scenario).case == "gen-formatted"
    assert reference.observe(scenario).scenario is scenario
    assert formatted == []


def _case(**verdicts: str) -> CaseResult:
    return CaseResult(
        case="gen-x",
        status="completed",
        duration_s=0.1,
        verdicts={
            k: InvariantVerdict(verdict=v, reason=f"{k} saw it") for k, v in verdicts.items()
        },
        events=[],
        expected={},
        requests=[],
    )


def test_a_generated_case_fails_on_failures_only_headlined_by_their_owner() -> None:
    """Non-strict fails only with --strict (which makes it a fail when judging); a crash
    found while fuzzing tool calls is G1's, not a T invariant's."""
    assert breaches(_case(S7="non-strict", T4="pass")) == ()
    crashed = breaches(_case(G1="fail", T4="n/a"))
    assert [breach.invariant for breach in crashed] == ["G1"]
    assert [b.invariant for b in breaches(_case(S7="non-strict"), ("S7",))] == ["S7"]  # a target
