"""What the lint reads from a fixture's attempt: the body, the status, how the body ends."""

from __future__ import annotations

from dataclasses import dataclass

from fakeprovider.recording import ClientEnding
from fakeprovider.scenario import ErrorAttempt, FaultAttempt, StreamAttempt
from fakeprovider.wire import encode_stream, error_body

from .linter import LintResult, lint

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

    def lint(self, *, include_usage: bool, upstream_failed: bool = False) -> LintResult:
        return lint(
            self.body,
            status=self.status,
            ending=self.ending,
            include_usage=include_usage,
            upstream_failed=upstream_failed,
        )


def attempt_wire(attempt: StreamAttempt | ErrorAttempt | FaultAttempt) -> Wire:
    """What the fake provider sends for an attempt; raises EncodeError like the encoder."""
    if isinstance(attempt, FaultAttempt):
        return Wire(b"", None, _FAULT_ENDINGS[attempt.fault])
    if isinstance(attempt, ErrorAttempt):
        return Wire(error_body(attempt.error), attempt.error.status, "complete")
    plan = encode_stream(attempt.stream)
    ending = _PLAN_ENDINGS[plan.ending]
    if plan.ending == "disconnect" and attempt.stream.framing.transfer == "close":
        ending = "complete"  # without chunked coding, closing is how the body ends
    return Wire(plan.body, attempt.stream.status, ending)
