"""Hypothesis strategies for the retry properties (INVARIANTS.md R1-R9): a sequence of attempt
outcomes, one per request, under a drawn retry policy.

A case is drawn in three small layers:

1. a whole policy (:func:`whole_policies`): a budget of 0 to 3 retries, the default
   retryable set or a subset of it, and waits of a few milliseconds with or without jitter,
   so a case costs little real time and still has waits the provider can measure;
2. an outcome per attempt, named after what a conforming adapter makes of it
   (:data:`OUTCOMES`): a success, a retryable failure (an empty stop, an unidentified tool
   call, 429, 500, 503, a reset before the headers or mid-body after partial text, a partial
   tool call or a billed usage), a failure no policy here retries (401, 400, a
   context-length 400, a quota 429, a clean end without ``[DONE]``, a payload that is not
   JSON), or a Retry-After above the policy's cap;
3. the case (:func:`retry_cases`): failing outcomes, then any one, as a scenario's
   attempts (the last one repeats), carrying the policy as its ``retry_policy``, so it runs
   and saves like any fixture.

Unlike the R family of :func:`conformance.strategies.family_cases` (an intended response M,
its ``expect``, and one policy field overridden by
:func:`~conformance.strategies.breaking.policy_overrides`), these cases carry no ``expect``:
the properties judge them with the oracle.

Every choice lists its plain option first: cases shrink toward one successful attempt
under the default policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from pydantic import JsonValue

from fakeprovider.build import ScenarioBuilder, StreamBuilder, fault, http_error, stream
from fakeprovider.scenario import Attempt, Scenario
from fakeprovider.wire import default_error_object

from ..codes import DEFAULT_RETRYABLE_CODES
from ._drawing import BOOLEANS, pick, picked, upto
from .breaking import retryable_subsets
from .shape import named_by_content

MakeAttempt = Callable[[int], StreamBuilder | Attempt]  # from the attempt's number

# Waits stay in milliseconds, and a Retry-After (whole seconds) always exceeds the cap, so
# no generated case waits a second; the fixtures hold the cases that do.
MAX_DELAY_MS = 40
JITTERS = (0.0, 0.1, 0.5)


def _answer(number: int) -> StreamBuilder:
    """A text answer naming its attempt, so text of a discarded attempt is recognisable."""
    return (
        stream()
        .role(content="")
        .text(f"Answer of attempt {number}")
        .text(".")
        .finish("stop")
        .usage(24, 7)
        .done()
    )


def _tool_call(number: int) -> StreamBuilder:
    call = f"call_{number:04d}"
    return (
        stream()
        .role()
        .tool_call(0, id=call, type="function", name="get_weather", arguments='{"city": ')
        .tool_call(0, arguments='"Paris"}')
        .finish("tool_calls")
        .usage(64, 15)
        .done()
    )


def _empty(number: int) -> StreamBuilder:
    return stream().role(content="").finish("stop").usage(24, 0).done()


def _unidentified(number: int) -> StreamBuilder:
    named = stream().role().tool_call(0, type="function", name="get_weather", arguments="{}")
    return named.finish("tool_calls").usage(64, 3).done()


def _status(status: int, message: str | None = None, **more: Any) -> MakeAttempt:
    body = None if message is None else default_error_object(status, message)
    return lambda number: http_error(status, body=body, **more)


def _partial_text(number: int) -> StreamBuilder:
    return stream().role(content="").text(f"Partial answer of attempt {number}")


def _reset_mid_text(number: int) -> StreamBuilder:
    return _partial_text(number).reset()


def _reset_mid_tool_call(number: int) -> StreamBuilder:
    call = f"call_{number:04d}"
    return stream().role().tool_call(0, id=call, name="get_weather", arguments='{"ci').reset()


def _reset_after_usage(number: int) -> StreamBuilder:
    """A complete answer and its usage, cut before ``[DONE]``: billed, then TRANSPORT."""
    return _partial_text(number).finish("stop").usage(24, 9).reset()


def _clean_end(number: int) -> StreamBuilder:
    return _partial_text(number).end()


def _not_json(number: int) -> StreamBuilder:
    return stream().role(content="").raw("{not-json").done()


# Named outcomes, plain ones first: how each attempt answers, as a builder of its attempt.
OUTCOMES: dict[str, MakeAttempt] = {
    "text": _answer,
    "tool-call": _tool_call,
    "empty": _empty,
    "unidentified": _unidentified,
    "http-429": _status(429),
    "http-500": _status(500),
    "http-503": _status(503, "The engine is currently overloaded, please try again later"),
    "reset-before-headers": lambda number: fault("reset"),
    "reset-mid-text": _reset_mid_text,
    "reset-mid-tool-call": _reset_mid_tool_call,
    "reset-after-usage": _reset_after_usage,
    "http-401": _status(401),
    "http-400": _status(400),
    "http-400-context": _status(400, "This model's maximum context length is 8192 tokens"),
    "http-429-quota": _status(429, "You exceeded your current quota, please check your plan"),
    "clean-end": _clean_end,
    "not-json": _not_json,
    "retry-after-over-cap": _status(429, retry_after=1),
}


SUCCESSES = ("text", "tool-call")
FAILURES = tuple(name for name in OUTCOMES if name not in SUCCESSES)


@st.composite
def last_outcomes(draw: st.DrawFn) -> str:
    """The last attempt's outcome: a success half of the time, so retries often recover."""
    return picked(draw, tuple(OUTCOMES) if draw(BOOLEANS) else SUCCESSES)


@st.composite
def retryable_sets(draw: st.DrawFn) -> list[str]:
    """The default retryable codes, or the default set with some removed (R3)."""
    return draw(retryable_subsets()) if draw(BOOLEANS) else list(DEFAULT_RETRYABLE_CODES)


@st.composite
def whole_policies(draw: st.DrawFn) -> dict[str, JsonValue]:
    """Every field of a case's retry policy (a scenario's ``retry_policy``)."""
    initial = draw(st.integers(1, MAX_DELAY_MS))
    return {
        "max_retries": draw(upto(3)),
        "retryable_codes": draw(retryable_sets()),
        "initial_delay_ms": initial,
        "max_delay_ms": draw(st.integers(initial, MAX_DELAY_MS)),
        "jitter_ratio": draw(pick(JITTERS)),
    }


@st.composite
def retry_cases(draw: st.DrawFn, max_attempts: int = 4) -> Scenario:
    """A scenario of up to ``max_attempts`` drawn outcomes under a drawn retry policy: the
    attempts before the last fail (so retries have something to reach); the last is any,
    more often a success."""
    before: list[str] = draw(st.lists(pick(FAILURES), max_size=max_attempts - 1))
    outcomes = [*before, draw(last_outcomes())]
    builder = ScenarioBuilder(
        "generated",
        title="Generated retry case: " + ", ".join(outcomes),
        tags=("generated", "R", "retry"),
    )
    for number, outcome in enumerate(outcomes, 1):
        builder.attempt(OUTCOMES[outcome](number))
    return named_by_content(builder.retry_policy(**draw(whole_policies())).build(), "R")
