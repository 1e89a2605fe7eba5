"""The retry decisions and waits of a conforming retry layer, between a case's attempts.

Two kinds of policy: the case's own (:class:`~conformance.events.RetryPolicy`, which an
adapter with the ``retry`` capability follows: INVARIANTS.md R1-R6), and the one an adapter
declares it runs instead (:class:`~conformance.events.DeclaredRetryPolicy`, a library's own
retry layer): retried statuses and codes, flat backoff bounds, the Retry-After headers it
reads and the cap above which it stops waiting for them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from ..events import DeclaredRetryPolicy, RetryPolicy
from .outcome import ExpectedAttempt

AnyRetryPolicy = RetryPolicy | DeclaredRetryPolicy
RetryDecision = Literal["success", "not-retryable", "budget-spent", "retry-after-over-cap", "retry"]


def retry_decision(
    attempt: ExpectedAttempt, policy: AnyRetryPolicy, retries_done: int
) -> RetryDecision:
    """Whether a conforming retry layer retries after ``attempt`` (R1 to R3, R6), and if not,
    why.

    ``retries_done`` counts the retries made before it (0 after the first attempt).
    """
    if attempt.success:
        return "success"
    if not _retryable(attempt, policy):
        return "not-retryable"
    if retries_done >= policy.max_retries:
        return "budget-spent"
    if _over_cap(attempt, policy) and _stops_over_cap(policy):
        return "retry-after-over-cap"
    return "retry"


@dataclass(frozen=True)
class WaitBounds:
    """The wait the spec asks for before a retry, in ms (R5, R6); no tolerance added."""

    lower_ms: float
    upper_ms: float
    source: Literal["backoff", "retry-after"]


def wait_bounds(policy: AnyRetryPolicy, failed: ExpectedAttempt, retry: int) -> WaitBounds:
    """The wait before retry ``retry`` (1-based) after ``failed``.

    A provider-directed wait the policy reads replaces the backoff and is waited exactly
    (unless the policy declares a backoff for waits over its cap). Otherwise, under a case's
    policy, the backoff ``min(initial·2^(retry-1), max)`` is scaled by a factor in
    ``[1-jitter, 1+jitter]``; under a declared one, it lies within the declared bounds.
    """
    directed = directed_wait_ms(failed, policy)
    if directed is not None and (_stops_over_cap(policy) or not _over_cap(failed, policy)):
        return WaitBounds(directed, directed, "retry-after")
    if isinstance(policy, DeclaredRetryPolicy):
        # "Retry after 0 s": retrying at once honours it, reading it as no directive falls
        # back to the backoff; neither costs the caller anything, so both are within bounds.
        lower = 0.0 if _asks_for_no_wait(failed, policy) else policy.backoff_min_s * 1000.0
        return WaitBounds(lower, policy.backoff_max_s * 1000.0, "backoff")
    # Past 2**1023 the float overflows; the cap has long taken over by then.
    nominal = min(policy.initial_delay_ms * 2.0 ** min(retry - 1, 1023), policy.max_delay_ms)
    jitter = policy.jitter_ratio
    return WaitBounds(nominal * (1 - jitter), nominal * (1 + jitter), "backoff")


def directed_wait_ms(attempt: ExpectedAttempt, policy: AnyRetryPolicy) -> float | None:
    """The wait the provider asked for that ``policy`` reads, in ms; None when it reads none.

    A case's policy reads Retry-After (seconds or an HTTP date); a declared one the headers
    it lists, the first that carries a positive delay.
    """
    if isinstance(policy, RetryPolicy):
        return attempt.retry_after_ms
    for header in policy.retry_after:
        found = attempt.retry_after_ms if header == "retry-after" else _milliseconds(attempt)
        if found is not None:
            return found
    return None


def _asks_for_no_wait(attempt: ExpectedAttempt, policy: DeclaredRetryPolicy) -> bool:
    """A header the declared policy reads says to wait zero (``Retry-After: 0``)."""
    for header in policy.retry_after:
        value = (attempt.header(header) or "").strip()
        try:
            if value and float(value) == 0:
                return True
        except ValueError:
            continue
    return False


def _milliseconds(attempt: ExpectedAttempt) -> float | None:
    """``retry-after-ms``: a positive, finite number of milliseconds."""
    try:
        value = float(attempt.header("retry-after-ms") or "")
    except ValueError:
        return None
    return value if value > 0 and math.isfinite(value) else None


def _retryable(attempt: ExpectedAttempt, policy: AnyRetryPolicy) -> bool:
    if isinstance(policy, RetryPolicy):
        return attempt.code in policy.retryable_codes
    if attempt.status is not None and not attempt.in_body:  # an error status
        said = attempt.header("x-should-retry")
        if policy.should_retry_header and said in ("true", "false"):
            return said == "true"
        return policy.retries_status(attempt.status) or attempt.code in policy.codes
    if attempt.in_body and not policy.mid_stream:
        return False
    return attempt.code in policy.codes


def _over_cap(attempt: ExpectedAttempt, policy: AnyRetryPolicy) -> bool:
    """The provider asked for a wait longer than the policy waits for."""
    directed = directed_wait_ms(attempt, policy)
    if directed is None:
        return False
    if isinstance(policy, RetryPolicy):
        return directed > policy.max_delay_ms
    cap = policy.retry_after_max_s
    return cap is not None and directed > cap * 1000.0


def _stops_over_cap(policy: AnyRetryPolicy) -> bool:
    """A wait over the cap means no retry (the case's policy), or a declared choice."""
    return isinstance(policy, RetryPolicy) or policy.over_cap == "no-retry"
