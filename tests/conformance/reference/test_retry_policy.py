"""Tests of the reference retry decision (ADAPTER-PROTOCOL "retry"; invariants R1-R3, R5, R6)."""

import pytest

from conformance.adapters.reference import Failure, backoff_delay_ms, decide_retry
from conformance.events import RetryPolicy


def policy(**change: object) -> RetryPolicy:
    fields: dict[str, object] = {
        "max_retries": 5,
        "initial_delay_ms": 500,
        "max_delay_ms": 10_000,
        "jitter_ratio": 0.1,
    }
    return RetryPolicy.model_validate(fields | change)


@pytest.mark.parametrize(
    ("retry_number", "nominal"),
    [
        (1, 500),
        (2, 1000),
        (3, 2000),
        (4, 4000),
        (5, 8000),
        (6, 10_000),
        (7, 10_000),
        (5000, 10_000),
    ],
)
def test_backoff_doubles_up_to_the_cap(retry_number: int, nominal: float) -> None:
    assert backoff_delay_ms(policy(), retry_number, 0.0) == nominal


@pytest.mark.parametrize(("sample", "factor"), [(-1.0, 0.9), (1.0, 1.1), (0.5, 1.05)])
def test_jitter_scales_within_the_ratio(sample: float, factor: float) -> None:
    assert backoff_delay_ms(policy(), 2, sample) == pytest.approx(1000 * factor)
    assert backoff_delay_ms(policy(), 9, sample) == pytest.approx(10_000 * factor)


def test_full_jitter_can_reach_zero() -> None:
    assert backoff_delay_ms(policy(jitter_ratio=1), 1, -1.0) == 0


@pytest.mark.parametrize(("retry_number", "sample"), [(0, 0.0), (1, 1.5), (1, -1.01)])
def test_backoff_rejects_out_of_range_arguments(retry_number: int, sample: float) -> None:
    with pytest.raises(ValueError):
        backoff_delay_ms(policy(), retry_number, sample)


def test_retryable_failure_waits_the_backoff_of_the_next_retry() -> None:
    server = Failure("SERVER", "busy")
    assert decide_retry(policy(jitter_ratio=0), server, 0, jitter_sample=0) == 500
    assert decide_retry(policy(jitter_ratio=0), server, 2, jitter_sample=0) == 2000
    assert decide_retry(policy(), server, 1, jitter_sample=-1) == pytest.approx(900)


@pytest.mark.parametrize(
    "code",
    ["EMPTY_RESPONSE", "MALFORMED_TOOL_CALL", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"],
)
def test_default_retryable_codes_are_retried(code: str) -> None:
    assert decide_retry(policy(), Failure(code, "x"), 0, jitter_sample=0) is not None


@pytest.mark.parametrize(
    "code",
    [
        "STREAM_CLOSED",
        "MALFORMED_RESPONSE",
        "AUTH",
        "QUOTA",
        "INVALID_REQUEST",
        "HTTP_404",
        "ABORTED",
    ],
)
def test_other_codes_are_not_retried(code: str) -> None:
    assert decide_retry(policy(), Failure(code, "x"), 0, jitter_sample=0) is None


def test_removing_a_code_stops_its_retries() -> None:
    narrowed = policy(retryable_codes=["SERVER"])
    assert decide_retry(narrowed, Failure("EMPTY_RESPONSE", "x"), 0, jitter_sample=0) is None
    assert decide_retry(narrowed, Failure("SERVER", "x"), 0, jitter_sample=0) is not None


def test_budget_is_max_retries() -> None:
    two = policy(max_retries=2)
    assert decide_retry(two, Failure("SERVER", "x"), 1, jitter_sample=0) is not None
    assert decide_retry(two, Failure("SERVER", "x"), 2, jitter_sample=0) is None
    assert decide_retry(policy(max_retries=0), Failure("SERVER", "x"), 0, jitter_sample=0) is None


def test_provider_retry_after_within_the_cap_is_waited_exactly() -> None:
    limited = Failure("RATE_LIMIT", "slow", status=429, retry_after_ms=2000)
    assert decide_retry(policy(), limited, 0, jitter_sample=1) == 2000
    at_cap = Failure("RATE_LIMIT", "slow", status=429, retry_after_ms=10_000)
    assert decide_retry(policy(), at_cap, 0, jitter_sample=1) == 10_000


def test_provider_retry_after_above_the_cap_is_not_retried() -> None:
    limited = Failure("RATE_LIMIT", "slow", status=429, retry_after_ms=10_001)
    assert decide_retry(policy(), limited, 0, jitter_sample=0) is None


def test_retry_after_does_not_make_a_final_failure_retryable() -> None:
    auth = Failure("AUTH", "no", status=401, retry_after_ms=1000)
    assert decide_retry(policy(), auth, 0, jitter_sample=0) is None
    exhausted = Failure("RATE_LIMIT", "slow", status=429, retry_after_ms=1000)
    assert decide_retry(policy(max_retries=1), exhausted, 1, jitter_sample=0) is None
