"""The oracle's reading of a declared retry policy (a hello's ``retry_policy``): which failures
it retries, when it stops, and the wait before each retry."""

from __future__ import annotations

import pytest

from conformance.adapters.thirdparty.retry_policies import openai_sdk
from conformance.events import RetryPolicy
from conformance.oracle import (
    ExpectedAttempt,
    RetryDecision,
    expected_outcome,
    retry_decision,
    wait_bounds,
)
from fakeprovider.build import ScenarioBuilder, fault, http_error, stream

SDK = openai_sdk()  # openai-python's defaults, as its shims declare them


def first(attempt: object) -> ExpectedAttempt:
    """The oracle's reading of a scenario's first attempt."""
    built = ScenarioBuilder("s").attempt(attempt).build()  # type: ignore[arg-type]
    return expected_outcome(built, None, now=1_000.0).final


def text_then(ending: str) -> object:
    partial = stream().role().text("Hel")
    return partial.reset() if ending == "reset" else partial.stall()


@pytest.mark.parametrize(
    ("attempt", "decision"),
    [
        (http_error(429), "retry"),
        (http_error(529), "retry"),  # a class: 5xx
        (http_error(408), "retry"),  # HTTP_408: listed by status, not by code
        (http_error(400), "not-retryable"),
        (http_error(401), "not-retryable"),
        (http_error(500, headers={"x-should-retry": "false"}), "not-retryable"),
        (http_error(400, headers={"x-should-retry": "true"}), "retry"),
        (http_error(429, retry_after=121), "retry-after-over-cap"),
        (fault("reset"), "retry"),  # TRANSPORT before any response
        (fault("stall"), "retry"),  # TIMEOUT before any response
        (text_then("reset"), "not-retryable"),  # TRANSPORT in a body: not mid_stream
        (text_then("stall"), "not-retryable"),
        (stream().role().finish("stop").done(), "not-retryable"),  # EMPTY_RESPONSE
        (stream().role().text("Hi").finish("stop").done(), "success"),
    ],
)
def test_a_declared_policy_retries_its_statuses_and_codes(
    attempt: object, decision: RetryDecision
) -> None:
    assert retry_decision(first(attempt), SDK, 0) == decision


def test_codes_decide_mid_stream_only_when_declared_and_statuses_may_be_codes() -> None:
    everywhere = SDK.model_copy(update={"mid_stream": True, "codes": ["TRANSPORT", "SERVER"]})
    assert retry_decision(first(text_then("reset")), everywhere, 0) == "retry"
    assert retry_decision(first(text_then("stall")), everywhere, 0) == "not-retryable"
    by_code = SDK.model_copy(update={"statuses": [], "codes": ["SERVER"]})
    assert retry_decision(first(http_error(503)), by_code, 0) == "retry"
    assert retry_decision(first(http_error(429)), by_code, 0) == "not-retryable"
    deaf = SDK.model_copy(update={"should_retry_header": False})
    said_no = first(http_error(500, headers={"x-should-retry": "false"}))
    assert retry_decision(said_no, deaf, 0) == "retry"


def test_the_declared_budget_ends_the_retries() -> None:
    assert retry_decision(first(http_error(500)), SDK, 1) == "retry"
    assert retry_decision(first(http_error(500)), SDK, 2) == "budget-spent"
    none = SDK.model_copy(update={"max_retries": 0})
    assert retry_decision(first(http_error(500)), none, 0) == "budget-spent"
    built = ScenarioBuilder("s").attempt(http_error(500)).build()
    assert len(expected_outcome(built, SDK).attempts) == 3


def test_the_wait_is_within_the_declared_bounds_unless_a_read_header_directs_it() -> None:
    backoff = wait_bounds(SDK, first(http_error(500)), 1)
    assert (backoff.lower_ms, backoff.upper_ms, backoff.source) == (375, 8000, "backoff")
    assert wait_bounds(SDK, first(http_error(500)), 5) == backoff  # flat bounds
    seconds = wait_bounds(SDK, first(http_error(429, retry_after=1)), 1)
    assert (seconds.lower_ms, seconds.upper_ms, seconds.source) == (1000, 1000, "retry-after")
    both = first(http_error(429, retry_after=1, headers={"retry-after-ms": "300"}))
    assert wait_bounds(SDK, both, 1).lower_ms == 300  # the first header listed wins
    only_seconds = SDK.model_copy(update={"retry_after": ["retry-after"]})
    assert wait_bounds(only_seconds, both, 1).lower_ms == 1000
    deaf = SDK.model_copy(update={"retry_after": []})
    assert wait_bounds(deaf, both, 1).source == "backoff"
    # Retry-After: 0 may be taken at its word or as no directive: anything from 0 to the
    # declared backoff's top is fine; a layer that does not read the header keeps its floor.
    zero = first(http_error(429, retry_after=0))
    assert (wait_bounds(SDK, zero, 1).lower_ms, wait_bounds(SDK, zero, 1).upper_ms) == (0, 8000)
    assert wait_bounds(deaf, zero, 1).lower_ms == 375
    assert retry_decision(first(http_error(429, retry_after=500)), deaf, 0) == "retry"


def test_a_wait_over_the_cap_is_no_retry_or_the_backoff_as_declared() -> None:
    over = first(http_error(429, retry_after=121))
    assert retry_decision(over, SDK, 0) == "retry-after-over-cap"
    backs_off = SDK.model_copy(update={"over_cap": "backoff"})
    assert retry_decision(over, backs_off, 0) == "retry"
    assert wait_bounds(backs_off, over, 1).source == "backoff"
    uncapped = SDK.model_copy(update={"retry_after_max_s": None})
    assert retry_decision(over, uncapped, 0) == "retry"
    assert wait_bounds(uncapped, over, 1).lower_ms == 121_000


def test_the_case_policy_reads_as_before() -> None:
    """A case's policy: codes only, Retry-After over max_delay not retried, its wait exact
    whatever the cap (a retry over it is judged against what the provider asked)."""
    policy = RetryPolicy(max_retries=2, initial_delay_ms=10, max_delay_ms=100, jitter_ratio=0)
    assert retry_decision(first(http_error(408)), policy, 0) == "not-retryable"
    assert retry_decision(first(text_then("reset")), policy, 0) == "retry"
    over = first(http_error(429, retry_after=1))
    assert retry_decision(over, policy, 0) == "retry-after-over-cap"
    assert wait_bounds(policy, over, 1).source == "retry-after"
