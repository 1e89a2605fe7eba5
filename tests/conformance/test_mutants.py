"""The honesty rule: every mutant is caught by each of its target invariants, and the
reference adapter, over the same fixtures, by none: the one that follows each case's policy
under the harness contract, and the one that runs the run's policy as its own and declares it
under the interop contract (the contract the own-policy mutants are judged under)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

import pytest
from judged_corpus import judged_fixtures
from rich.console import Console

from conformance.adapters.base import AdapterLoadError, load_python_adapter
from conformance.adapters.mutants import MUTANTS, Mutant
from conformance.adapters.mutants.decoders import LineFeedOnly
from conformance.adapters.mutants.retries import fewer_retries
from conformance.adapters.mutants.translators import EofIsDone
from conformance.adapters.reference import declared_policy
from conformance.adapters.reference.sse import SSEDecoder
from conformance.cli.console import render_kill_table
from conformance.invariants import CATALOGUE
from conformance.invariants.judging import CATCH_ALL
from conformance.options import RunOptions
from conformance.results import RunResult, reproducible_json
from conformance.run.kill_table import Breach, KillRow, focus_cases, run_mutants, run_reference
from conformance.run.properties import breaches
from conformance.run.runner import run_suite

# The module's kill table runs every mutant over the three dialects' corpora (80 mutants, 307
# cases): beyond the default deadline on a loaded machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(360)]

FIXTURES = judged_fixtures()
# In process, and a short case deadline: no_idle_timeout waits for it on the stall fixture.
OPTIONS = RunOptions(transport="in-process", timeout_s=5.0)


OWN_POLICY = "conformance.adapters.reference:own_policy"


@dataclass(frozen=True)
class Outcome:
    reference: RunResult
    own_policy: RunResult  # the reference with a declared policy, judged under interop
    rows: dict[str, KillRow]


@pytest.fixture(scope="module")
def outcome() -> Outcome:
    async def run() -> Outcome:
        # Cases mostly wait on the fake provider's clock: many in flight at once.
        reference = await run_reference(FIXTURES, OPTIONS, jobs=8)
        own = load_python_adapter(OWN_POLICY, OPTIONS)
        # Each mutant runs only the cases that exercise its targets; all mutants at once.
        own_policy, rows = await asyncio.gather(
            run_suite(own, FIXTURES, replace(OPTIONS, contract="interop"), jobs=8),
            run_mutants(FIXTURES, OPTIONS, baseline=reference, jobs=len(MUTANTS)),
        )
        return Outcome(reference, own_policy, {row.mutant: row for row in rows})

    return asyncio.run(run())


@pytest.mark.parametrize("which", ["reference", "own_policy"])
def test_reference_passes_everything(outcome: Outcome, which: str) -> None:
    result: RunResult = getattr(outcome, which)
    problems = [
        f"{case.case} {invariant}: {verdict.verdict} ({verdict.reason})"
        for case in result.cases
        for invariant, verdict in case.verdicts.items()
        if verdict.verdict in ("fail", "non-strict")
    ]
    assert not problems
    assert {case.status for case in result.cases} == {"completed"}


def test_the_own_policy_reference_declares_the_run_s_policy() -> None:
    hello = load_python_adapter(OWN_POLICY, OPTIONS).hello
    assert hello.capabilities.retry
    assert hello.retry_policy == declared_policy(OPTIONS.policy)
    assert hello.retry_policy.codes == OPTIONS.policy.retryable_codes
    assert load_python_adapter(REFERENCE, OPTIONS).hello.retry_policy is None


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_is_killed_by_each_target(outcome: Outcome, name: str) -> None:
    row = outcome.rows[name]
    assert row.cases, f"{name}: no fixture exercises {row.targets}"
    assert not row.timed_out, f"{name}: cases cut off by the runner: {row.timed_out}"
    assert row.killed, f"{name} survived {row.survived}; failed instead: {row.failed}"


def test_a_mutant_with_cases_in_flight_is_judged_as_one_case_at_a_time(outcome: Outcome) -> None:
    """A timing invariant (R5: the backoff, measured at the provider per request) kills its
    mutant the same way with four of its cases in flight as with one at a time."""
    mutant = MUTANTS["no_backoff"]
    cases = focus_cases(FIXTURES, outcome.reference, mutant.targets)

    async def run(jobs: int) -> RunResult:
        session = load_python_adapter(mutant.target, OPTIONS)
        try:
            return await run_suite(session, cases, OPTIONS, jobs=jobs)
        finally:
            await session.close()

    serial, concurrent = asyncio.run(run(1)), asyncio.run(run(4))
    assert reproducible_json(concurrent) == reproducible_json(serial)
    assert any(found.kills for case in concurrent.cases for found in breaches(case, ("R5",)))


def test_a_rule_judged_on_every_case_is_tagged_where_its_bug_shows(outcome: Outcome) -> None:
    """Where a rule is judged ("every case") is not which stream provokes it: each such
    invariant with a mutant is tagged on a fixture where that mutant is caught by it."""
    problems = []
    for invariant in CATALOGUE.values():
        rows = [row for row in outcome.rows.values() if invariant.id in row.targets]
        if invariant.scope is None or not rows:
            continue
        tagged = {scenario.id for scenario in FIXTURES if invariant.id in scenario.tags}
        caught = {case for row in rows for case in row.cases_killing(invariant.id)}
        if not tagged & caught:
            problems.append(f"{invariant.id}: tagged on {sorted(tagged)}, caught on none")
    assert problems == []


def test_every_must_invariant_of_the_core_and_retry_families_has_a_mutant() -> None:
    """A catch-all (R8) reports only what no narrower invariant found, so no mutant can be
    killed by it alone; its checker is proven in test_retry_invariants instead."""
    targeted = {target for mutant in MUTANTS.values() for target in mutant.targets}
    must = {
        invariant.id
        for invariant in CATALOGUE.values()
        if invariant.family in ("G", "C", "T", "E", "S", "H", "R")
        and invariant.level == "MUST"
        and invariant.id not in CATCH_ALL
    }
    assert must - targeted == set()


REFERENCE = "conformance.adapters.reference:factory"


def test_a_mutant_loads_by_name_like_any_adapter() -> None:
    session = load_python_adapter("conformance.adapters.mutants:eof_is_done", OPTIONS)
    assert session.hello.name == "streamconform-mutant-eof_is_done"
    assert session.hello.capabilities == load_python_adapter(REFERENCE, OPTIONS).hello.capabilities
    lying = load_python_adapter("conformance.adapters.mutants:declares_fewer_retries", OPTIONS)
    assert lying.hello.retry_policy == fewer_retries(declared_policy(OPTIONS.policy))
    assert MUTANTS["declares_fewer_retries"].contract == "interop"
    assert MUTANTS["eof_is_done"].contract == "harness"
    with pytest.raises(AdapterLoadError, match="no such mutant"):
        load_python_adapter("conformance.adapters.mutants:no_such_bug", OPTIONS)


def test_a_mutant_has_one_bug_and_known_targets() -> None:
    with pytest.raises(ValueError, match="exactly one piece"):
        Mutant("two_bugs", "two pieces", ("S5",), translator=EofIsDone, decoder=LineFeedOnly)
    with pytest.raises(ValueError, match="exactly one piece"):
        Mutant("no_bug", "nothing swapped", ("S5",), decoder=SSEDecoder)
    with pytest.raises(ValueError, match="unknown or no target"):
        Mutant("bad_target", "eof is done", ("Z9",), translator=EofIsDone)
    with pytest.raises(ValueError, match="only a policy of its own can be misdeclared"):
        Mutant("lie", "declares less", ("R2",), misdeclared=fewer_retries)


def test_kill_table_renders_every_mutant(outcome: Outcome) -> None:
    console = Console(record=True, width=240)
    console.print(render_kill_table(list(outcome.rows.values())))
    text = console.export_text()
    assert all(name in text for name in MUTANTS)
    assert f"{len(MUTANTS)}/{len(MUTANTS)} mutants killed" in text


def test_only_a_checker_verdict_of_a_completed_case_kills() -> None:
    def row(*breaches: Breach) -> KillRow:
        return KillRow("m", "bug", ("T1", "H1"), ("a", "b"), breaches, ("b",), 0.0)

    assert row(
        Breach("T1", "a", "fail", "", True), Breach("H1", "a", "non-strict", "", True)
    ).killed
    weaker_must = row(
        Breach("T1", "a", "non-strict", "", True), Breach("H1", "a", "fail", "", True)
    )
    assert weaker_must.survived == ("T1",)
    cut_off = row(Breach("T1", "b", "fail", "", False), Breach("H1", "a", "fail", "", True))
    assert cut_off.survived == cut_off.timeout_only == ("T1",)
    assert cut_off.failed == ("T1", "H1")
