"""What the oracle states: the expected attempts of a case."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..events import Block, Usage

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
    # An error response's headers, names in lower case: what a declared retry policy may
    # read besides Retry-After (retry-after-ms, x-should-retry).
    headers: tuple[tuple[str, str], ...] = ()
    features: frozenset[str] = frozenset()
    # The attempt read with the harness's duties relaxed (INVARIANTS.md v1.2, "Interop
    # compares with the interop reading"): a body that closed after its finish but before
    # [DONE] read as if [DONE] had come (S5), an empty stop as the wire sent it (E1), a
    # tool-calls turn with no call as the stop of a library that exposes no finish reason,
    # a length turn with no output refused as MAX_TOKENS (E4). Each loses nothing the wire
    # sent; the interop contract compares with the one the adapter's attempt ended as
    # (Evidence.compared_with).
    interop_readings: tuple[ExpectedAttempt, ...] = ()

    @property
    def success(self) -> bool:
        return self.reason in SUCCESS_REASONS

    @property
    def in_body(self) -> bool:
        """The attempt failed after a 2xx response began (in its body), not before one:
        no error status, no fault before the response."""
        before = self.status is not None and not 200 <= self.status < 300
        return not before and not any(f.startswith("fault-") for f in self.features)

    def header(self, name: str) -> str | None:
        """An error response's header (``name`` in lower case), or None."""
        return next((value for key, value in self.headers if key == name), None)

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
