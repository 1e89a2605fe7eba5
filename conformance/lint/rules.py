"""The wire-hazard rules: shapes that break clients, most often introduced by gateways.

Each rule has an id, the quirk family of ``shared/reference/anchors.md`` §3 it guards
against and the quirks it covers. All are SHOULD: a stream breaking one is still
meaningful to a tolerant client (the reference adapter), but known to break real ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..verdicts import CatalogueEntry, RuleInfo


@dataclass(frozen=True, kw_only=True)
class LintRule(RuleInfo):
    quirk_family: str  # the anchors §3 quirk family: A identity, B ids, C index, ...
    quirks: tuple[str, ...]

    def describe(self) -> CatalogueEntry:
        """The common entry, plus the anchors §3 quirk family and quirks it guards against."""
        return {
            **super().describe(),
            "quirk_family": self.quirk_family,
            "quirks": list(self.quirks),
        }


def _rule(id: str, quirk_family: str, quirks: tuple[str, ...], statement: str) -> LintRule:
    return LintRule(
        id=id,
        family="W",
        family_title="Wire hazards",
        level="SHOULD",
        statement=statement,
        source=f"anchors §3 family {quirk_family} ({', '.join(quirks)})",
        quirk_family=quirk_family,
        quirks=quirks,
    )


FIRST_DELTA_IDENTITY = _rule(
    "W1",
    "B",
    ("B1", "B3", "A9", "A10", "C1"),
    "The first delta of each tool call carries its index, a non-empty id and function.name.",
)
CONTINUATION_IDENTITY = _rule(
    "W2",
    "A",
    ("A1", "A2", "A5", "A6", "A7", "A8", "A13"),
    "A tool call's continuation deltas leave id, type and function.name out: never null, "
    '"", the same value again or a different one.',
)
TOOL_INDEX = _rule(
    "W3",
    "C",
    ("C3", "C4", "C5"),
    "Tool-call indexes are integers that start at 0 and grow by one per new call.",
)
NULL_STRING = _rule(
    "W4",
    "A",
    ("A3", "A4", "A11", "A12", "D2"),
    "A string field of a delta (role, content, reasoning_content, type, arguments) and the "
    "tool_calls and function containers are left out rather than sent as null.",
)
COMMENT_AS_DATA = _rule(
    "W5",
    "I",
    ("I2",),
    "A comment (keep-alive) stays a comment line; it is never re-wrapped as `data: :...`.",
)
MISSING_DONE = _rule(
    "W6",
    "I",
    ("I8",),
    "A stream that ends cleanly without a failure ends with `data: [DONE]`.",
)
DONE_AFTER_FAILURE = _rule(
    "W7",
    "J",
    ("J4",),
    "`data: [DONE]` never follows a failure (an error payload, or an upstream that failed), "
    "where it makes a truncated answer look complete.",
)
USAGE_DROPPED = _rule(
    "W8",
    "H",
    ("G4", "H2"),
    "When the request asked for stream_options.include_usage, a completed stream carries "
    "a usage object.",
)
PLAIN_TEXT_ERROR = _rule(
    "W9",
    "I",
    ("I9", "J1"),
    "An error is a JSON error object (an error response body, or a data payload), never "
    "plain text.",
)
FINISH_MISSING = _rule(
    "W10",
    "F",
    ("F5",),
    "A completed stream with choices gives a non-empty finish_reason before [DONE].",
)

RULES: dict[str, LintRule] = {
    rule.id: rule
    for rule in (
        FIRST_DELTA_IDENTITY,
        CONTINUATION_IDENTITY,
        TOOL_INDEX,
        NULL_STRING,
        COMMENT_AS_DATA,
        MISSING_DONE,
        DONE_AFTER_FAILURE,
        USAGE_DROPPED,
        PLAIN_TEXT_ERROR,
        FINISH_MISSING,
    )
}
