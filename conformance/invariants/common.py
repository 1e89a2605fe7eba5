"""Pieces the family checkers share: pairing attempts and judging expected failures."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..events import ReasoningBlock
from ..oracle import ExpectedAttempt
from .evidence import (
    Difference,
    Evidence,
    ObservedAttempt,
    ending_cost,
    other_reading,
    outcome_difference,
    outcome_differences,
)
from .registry import Judgement, breached, held, weaker

Applies = Callable[[ExpectedAttempt], bool]
Compare = Callable[[ObservedAttempt, ExpectedAttempt, Evidence], str | Judgement | None]


def judge_attempts(
    evidence: Evidence,
    applies: Applies,
    compare: Compare,
    *,
    every_reading: bool = False,
    content: bool = False,
    duty: bool = False,
) -> Judgement | None:
    """Compare every attempt the invariant applies to; None when none applies.

    ``compare`` returns a problem (str), a judgement, or None when the attempt is fine. An
    attempt the adapter read another way the spec allows is left out, unless the invariant
    judges that very reading (``every_reading``). An invariant of what a successful attempt
    holds (``content``) leaves out an attempt that failed where success was expected: its
    missing text or usage follows from the failure, which C5 or the failure's own invariant
    reports. Of the attempts' breaches the first counts, a weaker one only when no other is
    found, and one in an aspect the case contests only when none of its judged aspects is
    breached.
    """
    relevant = [
        (seen, wanted)
        for seen, wanted in evidence.pairs(duty=duty)
        if applies(wanted)
        and (every_reading or not other_reading(seen, wanted))
        and not (content and wanted.success and seen.failed)
    ]
    if not relevant:
        return None
    breaches = []
    for seen, wanted in relevant:
        result = compare(seen, wanted, evidence)
        if isinstance(result, str):
            result = breached(result)
        if result is not None and not result.held:
            breaches.append(
                dataclasses.replace(result, reason=f"attempt {seen.number}: {result.reason}")
            )
    return min(
        breaches, key=lambda found: (_contested(found, evidence), found.weaker), default=held()
    )


def _contested(judgement: Judgement, evidence: Evidence) -> bool:
    aspect = judgement.aspect
    return aspect is not None and evidence.contest((aspect,)) is not None


def has_feature(*names: str) -> Applies:
    """Applies to attempts whose wire shows any of the given features."""
    return lambda wanted: any(name in wanted.features for name in names)


def breach_of(difference: Difference | None) -> Judgement | None:
    """A difference in the outcome as a breach of the aspect it is in."""
    if difference is None:
        return None
    return breached(difference.detail, difference.aspect, difference.cost)


def same_outcome(
    seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
) -> Judgement | None:
    """The central property: the caller sees what the oracle expects."""
    return breach_of(outcome_difference(seen, wanted, evidence.capabilities, evidence.contested))


def same_ending(
    seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
) -> Judgement | None:
    """How the attempt ends (success or failure, reason, code) is the oracle's; what it
    holds is the content and identity checkers' to judge. A family about whether an answer
    counts as empty owns a refusal, not a reasoning text assembled wrong: a maintainer sent
    to the empty-response code for that looks in the wrong place."""
    endings = (
        difference
        for difference in outcome_differences(seen, wanted, evidence.capabilities)
        if difference.aspect == "finish"
    )
    return breach_of(next(endings, None))


def expected_failure(
    seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
) -> Judgement | None:
    """The attempt must fail with the oracle's code, yielded as a finish, not thrown (under
    interop a thrown one with that code passes). Where the interop contract reads it as a
    success (a reset read as the close of a finished body), the whole outcome is compared."""
    if wanted.success:
        return same_outcome(seen, wanted, evidence)
    code = wanted.code
    check_code = evidence.capabilities.error_codes
    cost = ending_cost(seen, wanted)
    finish = seen.finish
    if finish is not None and finish.reason == "error":
        if check_code and finish.code != code:
            return breached(f"finish error {finish.code}, expected {code}", "finish", cost)
        return None
    if seen.thrown is not None:
        if check_code and seen.thrown.code != code:
            return breached(f"{seen.describe()}, expected finish error {code}", "finish", cost)
        if evidence.contract == "interop":
            return None  # the caller is told exactly what failed (v1.2, thrown with the code)
        return weaker(f"{seen.describe()} instead of yielding finish error {code}", "finish")
    return breached(f"{seen.describe()}, expected finish error {code}", "finish", cost)


def harness_duty(relaxed: str) -> Compare:
    """The comparison of an attempt the harness refuses and interop may read as the wire
    sent it (a body ended before its terminal event, a repeated start read past):
    ``relaxed`` says how it was read then. A failure as the oracle states it; under interop,
    the relaxed reading recorded, provided what was read is what the wire sent. Judged
    against the harness reading (``duty``), which it relaxes itself."""

    def compare(
        seen: ObservedAttempt, wanted: ExpectedAttempt, evidence: Evidence
    ) -> Judgement | None:
        finished = evidence.compared_with(seen, wanted)
        if finished is not wanted:
            problem = outcome_difference(seen, finished, evidence.capabilities, evidence.contested)
            if problem:
                return breached(f"{relaxed}, but {problem.detail}", problem.aspect, problem.cost)
            return Judgement(False, f"{relaxed}: {seen.describe()}", recorded=True)
        return expected_failure(seen, wanted, evidence)

    return compare


def first_breach(*found: Judgement | None) -> Judgement | None:
    """The first breach of several comparisons, else the first that held, else None."""
    judged = [judgement for judgement in found if judgement is not None]
    return next((j for j in judged if not j.held), judged[0] if judged else None)


def succeeded_with(feature: str) -> Applies:
    """A successful attempt whose wire has ``feature``: a token is replayed only from a turn
    that completed (a failed attempt's open blocks are the caller's to drop); one that failed
    where success was expected is its failure's to report."""
    return lambda wanted: wanted.success and feature in wanted.features


def same_tokens(*keys: str) -> Compare:
    """Compare the continuity tokens ``keys`` of the reasoning blocks (a signature, an
    encrypted_content, a reasoning item's id), in order: verbatim, none made up."""

    def compare(seen: ObservedAttempt, wanted: ExpectedAttempt, _: Evidence) -> str | None:
        for key in keys:
            got = [getattr(b, key) for b in seen.blocks if isinstance(b, ReasoningBlock)]
            sent = [getattr(b, key) for b in wanted.blocks if isinstance(b, ReasoningBlock)]
            if got != sent:
                return f"reasoning {key}s {_clipped(got)}, expected {_clipped(sent)}"
        return None

    return compare


def _clipped(values: list[str | None]) -> str:
    shown = repr(values)
    return shown if len(shown) <= 160 else shown[:159] + "…"
