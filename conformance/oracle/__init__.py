"""The oracle: scenario → expected outcome, the executable reading of INVARIANTS.md.

It reads what the provider sends (the wire plan the provider plays, encoded once for both,
parsed whole rather than incrementally) and states what a conforming adapter reports. It
never imports an adapter: the reference adapter is checked against it, not the other way
round. Besides the outcome it records the *features* of the wire (an identity repeated as
``null``, a late id, CRLF framing…) that decide which invariants a case exercises.
"""

from .agreement import Disagreement, expect_disagreements, outcome_expect
from .expect import called_tools, expected_attempt, expected_outcome, received_attempt
from .http_errors import classify_status, error_detail, retry_after_ms
from .outcome import SUCCESS_REASONS, ExpectedAttempt, ExpectedOutcome
from .readers import map_usage, sse_events, sse_payloads
from .retrying import (
    AnyRetryPolicy,
    RetryDecision,
    WaitBounds,
    directed_wait_ms,
    retry_decision,
    wait_bounds,
)

__all__ = [
    "SUCCESS_REASONS",
    "AnyRetryPolicy",
    "Disagreement",
    "ExpectedAttempt",
    "ExpectedOutcome",
    "RetryDecision",
    "WaitBounds",
    "called_tools",
    "classify_status",
    "directed_wait_ms",
    "error_detail",
    "expect_disagreements",
    "expected_attempt",
    "expected_outcome",
    "map_usage",
    "outcome_expect",
    "received_attempt",
    "retry_after_ms",
    "retry_decision",
    "sse_events",
    "sse_payloads",
    "wait_bounds",
]
