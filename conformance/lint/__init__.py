"""Wire-hazard lint: event-stream bodies checked against the shapes that break clients."""

from .linter import DONE, Finding, LintResult, lint
from .rules import RULES, LintRule
from .scan import Position
from .wire import Wire, attempt_wire

__all__ = [
    "DONE",
    "RULES",
    "Finding",
    "LintResult",
    "LintRule",
    "Position",
    "Wire",
    "attempt_wire",
    "lint",
]
