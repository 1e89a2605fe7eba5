"""From evidence to one verdict per exercised invariant, each root cause reported once.

Every checker reads the case on its own; this module decides what their findings mean
together (INVARIANTS.md, "Contracts"):

- a case that did not complete gets one status verdict, on the invariant that owns the
  status (H4 for a stall the adapter never timed out, G1 otherwise); the rest are ``n/a``;
- a finding marked as a root cause (an attempt that crashed, a retry layer that hid a spent
  budget) makes every other breach of the case a consequence, ``n/a`` with a pointer;
- a difference several invariants see is reported by the narrowest: a wire feature's own
  invariant before the framing ones, those before the general content checks (and T6, the
  boundary any lost identity crosses), and the catch-alls (Q1, R8) only when nobody else
  found it; invariants of one rank that report the very same difference (one stream that
  has two of their features) report it once, under the one whose verdict weighs most;
- the level under the contract turns a breach into a verdict: MUST → fail, SHOULD →
  non-strict (fail with ``strict``), INFO → info; on an ambiguous quirk, a breach in an
  aspect of the outcome the quirk contests (INVARIANTS.md §Q) is recorded as info, and
  explains no other breach: losing what the quirk leaves alone is judged at its level.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..verdicts import BY_SEVERITY, Verdict
from .evidence import Evidence
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
# Aspects no outcome difference follows from (nulls in events, one request per attempt, the
# retried body, the waits, the retry announcements): their breaches explain nothing else.
INDEPENDENT = ("G8", "H5", "R4", "R5", "R6", "R9")


@dataclass(frozen=True)
class Finding:
    """One invariant's verdict for a case and why."""

    verdict: Verdict
    reason: str


def judge_evidence(evidence: Evidence, *, strict: bool = False) -> dict[str, Finding]:
    """The verdicts of every invariant the case exercises, in catalogue order, under the
    evidence's contract."""
    judged = {
        invariant.id: (invariant, judgement)
        for invariant in CATALOGUE.values()
        if (judgement := invariant.check(evidence)) is not None
    }
    if evidence.status != "completed":
        return _did_not_complete(evidence, judged)
    verdicts = {
        id: invariant.verdict(judgement, evidence, strict=strict)
        for id, (invariant, judgement) in judged.items()
    }
    explained = _explained(evidence, judged, verdicts)
    findings: dict[str, Finding] = {}
    for id, (verdict, reason) in verdicts.items():
        if id in explained and verdict != "n/a":
            verdict, reason = "n/a", explained[id]
        findings[id] = Finding(verdict, reason)
    return findings


def _did_not_complete(
    evidence: Evidence, judged: Mapping[str, tuple[Invariant, Judgement]]
) -> dict[str, Finding]:
    owner = "H4" if evidence.status == "timeout" and "H4" in judged else "G1"
    status = f"adapter {evidence.status}: {evidence.detail}".rstrip(": ")
    findings = {id: Finding("n/a", f"the case did not complete; see {owner}") for id in judged}
    findings[owner] = Finding("fail", status)
    return {id: findings[id] for id in CATALOGUE if id in findings}


def _explained(
    evidence: Evidence,
    judged: Mapping[str, tuple[Invariant, Judgement]],
    verdicts: Mapping[str, tuple[Verdict, str]],
) -> dict[str, str]:
    """The breaches that are consequences of another one, with the invariant that owns it."""
    # A breach only recorded (in an aspect the quirk contests) is not one of them.
    breaches = [
        id
        for id, (invariant, judgement) in judged.items()
        if not judgement.held
        and all(getattr(evidence.capabilities, n) for n in invariant.needs)
        and invariant.contest(judgement, evidence) is None
    ]
    roots = [id for id in breaches if judged[id][1].root_cause]
    if roots:
        return {id: f"a consequence of {roots[0]}" for id in breaches if id != roots[0]}
    tiered = (*FRAMING, *GENERAL, *CATCH_ALL, *INDEPENDENT)
    explained: dict[str, str] = {}
    owners = _reported_once(
        [id for id in breaches if id not in tiered], judged, verdicts, explained
    )
    for tier in _TIERS:
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
    ids: list[str],
    judged: Mapping[str, tuple[Invariant, Judgement]],
    verdicts: Mapping[str, tuple[Verdict, str]],
    explained: dict[str, str],
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
    return [id for id in ids if id not in explained]


# How the stream was read. A retry decision is judged by several rules on purpose (R1 the
# decision, R3 a case that removes a code...), each reporting the decision it covers.
_READING_FAMILIES = frozenset({"S", "T", "E", "C"})
