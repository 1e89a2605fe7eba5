"""What a lint says: findings with their positions, and what the stream exercised (pure)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from .scan import Event, Position


@dataclass(frozen=True)
class Finding:
    rule: str
    position: Position
    message: str  # stream content in it is escaped (shown), never raw

    def __str__(self) -> str:
        return f"{self.position}: {self.rule} {self.message}"


@dataclass(frozen=True)
class LintResult:
    findings: tuple[Finding, ...]
    exercised: frozenset[str]
    failed: bool  # the response reports a failure: an error status, payload or cut

    def of(self, rule_id: str) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if finding.rule == rule_id)


def shown(value: object) -> str:
    """A stream's value as a finding quotes it: JSON, ASCII only (controls and bidi marks
    escaped), at most 40 characters."""
    return json.dumps(value, ensure_ascii=True)[:40]


def without_object(label: str, event: Event, has_data: bool) -> str:
    """What a finding says of an event whose data is no JSON object (``label`` names it)."""
    if not has_data:
        return f"{label} has no data: line"
    if not event.data:
        return f"{label} has empty data"
    return f"{label} data is not a JSON object: {shown(event.data)}"
