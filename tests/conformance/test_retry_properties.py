"""The retry properties on generated attempt sequences: the reference adapter keeps R1-R9 (and
every other invariant) whatever each attempt does and whatever the policy says."""

from __future__ import annotations

import asyncio

import pytest
from drawing import FIRST_FOUND
from hypothesis import HealthCheck, find, given, settings

from conformance.adapters.base import PythonAdapterSession
from conformance.adapters.reference import ReferenceAdapter
from conformance.codes import DEFAULT_RETRYABLE_CODES
from conformance.options import DEFAULT_POLICY, RunOptions, case_policy
from conformance.oracle import ExpectedOutcome, expected_outcome
from conformance.results import CaseResult
from conformance.run.runner import run_suite
from conformance.strategies.retry import OUTCOMES, retry_cases
from fakeprovider.scenario import Scenario

OPTIONS = RunOptions(transport="in-process")


def run(scenario: Scenario) -> CaseResult:
    session = PythonAdapterSession(ReferenceAdapter())
    return asyncio.run(run_suite(session, [scenario], OPTIONS)).cases[0]


def conforming(scenario: Scenario) -> ExpectedOutcome:
    return expected_outcome(scenario, case_policy(DEFAULT_POLICY, scenario))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(retry_cases())
def test_the_reference_adapter_keeps_the_retry_invariants(scenario: Scenario) -> None:
    case = run(scenario)
    breaches = {
        invariant: f"{judged.verdict}: {judged.reason}"
        for invariant, judged in case.verdicts.items()
        if judged.verdict in ("fail", "non-strict")
    }
    assert breaches == {}
    assert case.status == "completed"
    expected_attempts = len(conforming(scenario).attempts)
    assert len(case.requests) == expected_attempts
    if expected_attempts > 1:  # the retry invariants were judged, not skipped
        assert {"R1", "R4", "R8", "R9"} <= case.verdicts.keys()


# --- the strategy reaches what the properties are about -----------------------------------


def outcomes_of(scenario: Scenario) -> list[str]:
    return scenario.title.removeprefix("Generated retry case: ").split(", ")


@pytest.mark.parametrize("outcome", list(OUTCOMES))
def test_every_outcome_is_drawn(outcome: str) -> None:
    find(retry_cases(), lambda scenario: outcome in outcomes_of(scenario), settings=FIRST_FOUND)


def test_a_budget_is_retried_through_to_its_end() -> None:
    def exhausted(scenario: Scenario) -> bool:
        attempts = conforming(scenario).attempts
        return len(attempts) == 4 and not attempts[-1].success

    find(retry_cases(), exhausted, settings=FIRST_FOUND)


def test_a_removed_code_is_drawn_where_it_stops_the_retries() -> None:
    def stopped_by_removal(scenario: Scenario) -> bool:
        policy = case_policy(DEFAULT_POLICY, scenario)
        final = conforming(scenario).final
        removed = set(DEFAULT_RETRYABLE_CODES) - set(policy.retryable_codes)
        return final.code in removed and len(scenario.attempts) > final.number

    find(retry_cases(), stopped_by_removal, settings=FIRST_FOUND)


@settings(max_examples=100, deadline=None)
@given(retry_cases())
def test_generated_cases_are_fixtures_with_a_policy_a_run_accepts(scenario: Scenario) -> None:
    attempts = conforming(scenario).attempts
    assert 1 <= len(attempts) <= case_policy(DEFAULT_POLICY, scenario).max_retries + 1
    assert Scenario.model_validate(scenario.model_dump(mode="json")) == scenario
