"""How long a case will take, guessed from its scenario (conformance.run.estimate): what
orders the cases in flight, the longest first."""

from __future__ import annotations

import pytest

from conformance.options import DEFAULT_POLICY, bundled_fixtures, case_policy
from conformance.run.estimate import estimated_duration_s, longest_first
from fakeprovider.fixtures import load_fixtures

CORPUS = {scenario.id: scenario for scenario in load_fixtures([bundled_fixtures()])}


def estimate(case_id: str, *, retries: bool = True, idle_timeout_s: float = 1.0) -> float:
    scenario = CORPUS[case_id]
    policy = case_policy(DEFAULT_POLICY, scenario) if retries else None
    return estimated_duration_s(scenario, policy, idle_timeout_s)


def test_a_stall_costs_the_idle_timeout_per_attempt_made() -> None:
    # Three attempts stall (two retries); with retries off, only the first is made.
    assert estimate("stall-mid-reasoning", idle_timeout_s=0.5) == pytest.approx(1.5, abs=0.01)
    assert estimate("stall-mid-reasoning", retries=False) == pytest.approx(1.0, abs=0.01)


def test_retry_waits_and_scripted_pauses_count() -> None:
    assert estimate("http-429-retry-after-1-then-ok") == pytest.approx(1.0, abs=0.01)
    assert estimate("empty-stop-with-usage") == pytest.approx(0.003)  # backoffs of 1 and 2 ms
    assert estimate("comment-keepalive-openrouter") == pytest.approx(0.1, abs=0.01)
    assert estimate("tool-late-id") == 0.0


def test_the_longest_of_the_corpus_comes_first() -> None:
    ids = list(CORPUS)
    order = longest_first([estimate(case_id) for case_id in ids])
    assert ids[order[0]] == "stall-mid-reasoning"
    assert longest_first([0.0, 2.0, 0.0, 1.0]) == [1, 3, 0, 2]  # ties keep their order
