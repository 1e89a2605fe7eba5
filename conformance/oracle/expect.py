"""Scenario → expected outcome: each attempt the provider will play, read as the spec does."""

from __future__ import annotations

import copy
import dataclasses
import time

from fakeprovider.playback import stream_plan
from fakeprovider.scenario import ErrorAttempt, FaultAttempt, Scenario, StreamAttempt

from ..codes import STREAM_CLOSED, TIMEOUT, TRANSPORT
from ..verdicts import AltReading
from .http_errors import _http_error, _status_failure
from .outcome import ExpectedAttempt, ExpectedOutcome
from .reading import _framing_features, _Reading, sse_payloads
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
    return _stream(number, attempt, now, alt)


# --- streams --------------------------------------------------------------------------


def _stream(
    number: int, attempt: StreamAttempt, now: float, alt: AltReading | None
) -> ExpectedAttempt:
    response = attempt.stream
    plan = stream_plan(attempt)  # what the provider plays, not a second encoding
    if not 200 <= response.status < 300:
        return _status_failure(number, response.status, response.headers, plan.body, now)
    payloads = sse_payloads(plan.body)
    reading = _Reading(features=set(_framing_features(response)), alt=alt)
    for payload in payloads:
        if reading.failure is not None:
            break
        if payload == "[DONE]":
            reading.done = True
            break
        reading.read_payload(payload)
    if not reading.done:
        # What follows a [DONE] the reading never reached is not S4's to judge.
        reading.features.discard("after-done")
    if reading.failure is None and not reading.done:
        # A disconnect in a body without chunked coding is played, and read, as its close.
        flushed = sse_payloads(plan.body, flush=True)[len(payloads) :]
        # Under interop a body the wire ended after its finish, closed, reset or cut, may be
        # read as finished: all the provider sent had arrived (H3 and S5 alike).
        ended = plan.ending != "stall"
        finished = _finished_readings(reading, flushed, number) if ended else ()
        failure = _UNFINISHED[plan.ending]
        reading.fail(*failure)
        unfinished = reading.result(number)
        # S5's [DONE] is the harness's duty: the finished readings are the interop ones,
        # with the wire features of the body as it ended.
        readings = tuple(
            dataclasses.replace(r, features=r.features | unfinished.features, interop_readings=())
            for r in finished
        )
        if finished and failure[0] == TRANSPORT:
            # Or read as the close it follows, then refused for want of [DONE].
            readings += (dataclasses.replace(unfinished, code=STREAM_CLOSED),)
        return dataclasses.replace(unfinished, interop_readings=readings)
    return reading.result(number)


def _finished_readings(
    reading: _Reading, unterminated: list[str], number: int
) -> tuple[ExpectedAttempt, ...]:
    """The attempt as if [DONE] had followed, where the wire's finish had come, each with
    its own relaxed readings: with an event the body left unterminated discarded (WHATWG)
    or read (parsers that flush at the end of the body)."""
    found: list[ExpectedAttempt] = []
    for pending in ([], [payload for payload in unterminated if payload != "[DONE]"]):
        finished = copy.deepcopy(reading)
        for payload in pending:
            finished.read_payload(payload)
        if finished.finish_reason is None or finished.failure is not None:
            continue
        finished.done = True
        attempt = finished.result(number)
        found += [r for r in (attempt, *attempt.interop_readings) if r not in found]
    return tuple(found)


# How a body that never reached [DONE] ends: the failure code and the wire feature.
_UNFINISHED = {
    "close": (STREAM_CLOSED, "no-done"),
    "reset": (TRANSPORT, "reset"),
    "stall": (TIMEOUT, "stall"),
    "disconnect": (TRANSPORT, "disconnect"),
}
