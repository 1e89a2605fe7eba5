"""The verdict vocabulary every stage shares: levels, verdicts, case statuses, families."""

from __future__ import annotations

from typing import Literal

CaseStatus = Literal["completed", "timeout", "crash", "protocol-error"]

Level = Literal["MUST", "SHOULD", "INFO"]
Verdict = Literal["pass", "non-strict", "info", "n/a", "fail"]
VERDICTS: tuple[Verdict, ...] = ("pass", "non-strict", "info", "n/a", "fail")
# Families in the order INVARIANTS.md presents them.
FAMILY_TITLES = {
    "G": "Stream grammar",
    "C": "Content, usage, finish",
    "T": "Tool-call identity",
    "E": "Empty completions",
    "S": "SSE framing",
    "H": "HTTP and transport",
    "R": "Retry",
    "Q": "Provider quirks",
}
