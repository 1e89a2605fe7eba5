"""The verdict vocabulary every stage shares: levels, verdicts, case statuses, families,
and the shape of a rule in any of the three catalogues (invariants, gateway meaning, lint).

A leaf (it imports nothing of ours), so the results and the reports read verdicts without
loading a checker or the server.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, NotRequired

from typing_extensions import TypedDict  # pydantic validates no other before Python 3.12

CaseStatus = Literal["completed", "timeout", "crash", "protocol-error"]

Level = Literal["MUST", "SHOULD", "INFO"]
# What a run is judged under (INVARIANTS.md "Contracts"): the harness's own rules, or only
# what makes the adapter lose, corrupt or invent what the provider sent.
Contract = Literal["harness", "interop"]
CONTRACTS: tuple[Contract, ...] = ("harness", "interop")

SpecVersion = str
"""A revision of the spec (``1.1``): which rules and levels judge (conformance.spec)."""
UNRECORDED_SPEC: SpecVersion = "1.2"
"""The revision of a results or baseline file written before runs recorded theirs: they were
judged by 1.2's catalogue, whatever revision is the latest by then."""
Capability = Literal["deltas", "reasoning", "usage", "retry", "error_codes", "follow_up"]
Verdict = Literal["pass", "non-strict", "info", "n/a", "fail"]
# What a failure cost the caller, as the checker that finds it states it (the compatibility
# page reads it): what the provider sent and the caller lost, got corrupted or got invented;
# an adapter that crashed, hung or broke the protocol; a failure reported as something else.
CostKind = Literal[
    "lost", "corrupted", "invented", "crash", "hang", "broken-protocol", "misreported"
]


@dataclass(frozen=True)
class Cost:
    """What one failure cost the caller: its kind and what was concerned, quoted."""

    kind: CostKind
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.replace('-', ' ')}: {self.detail}"


# Two orders, one per purpose:
# - VERDICTS: the columns of count tables (RunResult.counts, `conformance run`'s summary).
# - BY_SEVERITY: worst first, what a case or a run is summed up by, and the HTML report's
#   tiles, columns and chart segments. A pass outranks info and n/a: something was judged.
VERDICTS: tuple[Verdict, ...] = ("pass", "non-strict", "info", "n/a", "fail")
BY_SEVERITY: tuple[Verdict, ...] = ("fail", "non-strict", "pass", "info", "n/a")
# The verdicts a reader must look at (`--strict` fails on both); BY_SEVERITY's first two.
ATTENTION: frozenset[Verdict] = frozenset({"fail", "non-strict"})

# A reading of the wire other than the oracle's own, one an ambiguous quirk leaves open
# (INVARIANTS.md §Q): the oracle can read a stream under each, and an outcome on a quirk's
# contested aspects is recorded only where it equals the oracle's or one of these.
AltReading = Literal[
    "by-id",
    "index-only",
    "index-only-last-wins",
    "arguments-object-as-json",
    "flush-replaces",
    "last-id-wins",
    "empty-data-skipped",
    "refusal-as-text",
    "refusal-as-filter",
    "reasoning-field",
]
ALT_READINGS: dict[AltReading, str] = {
    "by-id": "entries that carry one id are one call; an entry without id continues the last",
    "index-only": "every entry at one wire index is one call, whatever id it brings",
    "index-only-last-wins": "one call per wire index, the last id and name it brought kept",
    "arguments-object-as-json": "arguments sent as a JSON value are that value, serialised",
    "flush-replaces": "a fragment equal to the arguments so far is a flush, not appended",
    "last-id-wins": "a conflicting non-empty id replaces the call's id",
    "empty-data-skipped": "an event with empty data is skipped, not refused",
    "refusal-as-text": "delta.refusal is read as text",
    "refusal-as-filter": "a refusal fails the attempt as CONTENT_FILTER",
    "reasoning-field": "delta.reasoning is read as reasoning_content",
}

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
    "N": "The next request (two-turn cases)",
    # A rule of one wire alone (DIALECTS.md "Invariant ids"): Anthropic Messages.
    "AN-G": "Anthropic Messages: stream grammar",
    "AN-C": "Anthropic Messages: continuity tokens",
    "AN-T": "Anthropic Messages: tool identity",
    "AN-S": "Anthropic Messages: event names",
    "AN-H": "Anthropic Messages: errors",
    "AN-R": "Anthropic Messages: replay in the next request",
    # OpenAI Responses.
    "RS-G": "OpenAI Responses: stream grammar",
    "RS-C": "OpenAI Responses: snapshots and continuity tokens",
    "RS-T": "OpenAI Responses: tool identity",
    "RS-S": "OpenAI Responses: sequence numbers",
    "RS-H": "OpenAI Responses: errors",
    "RS-R": "OpenAI Responses: replay in the next request",
}


