"""Wire-hazard lint: event-stream bodies checked against the shapes that break clients."""

from .findings import Finding, LintResult
from .linter import DONE, lint
from .rules import ALL_RULES, MESSAGES_RULES, RESPONSES_RULES, RULES, LintRule
from .scan import Position
from .wire import Wire, attempt_wire

__all__ = [
    "ALL_RULES",
    "DONE",
    "MESSAGES_RULES",
    "RESPONSES_RULES",
    "RULES",
    "Finding",
    "LintResult",
    "LintRule",
    "Position",
    "Wire",
    "attempt_wire",
    "lint",
]
