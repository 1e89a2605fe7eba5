"""What the lint reads from a fixture's attempt: the body, the status, how the body ends."""

from __future__ import annotations

from dataclasses import dataclass

from fakeprovider.dialects import DEFAULT_DIALECT, DialectId
from fakeprovider.recording import ClientEnding
from fakeprovider.scenario import ErrorAttempt, FaultAttempt, StreamAttempt
from fakeprovider.wire import encode_stream, error_body

from .findings import LintResult
from .linter import lint

_PLAN_ENDINGS: dict[str, ClientEnding] = {
    "close": "complete",
    "reset": "reset",
    "stall": "timeout",
    "disconnect": "disconnect",
}
_FAULT_ENDINGS: dict[str, ClientEnding] = {
    "reset": "reset",
    "close": "disconnect",
    "stall": "timeout",
}


@dataclass(frozen=True)
class Wire:
    body: bytes
    status: int | None  # None: the connection failed before any response byte
    ending: ClientEnding
    dialect: DialectId | None = None  # None: the lint reads it from the body

    def lint(self, *, include_usage: bool, upstream_failed: bool = False) -> LintResult:
        return lint(
            self.body,
            status=self.status,
            ending=self.ending,
            include_usage=include_usage,
            upstream_failed=upstream_failed,
            dialect=self.dialect,
        )


def attempt_wire(
    attempt: StreamAttempt | ErrorAttempt | FaultAttempt, dialect: DialectId | None = None
) -> Wire:
    """What the fake provider sends for an attempt of a ``dialect`` scenario (None: read
    from the body); raises EncodeError like the encoder."""
    if isinstance(attempt, FaultAttempt):
        return Wire(b"", None, _FAULT_ENDINGS[attempt.fault], dialect)
    if isinstance(attempt, ErrorAttempt):
        body = error_body(attempt.error, dialect=dialect or DEFAULT_DIALECT)
        return Wire(body, attempt.error.status, "complete", dialect)
    plan = encode_stream(attempt.stream)
    ending = _PLAN_ENDINGS[plan.ending]
    if plan.ending == "disconnect" and attempt.stream.framing.transfer == "close":
        ending = "complete"  # without chunked coding, closing is how the body ends
    return Wire(plan.body, attempt.stream.status, ending, dialect)
