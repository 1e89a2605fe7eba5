"""What every dialect's generated cases share: a family's case shape and content-made ids."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from fakeprovider.scenario import Scenario


@dataclass(frozen=True)
class CaseShape:
    """Which layers a family's cases draw from."""

    min_calls: int = 0
    max_calls: int = 4
    breaks: tuple[str, ...] = ()  # kinds of stream breaks the last attempt may show
    failures_before: tuple[int, int] = (0, 0)  # failing attempts before the last: min, max
    slow: bool = False  # stalls and honoured Retry-After before the last attempt
    retry_policy: bool = False  # the case may set its own retry-policy fields
    quirks: bool = False  # re-encoded by provider quirk transforms (conformance.quirks)


def named_by_content(scenario: Scenario, family: str) -> Scenario:
    """The scenario with an id made of its content: the same draw always has the same id."""
    digest = hashlib.sha256(scenario.model_dump_json(exclude={"id"}).encode()).hexdigest()
    return scenario.model_copy(update={"id": f"gen-{family.lower()}-{digest[:12]}"})
