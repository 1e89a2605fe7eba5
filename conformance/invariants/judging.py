"""From evidence to one verdict per exercised invariant, each root cause reported once.

Every checker reads the case on its own; this module decides what their findings mean
together (INVARIANTS.md, "Contracts"):

- a case that did not complete gets one status verdict, on the invariant that owns the
  status (H4 for a stall the adapter never timed out, the field's invariant for an event
  with a field that fails validation, G1 for crashes and unreadable lines); the rest are
  ``n/a``;
- a finding marked as a root cause (an attempt that crashed, a retry layer that hid a spent
  budget) makes every other breach of the case a consequence, ``n/a`` with a pointer;
- a framed case whose framing is in question (it fails under S1-S3 and another invariant)
  is judged beside its plain-framed twin (``control``): S1-S3 own what the twin does not
  show, and what it shows too is ranked without them (INVARIANTS.md v1.2, "Who owns a
  difference");
- otherwise a difference several invariants see is reported by the narrowest: a wire feature's own
  invariant before the framing ones, those before the general content checks (and T6, the
  boundary any lost identity crosses), and the catch-alls (Q1, R8) only when nobody else
  found it; invariants of one rank that report the very same difference (one stream that
  has two of their features) report it once, under the one whose verdict weighs most
  (among equals the first in the documented order G, C, T, E, S, H, R, Q); a retry
  decision a general rule and a narrower one both report is the narrower one's;
- the level under the contract turns a breach into a verdict: MUST → fail, SHOULD →
  non-strict (fail with ``strict``), INFO → info; on an ambiguous quirk, a breach in an
  aspect of the outcome the quirk contests (INVARIANTS.md §Q) is recorded as info where the
  outcome equals one of the quirk's readings, and explains no other breach: losing what the
  quirk leaves alone, or an outcome equal to no reading, is judged at its level.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..spec import observed_reason
from ..verdicts import ATTENTION, BY_SEVERITY, CaseStatus, Cost, CostKind, Verdict, reading_order
from .evidence import Evidence
from .framing import FRAMING_FEATURES
from .registry import CATALOGUE, Invariant, Judgement

# Where one cause shows under several invariants, the narrowest owns it. A breach of any
# invariant not listed here (one that judges a wire feature: an error frame, an unidentified
# call, a reset, a retry decision, the event grammar…) makes the breaches of the tiers below
# consequences; a framing invariant does the same for the general content checks (T6 among
# them: it sees any identity lost, whichever reading lost it); the catch-alls report only a
# difference nobody else found.
FRAMING = ("S1", "S2", "S3")
GENERAL = ("C1", "C2", "C3", "C4", "C5", "T6")
CATCH_ALL = ("Q1", "R8")
_TIERS = (FRAMING, GENERAL, CATCH_ALL)
# The invariant a field of the adapter's events belongs to: an event of a known type whose
# field fails validation (a numeric id, object arguments, an error finish without a code)
# is that invariant's failure, the field named; the event grammar (G1) keeps crashes and
# lines that are no readable event.
FIELD_OWNERS = {
    "tool-call-delta.id": "T1",
    "tool-call-delta.name": "T1",
    "block-end.block.id": "T1",
    "block-end.block.name": "T1",
    "tool-call-delta.arguments_delta": "C3",
    "block-end.block.arguments": "C3",
    "text-delta.text": "C1",
    "reasoning-delta.text": "C2",
    "usage.input_tokens": "C4",
    "usage.output_tokens": "C4",
    "usage.cache_read_tokens": "C4",
    "usage.reasoning_tokens": "C4",
    "finish.reason": "C5",
    "finish.code": "C5",
}
# Aspects no outcome difference follows from (nulls in events, one request per attempt, the
# retried body, the waits, the retry announcements): their breaches explain nothing else.
INDEPENDENT = ("G8", "H5", "R4", "R5", "R6", "R9")


@dataclass(frozen=True)
class Finding:
    """One invariant's verdict for a case and why; ``cost``: what a failure or non-strict
    finding cost the caller, where the checker that found it states it."""

    verdict: Verdict
    reason: str
    cost: Cost | None = None


Judged = Mapping[str, tuple[Invariant, Judgement]]
Verdicts = Mapping[str, tuple[Verdict, str]]


def judge_evidence(
    evidence: Evidence, *, strict: bool = False, control: Evidence | None = None
) -> dict[str, Finding]:
    """The verdicts of every invariant the case exercises, in the documented order (G, C,
    T, E, S, H, R, Q: ties between owners are broken by it), under the evidence's contract.

    ``control`` is what the case's plain-framed twin showed (:func:`framing_in_question`
    says when one is needed): it decides whether S1-S3 own the differences."""
    judged = _checked(evidence)
    if evidence.status != "completed":
        return _did_not_complete(evidence, judged)
    verdicts = _weighed(evidence, judged, strict)
    explained = _explained(evidence, judged, verdicts, _failing_with_plain_framing(control))
    findings: dict[str, Finding] = {}
    for id, (verdict, reason) in verdicts.items():
        if id in explained and verdict != "n/a":
            verdict, reason = "n/a", explained[id]
        cost = judged[id][1].cost if verdict in ATTENTION else None
        findings[id] = Finding(verdict, reason, cost)
    return findings


def framing_in_question(evidence: Evidence) -> bool:
    """Whether the case needs its plain-framed twin: a completed case with framing features
    where an S1-S3 invariant and another one fail, which owns the difference depending on
    whether the framing made it."""
    if evidence.status != "completed" or not evidence.expected.features & FRAMING_FEATURES:
        return False
    failing = _failing(evidence)
    return any(id in FRAMING for id in failing) and any(
        id not in FRAMING and id not in INDEPENDENT for id in failing
    )


def _checked(evidence: Evidence) -> dict[str, tuple[Invariant, Judgement]]:
    dialect = evidence.scenario.dialect
    return {
        id: (invariant, judgement)
        for id in _in_documented_order(tuple(CATALOGUE))
        if (invariant := CATALOGUE[id]).covers(dialect)
        and (judgement := invariant.check(evidence)) is not None
    }


@functools.lru_cache(maxsize=4)
def _in_documented_order(ids: tuple[str, ...]) -> tuple[str, ...]:
    """The catalogue's ids sorted once, not once per case (keyed by the ids themselves, so
    an entry added or replaced is seen)."""
    return tuple(documented_order(ids))


def _weighed(evidence: Evidence, judged: Judged, strict: bool) -> dict[str, tuple[Verdict, str]]:
    return {
        id: invariant.verdict(judgement, evidence, strict=strict)
        for id, (invariant, judgement) in judged.items()
    }


def _failing(evidence: Evidence) -> set[str]:
    """The invariants that fail (or are non-strict) on their own, before ownership."""
    verdicts = _weighed(evidence, _checked(evidence), strict=False)
    return {id for id, (verdict, _) in verdicts.items() if verdict in ATTENTION}


def _failing_with_plain_framing(control: Evidence | None) -> frozenset[str] | None:
    """What fails on the plain-framed twin; None without a twin that completed (a twin
    that crashed or hung tells nothing about the framing)."""
    if control is None or control.status != "completed":
        return None
    return frozenset(_failing(control))


def _did_not_complete(evidence: Evidence, judged: Judged) -> dict[str, Finding]:
    owner, status = _status_owner(evidence, judged)
    findings = {id: Finding("n/a", f"the case did not complete; see {owner}") for id in judged}
    cost = Cost(_STATUS_COSTS[evidence.status], evidence.detail or "the adapter never returned")
    new = CATALOGUE[owner].new_in(evidence)
    owned = Finding("fail", status, cost)
    findings[owner] = owned if new is None else Finding("info", observed_reason(new, status))
    return {id: findings[id] for id in documented_order(findings)}


# What a case that did not complete cost the caller, by how it ended.
_STATUS_COSTS: dict[CaseStatus, CostKind] = {
    "timeout": "hang",
    "crash": "crash",
    "protocol-error": "broken-protocol",
}


def _status_owner(evidence: Evidence, judged: Judged) -> tuple[str, str]:
    """Who owns a case that did not complete, and why: H4 a stall the adapter never timed
    out, the field's invariant a readable event with a field that fails validation (the
    field named), G1 crashes and unreadable lines."""
    status = f"adapter {evidence.status}: {evidence.detail}".rstrip(": ")
    if evidence.status == "timeout" and "H4" in judged:
        return "H4", status
    field = evidence.invalid_field
    if evidence.status == "protocol-error" and field in FIELD_OWNERS:
        return FIELD_OWNERS[field], f"invalid {field} in the adapter's events; {status}"
    return "G1", status


def documented_order(ids: Iterable[str]) -> list[str]:
    """``ids`` in INVARIANTS.md's order, families G, C, T, E, S, H, R, Q and then by
    number: the order ties between owners are broken in, in a run and in a fuzz headline
    alike (the catalogue registers its families in another one)."""
    return sorted(ids, key=reading_order)


def _explained(
    evidence: Evidence,
    judged: Judged,
    verdicts: Verdicts,
    plain_failing: frozenset[str] | None = None,
) -> dict[str, str]:
    """The breaches that are consequences of another one, with the invariant that owns it;
    ``plain_failing``: what fails on the case's plain-framed twin, when it ran."""
    # A breach only recorded (in an aspect the quirk contests, or of a rule the spec
    # revision judging does not have) is not one of them.
    breaches = [
        id
        for id, (invariant, judgement) in judged.items()
        if not judgement.held
        and all(getattr(evidence.capabilities, n) for n in invariant.needs)
        and invariant.contest(judgement, evidence) is None
        and invariant.new_in(evidence) is None
    ]
    roots = [id for id in breaches if judged[id][1].root_cause]
    if roots:
        return {id: f"a consequence of {roots[0]}" for id in breaches if id != roots[0]}
    if plain_failing is not None and any(id in FRAMING for id in breaches):
        return _explained_by_twin(breaches, judged, verdicts, plain_failing)
    return _ranked(breaches, judged, verdicts, _TIERS)


