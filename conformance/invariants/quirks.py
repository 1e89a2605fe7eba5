"""Q — real-world provider quirks (INVARIANTS.md §Q): judged where the wire is clear, recorded
where it is not.

Which quirk a scenario shows comes from its ``quirk-<ID>`` tags and the catalogue in
:mod:`conformance.quirks`. An ambiguous scenario (tagged ``level:info``) leaves some aspects
of the outcome open (:func:`conformance.quirks.contested_aspects`) to the readings of the
wire it admits (:func:`conformance.quirks.admitted_readings`): a breach there is recorded as
``info`` by the registry where the outcome equals one of them, and judged where it equals
none; the rest of the stream is judged as anywhere else. Q2 states what the adapter made of
it.
"""

from __future__ import annotations

from ..quirks import contested_aspects, graded_quirks, recorded_only
from .common import judge_attempts, same_outcome
from .evidence import Evidence, tool_calls
from .registry import CHAT_ONLY, Judgement, Scope, held, invariant

SOURCE = (
    "docs/invariants-and-quirks.md#provider-quirks-and-profiles; docs/invariants.md#provider-quirks"
)
AMBIGUOUS = Scope(
    "every fixture tagged `level:info`, by quirk in [the table below](#provider-quirks)",
    recorded_only,
)
QUIRKY = Scope(
    "every fixture tagged with a MUST quirk or `level:info`, by quirk in "
    "[the table below](#provider-quirks)",
    lambda scenario: AMBIGUOUS.applies(scenario) or bool(graded_quirks(scenario, "MUST")),
)


@invariant(
    "Q1",
    "MUST",
    "A stream with a provider quirk gets the outcome the oracle reads from the wire (for an "
    "encoding quirk: the canonical stream's), in every attempt; for an ambiguous quirk, in "
    "every aspect the quirk does not contest, and in those it does, the outcome of one of "
    "the readings it admits.",
    source=SOURCE + " (A1-A7, A9-A12, B1, D1, D2, D4, E1, F, G, H, I1-I7; and the "
    "uncontested rest of C1-C7, D3, D5, D8, E2)",
    scope=QUIRKY,
    rationale=(
        "Each quirk is a shape a real provider or gateway sends: an outcome that differs from the "
        "oracle's reading means the same answer arrives damaged (a lost call, corrupted text, a "
        "false failure) only for that provider's users."
    ),
)
def check_quirk_outcome(evidence: Evidence) -> Judgement | None:
    if not QUIRKY.applies(evidence.scenario):
        return None
    return judge_attempts(evidence, lambda _: True, same_outcome)


@invariant(
    "Q2",
    "INFO",
    "A stream the spec leaves open (C1-C7, D3, D5, D8, E2, vendor fields): what the adapter "
    "assembled is recorded, with the aspects left open.",
    source=SOURCE,
    scope=AMBIGUOUS,
    rationale=(
        "Where the wire can be read more than one way nothing fails, but the record shows what "
        "the adapter made of it (one call or two, which arguments), so a user can see how their "
        "client resolves each provider's ambiguity."
    ),
    dialects=CHAT_ONLY,
)
def check_ambiguous_quirk(evidence: Evidence) -> Judgement | None:
    if not AMBIGUOUS.applies(evidence.scenario):
        return None
    final = evidence.attempts[-1]
    calls = [(call.id, call.name, call.arguments) for call in tool_calls(final.blocks)]
    kinds = [block.type for block in final.blocks]
    return held(
        f"{_open(evidence)}; attempt {final.number}: {final.describe()}; "
        f"blocks {kinds}; tool calls {calls!r}"
    )


def _open(evidence: Evidence) -> str:
    """What the quirk leaves open, and whether the outcome is one of its readings."""
    contested = contested_aspects(evidence.scenario)
    if not contested:
        return "open: nothing (every reading of the wire gives one outcome)"
    read = "one of its readings" if evidence.contested else "none of its readings (judged)"
    return f"open: {', '.join(contested)}; the outcome is {read}"