def family_of(rule_id: str) -> str:
    """A rule's family: its id without the trailing number (``T3`` -> ``T``)."""
    return rule_id.rstrip("0123456789") or rule_id


def family_order(family: str) -> tuple[int, str]:
    """Sort key of families: FAMILY_TITLES' order, then others (gateway's M, W) by name."""
    titles = list(FAMILY_TITLES)
    return (titles.index(family) if family in titles else len(titles), family)


@functools.cache  # a sort key asked for every verdict of every case: a few hundred ids
def reading_order(rule_id: str) -> tuple[tuple[int, str], int, str]:
    """Sort key of rule ids in INVARIANTS.md's reading order: family, then number."""
    family = family_of(rule_id)
    digits = rule_id[len(family) :]
    return (family_order(family), int(digits) if digits.isdigit() else 0, rule_id)


def worst(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The most severe of ``verdicts`` (in BY_SEVERITY's order), or None when there are none."""
    present = set(verdicts)
    return next((verdict for verdict in BY_SEVERITY if verdict in present), None)


def verdict_for(
    level: Level, held: bool, *, weaker: bool, strict: bool, recorded: bool = False
) -> Verdict:
    """What a judged rule's finding weighs: a breach of a MUST fails, of a SHOULD is
    non-strict, INFO is only observed. A weaker outcome (accepted, but not what the spec
    says) is non-strict whatever the level; ``strict`` makes every non-strict a fail. A
    ``recorded`` finding is an aspect the contract only observes: info at any level."""
    if level == "INFO" or recorded:
        return "info"
    if held:
        return "pass"
    if weaker or level == "SHOULD":
        return "fail" if strict else "non-strict"
    return "fail"


class CatalogueEntry(TypedDict):
    """One rule as a results file lists it (:meth:`RuleInfo.describe`).

    Keys in the order files have them: validating an entry rewrites it in this order.
    ``level`` and ``needs`` stay text: readers only show them, so a file naming a level or
    capability this version does not know still loads.
    """

    id: str
    family: str
    family_title: str
    level: str
    statement: str
    source: str
    needs: list[str]
    rationale: NotRequired[str]  # invariants: why it matters, what a breach costs the user
    levels: NotRequired[dict[str, str]]  # invariants: the level under each contract
    dialects: NotRequired[list[str]]  # invariants: the wires whose cases they judge
    since: NotRequired[str]  # invariants: the spec revision that added the rule
    quirk_family: NotRequired[str]  # wire-hazard rules: the anchors §3 quirk family
    quirks: NotRequired[list[str]]  # ... and the quirks the rule covers


@dataclass(frozen=True)
class RuleInfo:
    """What every catalogue says of a rule; each rule type adds how it is judged."""

    id: str
    family: str
    family_title: str
    level: Level
    statement: str
    source: str
    needs: tuple[Capability, ...] = ()

    def describe(self) -> CatalogueEntry:
        """The rule's catalogue entry, as results files keep it and reports read it."""
        return {
            "id": self.id,
            "family": self.family,
            "family_title": self.family_title,
            "level": self.level,
            "statement": self.statement,
            "source": self.source,
            "needs": list(self.needs),
        }
