"""Verdicts of one gateway case (sans-IO): meaning judgements and the two lint results.

A hazard counts against the gateway only when it *introduced* it: the gateway's findings
are compared with the upstream's by what they say (positions move when a gateway rewrites
a stream), and a hazard passed through unchanged is recorded as info.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from fakeprovider.dialects import DialectId

from ..invariants import Judgement
from ..lint import RULES, Finding, LintResult, LintRule
from ..results import InvariantVerdict
from ..spec import SPEC, observed_reason
from ..verdicts import SpecVersion, verdict_for
from .meaning import MEANING_RULES


def meaning_verdicts(
    judgements: dict[str, Judgement], *, strict: bool
) -> dict[str, InvariantVerdict]:
    """MUST rules: a breach fails; a weaker outcome is non-strict (a failure with --strict)."""
    return {
        rule_id: InvariantVerdict(
            verdict=verdict_for(
                MEANING_RULES[rule_id].level, judgement.held, weaker=judgement.weaker, strict=strict
            ),
            reason=judgement.reason,
        )
        for rule_id, judgement in judgements.items()
    }


def hazard_verdicts(
    upstream: LintResult,
    gateway: LintResult,
    *,
    strict: bool,
    rules: Mapping[str, LintRule] = RULES,
) -> dict[str, InvariantVerdict]:
    """The downstream wire's ``rules`` (chat's W rules by default, SHOULD), for every rule
    either stream exercised."""
    verdicts = {}
    for rule_id in rules:
        if rule_id not in upstream.exercised | gateway.exercised:
            continue
        theirs, ours = upstream.of(rule_id), gateway.of(rule_id)
        introduced = _introduced(theirs, ours)
        if introduced:
            verdict = InvariantVerdict(
                verdict=verdict_for(rules[rule_id].level, held=False, weaker=False, strict=strict),
                reason=f"introduced by the gateway: {_listed(introduced)}",
            )
        elif ours:
            verdict = InvariantVerdict(
                verdict="info", reason=f"passed through from the upstream: {_listed(ours)}"
            )
        elif theirs:
            verdict = InvariantVerdict(
                verdict="pass", reason=f"repaired: the upstream had {_listed(theirs)}"
            )
        else:
            verdict = InvariantVerdict(verdict="pass", reason="")
        verdicts[rule_id] = verdict
    return verdicts


def _introduced(upstream: tuple[Finding, ...], gateway: tuple[Finding, ...]) -> list[Finding]:
    """The gateway's findings beyond the upstream's same findings (by message)."""
    budget = Counter(finding.message for finding in upstream)
    extra = []
    for finding in gateway:
        if budget[finding.message]:
            budget[finding.message] -= 1
        else:
            extra.append(finding)
    return extra


def _listed(findings: tuple[Finding, ...] | list[Finding]) -> str:
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"{findings[0]}{more}"


def observed_only_if_new(
    verdicts: dict[str, InvariantVerdict], spec: SpecVersion, dialect: DialectId
) -> dict[str, InvariantVerdict]:
    """The verdicts under revision ``spec``: a rule it does not have (on ``dialect``'s
    answers) is only observed, info with why."""
    judged = {}
    for rule_id, verdict in verdicts.items():
        new = SPEC.new_since(spec, rule_id, dialect)
        if new is not None:
            verdict = InvariantVerdict(verdict="info", reason=observed_reason(new, verdict.reason))
        judged[rule_id] = verdict
    return judged
