"""What the oracle states: the expected attempts of a case and the retry decisions between them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..events import Block, RetryPolicy, Usage

SUCCESS_REASONS = ("stop", "tool-calls", "max-tokens")


@dataclass(frozen=True)
class ExpectedAttempt:
    """What a conforming adapter reports for one attempt."""

    number: int
    reason: str  # finish reason: stop, tool-calls, max-tokens, error
    code: str | None = None  # failure code when reason is error
    blocks: tuple[Block, ...] = ()  # assembled blocks; on failure, the ones opened so far
    usage: Usage | None = None  # the usage event due before the finish, if any
    # The last usage the wire sent, even in an attempt that failed before [DONE]: tokens
    # billed, which a discarded attempt should still report before its failure (R9).
    billed_usage: Usage | None = None
    retry_after_ms: float | None = None
    status: int | None = None  # HTTP status of an error response
    features: frozenset[str] = frozenset()
    # A body that closed after its finish but before [DONE]: the attempt read as if [DONE]
    # had come, which the interop contract accepts (S5).
    finished_reading: ExpectedAttempt | None = None

    @property
    def success(self) -> bool:
        return self.reason in SUCCESS_REASONS

    def summary(self) -> dict[str, Any]:
        """A JSON-ready view, as reports show it."""
        out: dict[str, Any] = {"attempt": self.number, "finish": self.reason}
        if self.code:
            out["code"] = self.code
        if self.blocks:
            out["blocks"] = [block.model_dump() for block in self.blocks]
        if self.usage:
            out["usage"] = self.usage.model_dump(exclude_none=True, exclude={"case", "type"})
        elif self.billed_usage:  # a failure before [DONE] after the wire's usage (R9)
            out["billed_usage"] = self.billed_usage.model_dump(
                exclude_none=True, exclude={"case", "type"}
            )
        if self.retry_after_ms is not None:
            out["retry_after_ms"] = self.retry_after_ms
        out["features"] = sorted(self.features)
        return out


@dataclass(frozen=True)
class ExpectedOutcome:
    """Every attempt the adapter should make under the policy; the last one is visible."""

    attempts: tuple[ExpectedAttempt, ...]

    @property
    def final(self) -> ExpectedAttempt:
        return self.attempts[-1]

    @property
    def features(self) -> frozenset[str]:
        return frozenset().union(*(attempt.features for attempt in self.attempts))

    def summary(self) -> dict[str, Any]:
        return {"attempts": [attempt.summary() for attempt in self.attempts]}


RetryDecision = Literal["success", "not-retryable", "budget-spent", "retry-after-over-cap", "retry"]


def retry_decision(
    attempt: ExpectedAttempt, policy: RetryPolicy, retries_done: int
) -> RetryDecision:
    """Whether a conforming retry layer retries after ``attempt`` (R1 to R3, R6), and if not,
    why.

    ``retries_done`` counts the retries made before it (0 after the first attempt).
    """
    if attempt.success:
        return "success"
    if attempt.code not in policy.retryable_codes:
        return "not-retryable"
    if retries_done >= policy.max_retries:
        return "budget-spent"
    if attempt.retry_after_ms is not None and attempt.retry_after_ms > policy.max_delay_ms:
        return "retry-after-over-cap"
    return "retry"


@dataclass(frozen=True)
class WaitBounds:
    """The wait the spec asks for before a retry, in ms (R5, R6); no tolerance added."""

    lower_ms: float
    upper_ms: float
    source: Literal["backoff", "retry-after"]


def wait_bounds(policy: RetryPolicy, failed: ExpectedAttempt, retry: int) -> WaitBounds:
    """The wait before retry ``retry`` (1-based) after ``failed``.

    A usable Retry-After replaces the backoff and is waited exactly; otherwise the backoff
    ``min(initial·2^(retry-1), max)`` is scaled by a factor in ``[1-jitter, 1+jitter]``.
    """
    if failed.retry_after_ms is not None:
        return WaitBounds(failed.retry_after_ms, failed.retry_after_ms, "retry-after")
    # Past 2**1023 the float overflows; the cap has long taken over by then.
    nominal = min(policy.initial_delay_ms * 2.0 ** min(retry - 1, 1023), policy.max_delay_ms)
    jitter = policy.jitter_ratio
    return WaitBounds(nominal * (1 - jitter), nominal * (1 + jitter), "backoff")
