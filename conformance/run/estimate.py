"""How long a case will take, guessed from its scenario before it runs.

With several cases in flight, a run ends when its longest case ends, so the long ones start
first (``--jobs``). Almost all of a case's time is what its scenario makes it wait: pauses,
stalls (an adapter gives up on them after the idle timeout) and the waits between retries,
and the oracle already knows which attempts a conforming adapter makes and how long it waits
before each retry. A guess only orders the cases: no result depends on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from fakeprovider.scenario import (
    ErrorAttempt,
    FaultAttempt,
    PauseStep,
    Scenario,
    StallStep,
    StreamAttempt,
)

from ..events import RetryPolicy
from ..oracle import expected_outcome
from ..oracle.retrying import wait_bounds


def estimated_duration_s(
    scenario: Scenario, policy: RetryPolicy | None, idle_timeout_s: float
) -> float:
    """Seconds ``scenario`` makes a conforming adapter wait under ``policy`` (None: retries
    off): every expected attempt's pauses and stalls, and the longest wait allowed before
    each retry."""
    outcome = expected_outcome(scenario, policy)
    waited = sum(
        _scripted_wait_s(scenario.attempt(attempt.number), idle_timeout_s)
        for attempt in outcome.attempts
    )
    if policy is not None:
        for retry, failed in enumerate(outcome.attempts[:-1], 1):
            waited += wait_bounds(policy, failed, retry).upper_ms / 1000
    return waited


def longest_first(estimates: Sequence[float]) -> list[int]:
    """The positions of ``estimates``, the longest first; equal ones keep their order."""
    return sorted(range(len(estimates)), key=lambda position: -estimates[position])


def _scripted_wait_s(
    attempt: StreamAttempt | ErrorAttempt | FaultAttempt, idle_timeout_s: float
) -> float:
    if isinstance(attempt, FaultAttempt):
        return idle_timeout_s if attempt.fault == "stall" else 0.0
    if isinstance(attempt, ErrorAttempt):
        return 0.0
    waited = 0.0
    for step in attempt.stream.steps:
        if isinstance(step, PauseStep):  # a pause past the idle timeout is given up on
            waited += min(step.pause_ms / 1000, idle_timeout_s)
        elif isinstance(step, StallStep):
            waited += idle_timeout_s
    return waited
