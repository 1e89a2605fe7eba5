"""The provider's side of a case's retries: each wait between attempts as its request log
measured it, beside the adapter's announcement and the spec's bounds.

The provider logs the end of a response as it writes it (the body's last bytes, the
close, the reset), and a request when it has read it; so the gap between attempt n's end
and request n+1's arrival can only exceed the wait the adapter made (but for the moment
between the last write and the log). A stall or a client hang-up is logged when the
provider notices it, after the fact: such an end time is no sound lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from ..events import Retry
from ..oracle import ExpectedAttempt, WaitBounds, wait_bounds
from .evidence import Evidence

# Ends the provider logs before the client can see them (see the module docstring).
_ENDS_LOGGED_FIRST = ("complete", "reset", "closed")


@dataclass(frozen=True)
class Wait:
    """The wait before retry ``retry`` (1-based), i.e. before request ``retry + 1``."""

    retry: int
    failed: ExpectedAttempt  # the attempt that failed, as the oracle reads the scenario
    measured_ms: float | None  # None: the provider never logged the failed attempt's end
    exact_end: bool  # the failed attempt's end was logged before the client could see it
    announced_ms: float | None  # the adapter's `retry` event, if it sent one
    # The wait the contract's policy asks for; None when the case ran with retries off.
    bounds: WaitBounds | None


def announcements(evidence: Evidence) -> dict[int, Retry]:
    """The adapter's `retry` events by the attempt each discarded."""
    return {a.retry.attempt: a.retry for a in evidence.attempts if a.retry is not None}


def waits(evidence: Evidence) -> list[Wait]:
    """One wait per retry the provider saw (every request after the first), in order."""
    records = sorted(evidence.requests, key=lambda record: record.attempt)
    announced = announcements(evidence)
    found: list[Wait] = []
    for before, after in pairwise(records):
        failed = evidence.scenario_attempt(before.attempt)
        measured = None
        if before.ended_at is not None:
            measured = (after.received_at - before.ended_at) * 1000.0
        retry = announced.get(before.attempt)
        found.append(
            Wait(
                retry=before.attempt,
                failed=failed,
                measured_ms=measured,
                exact_end=before.ended in _ENDS_LOGGED_FIRST,
                announced_ms=retry.delay_ms if retry is not None else None,
                bounds=(
                    None
                    if evidence.judged_policy is None
                    else wait_bounds(evidence.judged_policy, failed, before.attempt)
                ),
            )
        )
    return found