def _explained_by_twin(
    breaches: list[str], judged: Judged, verdicts: Verdicts, plain_failing: frozenset[str]
) -> dict[str, str]:
    """What the plain-framed twin decides: a breach it does not share is the framing's
    doing, a consequence of what S1-S3 report; the breaches it shares are ranked without
    S1-S3, which then report nothing of their own unless nobody else saw the difference."""
    framing = [id for id in breaches if id in FRAMING]
    failing = [
        id for id in breaches if verdicts[id][0] in ATTENTION and id not in (*FRAMING, *INDEPENDENT)
    ]
    caused = [id for id in failing if id not in plain_failing]
    rest = [id for id in breaches if id not in framing and id not in caused]
    explained = _ranked(rest, judged, verdicts, (GENERAL, CATCH_ALL))
    owners = [id for id in failing if id not in caused and id not in explained]
    if caused or not owners:
        framers = ", ".join(_reported_once(framing, judged, verdicts, explained))
        why = "the same case with plain framing shows no such difference"
        explained |= {id: f"a consequence of what {framers} reported ({why})" for id in caused}
    else:
        named = ", ".join(owners)
        explained |= {
            id: f"the same case with plain framing differs too: see {named}" for id in framing
        }
    return explained


def _ranked(
    breaches: list[str], judged: Judged, verdicts: Verdicts, tiers: tuple[tuple[str, ...], ...]
) -> dict[str, str]:
    """The narrowest report each difference: the breaches of no tier (a wire feature's own
    invariant) first, then ``tiers`` in turn, each only where those above found nothing."""
    tiered = (*FRAMING, *GENERAL, *CATCH_ALL, *INDEPENDENT)
    explained: dict[str, str] = {}
    owners = _reported_once(
        [id for id in breaches if id not in tiered], judged, verdicts, explained
    )
    for tier in tiers:
        found = [id for id in breaches if id in tier]
        if owners:
            named = ", ".join(owners)
            explained |= {id: f"a consequence of what {named} reported" for id in found}
        elif tier is CATCH_ALL and found:
            # The catch-alls compare the same outcome: the first one speaks for both.
            explained |= {id: f"reported under {found[0]}" for id in found[1:]}
            owners = found[:1]
        else:
            owners = _reported_once(found, judged, verdicts, explained)
    return explained


