"""Scenario → expected outcome: each attempt the provider will play, read as the spec does."""

from __future__ import annotations

import time

from fakeprovider.dialects import DialectId
from fakeprovider.playback import stream_plan
from fakeprovider.scenario import (
    ErrorAttempt,
    FaultAttempt,
    Scenario,
    StreamAttempt,
    StreamResponse,
)
from fakeprovider.wire import Ending, WirePlan

from ..codes import TIMEOUT, TRANSPORT
from ..events import ToolCallBlock
from ..verdicts import AltReading
from .http_errors import _http_error, status_failure
from .outcome import ExpectedAttempt, ExpectedOutcome
from .readers import READERS, read_body
from .retrying import AnyRetryPolicy, retry_decision


def expected_outcome(
    scenario: Scenario,
    policy: AnyRetryPolicy | None,
    *,
    now: float | None = None,
    alt: AltReading | None = None,
) -> ExpectedOutcome:
    """The attempts a conforming adapter makes against ``scenario`` with ``policy`` (the
    case's, or the one the adapter declared it runs), reading each as the spec does or
    under ``alt`` (see :func:`expected_attempt`).

    ``policy`` None means retries are off (an adapter without the retry capability).
    """
    attempts: list[ExpectedAttempt] = []
    clock = time.time() if now is None else now
    while True:
        attempt = expected_attempt(scenario, len(attempts) + 1, now=clock, alt=alt)
        attempts.append(attempt)
        if not _retried(attempt, policy, retries_done=len(attempts) - 1):
            return ExpectedOutcome(tuple(attempts))


def _retried(attempt: ExpectedAttempt, policy: AnyRetryPolicy | None, retries_done: int) -> bool:
    return policy is not None and retry_decision(attempt, policy, retries_done) == "retry"


def called_tools(scenario: Scenario) -> tuple[str, ...]:
    """The names of the tools the scenario's streams call, as the oracle reads them, in
    order: what a case's request must offer (a provider calls only tools it was given)."""
    names = (
        block.name
        for number in range(1, len(scenario.attempts) + 1)
        for block in expected_attempt(scenario, number, now=0.0).blocks
        if isinstance(block, ToolCallBlock) and block.name
    )
    return tuple(dict.fromkeys(names))


def expected_attempt(
    scenario: Scenario, number: int, *, now: float, alt: AltReading | None = None
) -> ExpectedAttempt:
    """What a conforming adapter reports for attempt ``number``, reading its stream as the
    spec does, or under ``alt``, another reading an ambiguous quirk leaves open."""
    attempt = scenario.attempt(number)
    if isinstance(attempt, FaultAttempt):
        code = TIMEOUT if attempt.fault == "stall" else TRANSPORT
        return ExpectedAttempt(
            number, "error", code, features=frozenset({f"fault-{attempt.fault}"})
        )
    if isinstance(attempt, ErrorAttempt):
        return _http_error(number, attempt.error, now)
    return _stream(number, scenario, attempt, now, alt)


# --- streams --------------------------------------------------------------------------


def _stream(
    number: int, scenario: Scenario, attempt: StreamAttempt, now: float, alt: AltReading | None
) -> ExpectedAttempt:
    response = attempt.stream
    plan = stream_plan(attempt)  # what the provider plays, not a second encoding
    if not 200 <= response.status < 300:
        return status_failure(number, response.status, response.headers, plan.body, now)
    return read_body(READERS[scenario.dialect](response, alt), plan, number)


# A body received from elsewhere (a gateway) has no scenario steps: no framing feature to
# record, nothing scripted after its terminal event.
_RECEIVED = StreamResponse(steps=())


def received_attempt(
    dialect: DialectId,
    status: int,
    headers: dict[str, str],
    body: bytes,
    ending: Ending,
    *,
    now: float,
) -> ExpectedAttempt:
    """The attempt a response received whole reads as, spoken in ``dialect``: an error
    status classified (H1), a 2xx body read by the dialect's reader as one of its own."""
    if not 200 <= status < 300:
        return status_failure(1, status, headers, body, now)
    return read_body(READERS[dialect](_RECEIVED, None), WirePlan(body, ending=ending), 1)
