"""The retry decision of ADAPTER-PROTOCOL.md ("retry" capability) as pure functions.

Randomness enters as `jitter_sample` so that callers, and tests, control it.
"""

from conformance.adapters.reference.failure import Failure
from conformance.events import DeclaredRetryPolicy, RetryPolicy

# 2.0 ** 1024 overflows a float; past this exponent the delay is capped by max_delay_ms anyway.
_MAX_EXPONENT = 1023


def backoff_delay_ms(policy: RetryPolicy, retry_number: int, jitter_sample: float) -> float:
    """Wait before retry `retry_number` (1-based): min(initial·2^(n-1), max)·(1 + jitter·sample).

    `jitter_sample` in [-1, 1] picks the point in [1 - jitter_ratio, 1 + jitter_ratio].
    """
    if retry_number < 1:
        raise ValueError(f"retry_number is 1-based, got {retry_number}")
    if not -1 <= jitter_sample <= 1:
        raise ValueError(f"jitter_sample must lie in [-1, 1], got {jitter_sample}")
    exponent = min(retry_number - 1, _MAX_EXPONENT)
    nominal = min(policy.initial_delay_ms * 2.0**exponent, policy.max_delay_ms)
    return nominal * (1 + policy.jitter_ratio * jitter_sample)


def decide_retry(
    policy: RetryPolicy, failure: Failure, retries_done: int, *, jitter_sample: float
) -> float | None:
    """Delay in ms before retrying after `failure`, or None when the failure is final.

    `retries_done` counts retries already made (0 after the first attempt fails).
    """
    if failure.code not in policy.retryable_codes or failure.should_retry is False:
        return None  # a provider's `x-should-retry: false` knows the failure will repeat
    if retries_done >= policy.max_retries:
        return None
    if failure.retry_after_ms is not None:
        # The provider's own wait is honoured exactly; one beyond our cap is not worth waiting.
        return failure.retry_after_ms if failure.retry_after_ms <= policy.max_delay_ms else None
    return backoff_delay_ms(policy, retries_done + 1, jitter_sample)


def declared_policy(policy: RetryPolicy) -> DeclaredRetryPolicy:
    """What the reference declares in its hello when it runs ``policy`` as its own, in place
    of each case's: the retryable codes wherever a failure comes, its backoff's extremes,
    Retry-After up to ``max_delay_ms`` and no retry above it."""
    jitter = policy.jitter_ratio
    return DeclaredRetryPolicy(
        max_retries=policy.max_retries,
        codes=list(policy.retryable_codes),
        mid_stream=True,
        backoff_min_s=policy.initial_delay_ms * (1 - jitter) / 1000,
        backoff_max_s=policy.max_delay_ms * (1 + jitter) / 1000,
        retry_after=["retry-after"],
        retry_after_max_s=policy.max_delay_ms / 1000,
        over_cap="no-retry",
    )