def _reported_once(
    ids: list[str], judged: Judged, verdicts: Verdicts, explained: dict[str, str]
) -> list[str]:
    """Of breaches of one rank, those that report a difference of their own. Two reading
    invariants that report the very same one (a stream with both their features, read wrong
    once) report it under the one whose verdict is most severe, the first in the catalogue
    among equals: the other is added to ``explained``."""
    readings = [id for id in ids if judged[id][0].family in _READING_FAMILIES]
    reporter: dict[str, str] = {}
    for id in sorted(readings, key=lambda id: BY_SEVERITY.index(verdicts[id][0])):
        reporter.setdefault(judged[id][1].reason, id)
    for id in readings:
        if reporter[judged[id][1].reason] != id:
            explained[id] = f"reported under {reporter[judged[id][1].reason]}"
    for general, narrower in _NARROWER_DECISION.items():
        same = general in ids and narrower in ids
        if same and judged[general][1].reason == judged[narrower][1].reason:
            explained[general] = f"reported under {narrower}"
    return [id for id in ids if id not in explained]


# How the stream was read. A retry decision is judged by several rules on purpose (R1 the
# decision, R3 a case that removes a code...), each reporting the decision it covers: two
# that report different reasons judge different decisions (or the same one two ways), so
# the R family is left out of that dedup.
_READING_FAMILIES = frozenset({"S", "T", "E", "C"})
# The one exception, the very same decision under a general rule and a narrower one: a
# default-policy refusal code (EMPTY_RESPONSE, MALFORMED_TOOL_CALL) or a code the case removed,
# retried wrongly, breaks R1 (every code's decision) and R3 (exactly those codes) with one
# reason. R3 reports it: it names the rule the decision breaks (the harness notes' "retried by
# default", or the case's removal), where R1 only restates the decision. General → narrower.
_NARROWER_DECISION = {"R1": "R3"}
