"""Q — real-world provider quirks (INVARIANTS.md §Q): unambiguous ones judged, the rest recorded.

Which quirk a scenario shows comes from its ``quirk-<ID>`` tags and the catalogue in
:mod:`conformance.quirks`. An ambiguous scenario (tagged ``level:info``) has its outcome
verdicts recorded as ``info`` by the registry; Q2 states what the adapter made of it.
"""

from __future__ import annotations

from ..quirks import graded_quirks, recorded_only
from .common import judge_attempts, same_outcome
from .evidence import Evidence, tool_calls
from .registry import Judgement, held, invariant

SOURCE = "INVARIANTS.md §Q; anchors.md §3"


@invariant(
    "Q1",
    "MUST",
    "A stream with an unambiguous provider quirk gets the outcome the oracle reads from the "
    "wire (for an encoding quirk: the canonical stream's), in every attempt.",
    source=SOURCE + " (A1-A7, A9-A12, B1, D1, D2, D4, E1, F, G, H, I1-I7)",
)
def check_quirk_outcome(evidence: Evidence) -> Judgement | None:
    if recorded_only(evidence.scenario) or not graded_quirks(evidence.scenario, "MUST"):
        return None
    return judge_attempts(evidence, lambda _: True, same_outcome)


@invariant(
    "Q2",
    "INFO",
    "A stream the spec leaves open (C1-C7, D3, D5, D8, E2, vendor fields): what the adapter "
    "assembled is recorded.",
    source=SOURCE,
)
def check_ambiguous_quirk(evidence: Evidence) -> Judgement | None:
    if not recorded_only(evidence.scenario):
        return None
    final = evidence.attempts[-1]
    calls = [(call.id, call.name, call.arguments) for call in tool_calls(final.blocks)]
    kinds = [block.type for block in final.blocks]
    return held(f"attempt {final.number}: {final.describe()}; blocks {kinds}; tool calls {calls!r}")
