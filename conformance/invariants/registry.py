"""The invariant catalogue: each invariant is a small registered checker.

A checker reads the :class:`~conformance.invariants.evidence.Evidence` of one case and returns a
:class:`Judgement`, or ``None`` when the case does not exercise that invariant. The
level turns a breach into a verdict (:func:`conformance.verdicts.verdict_for`): MUST → fail,
SHOULD → non-strict, INFO → info; a breach in an aspect of the outcome an ambiguous quirk
contests is info whatever the level (:meth:`Invariant.contest`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fakeprovider.dialects import DIALECT_IDS, DialectId
from fakeprovider.scenario import Scenario

from ..quirks import ASPECTS, Aspect
from ..spec import LATEST_SPEC, SPEC, observed_reason
from ..verdicts import (
    CONTRACTS,
    FAMILY_TITLES,
    Capability,
    CatalogueEntry,
    Contract,
    Cost,
    Level,
    RuleInfo,
    SpecVersion,
    Verdict,
    family_of,
    verdict_for,
)
from .evidence import Evidence


@dataclass(frozen=True)
class Judgement:
    """A checker's finding: held, breached (with the level's weight), or observed only.

    ``weaker`` marks an accepted but weaker outcome (e.g. threw with the right code where
    the spec says yield a finish): non-strict whatever the level.
    """

    held: bool
    reason: str
    weaker: bool = False
    # The breach explains every other one the case shows (a crash, a hidden spent budget):
    # those are reported as its consequences, not as failures of their own.
    root_cause: bool = False
    # An aspect the contract only records (INVARIANTS.md "Contracts"): info, whatever the level.
    recorded: bool = False
    # The aspect of the outcome a breach is in, where the checker knows it (a comparison of
    # whole outcomes names the first difference's); None: its invariant's ``reads``.
    aspect: Aspect | None = None
    # What the breach cost the caller, where the checker knows it (a comparison of outcomes
    # derives it from the difference it found): the compatibility page reads it.
    cost: Cost | None = None


def held(reason: str = "") -> Judgement:
    return Judgement(True, reason)


def breached(reason: str, aspect: Aspect | None = None, cost: Cost | None = None) -> Judgement:
    return Judgement(False, reason, aspect=aspect, cost=cost)


def weaker(reason: str, aspect: Aspect | None = None, cost: Cost | None = None) -> Judgement:
    return Judgement(False, reason, weaker=True, aspect=aspect, cost=cost)


Check = Callable[[Evidence], Judgement | None]


@dataclass(frozen=True)
class Scope:
    """The cases an invariant judges where the scenario alone decides it (every case, every
    quirk fixture): the reference counts those fixtures, beside the ones tagged with the
    invariant's id for provoking it most."""

    summary: str
    applies: Callable[[Scenario], bool]


# A rule of the chat-completions wire's own grammar ([DONE], its chunk shapes).
CHAT_ONLY: tuple[DialectId, ...] = ("chat-completions",)

# The event grammar and one request per attempt hold for any stream the adapter reads.
EVERY_CASE = Scope("every case", lambda scenario: True)


@dataclass(frozen=True, kw_only=True)
class Invariant(RuleInfo):
    check: Check
    # Why it matters: what the user loses when an adapter breaks it, shown beside the
    # statement in the catalogue, the reports and docs/invariants.md.
    rationale: str
    # The aspects of the outcome its verdict depends on, for a finding that names none. On
    # an ambiguous quirk a breach in a contested aspect is recorded (INVARIANTS.md §Q);
    # () is judged whatever the reading: the event grammar, the durable boundary, one
    # request per attempt, the retried body and the waits do not depend on how the wire
    # is read.
    reads: tuple[Aspect, ...] = ASPECTS
    # The level under the interop contract, where it differs from ``level`` (the harness's).
    interop: Level | None = None
    # None: judged where the wire shows what it is about; its fixtures are those tagged
    # with its id.
    scope: Scope | None = None
    # The wires whose cases it judges: a statement that means the same on each covers them
    # all; a rule of one wire's own grammar ([DONE], message_stop) covers that one.
    dialects: tuple[DialectId, ...] = DIALECT_IDS

    def covers(self, dialect: DialectId) -> bool:
        return dialect in self.dialects

    def level_in(self, contract: Contract, spec: SpecVersion = LATEST_SPEC) -> Level:
        """Its level under ``contract`` as revision ``spec`` of the spec states it (INFO
        where that revision does not have the rule: see :meth:`new_in`)."""
        if SPEC.new_since(spec, self.id) is not None:
            return "INFO"
        today = (self.interop or self.level) if contract == "interop" else self.level
        return SPEC.level(spec, self.id, contract, today)

    def new_in(self, evidence: Evidence) -> str | None:
        """Why the evidence's spec revision only observes this rule on its case (added
        later, or judging that wire only later); None when the revision judges it."""
        return SPEC.new_since(evidence.spec, self.id, evidence.scenario.dialect)

    def describe(self, spec: SpecVersion = LATEST_SPEC) -> CatalogueEntry:
        """Its entry as revision ``spec`` states it: a rule added later weighs INFO."""
        entry = super().describe()
        entry["rationale"] = self.rationale
        entry["level"] = self.level_in("harness", spec)
        entry["levels"] = {contract: self.level_in(contract, spec) for contract in CONTRACTS}
        entry["since"] = SPEC.rule_since.get(self.id, LATEST_SPEC)
        entry["dialects"] = list(self.dialects)
        return entry

    def contest(self, judgement: Judgement, evidence: Evidence) -> str | None:
        """Why a breach is only recorded: the aspect it is in is one the case's ambiguous
        quirk contests (and by what). None for a held finding or a judged aspect."""
        if judgement.held:
            return None
        return evidence.contest(self.reads if judgement.aspect is None else (judgement.aspect,))

    def verdict(
        self, judgement: Judgement, evidence: Evidence, *, strict: bool
    ) -> tuple[Verdict, str]:
        """What one finding of this invariant weighs under the evidence's contract."""
        missing = [need for need in self.needs if not getattr(evidence.capabilities, need)]
        if missing:
            return "n/a", f"the adapter does not declare {', '.join(missing)}"
        contest = self.contest(judgement, evidence)
        if contest is not None:
            return "info", f"recorded: {contest}; {judgement.reason}"
        new = self.new_in(evidence)
        if new is not None:
            return "info", observed_reason(new, judgement.reason)
        weight = verdict_for(
            self.level_in(evidence.contract, evidence.spec),
            judgement.held,
            weaker=judgement.weaker,
            strict=strict,
            recorded=judgement.recorded,
        )
        return weight, judgement.reason

    def judge(self, evidence: Evidence, *, strict: bool = False) -> tuple[Verdict, str] | None:
        """This invariant's verdict on its own, or None when the case does not exercise it.

        A run judges every invariant together (:func:`.judging.judge_evidence`), which
        reports each root cause once; this is the single checker's view.
        """
        judgement = self.check(evidence)
        if judgement is None:
            return None
        return self.verdict(judgement, evidence, strict=strict)


CATALOGUE: dict[str, Invariant] = {}


def invariant(
    id: str,
    level: Level,
    statement: str,
    *,
    source: str,
    rationale: str,
    needs: tuple[Capability, ...] = (),
    reads: tuple[Aspect, ...] = ASPECTS,
    interop: Level | None = None,
    scope: Scope | None = None,
    dialects: tuple[DialectId, ...] = DIALECT_IDS,
) -> Callable[[Check], Check]:
    """Register the decorated function as the checker of invariant ``id``."""

    def register(check: Check) -> Check:
        if id in CATALOGUE:
            raise ValueError(f"invariant {id} is registered twice")
        family = family_of(id)
        CATALOGUE[id] = Invariant(
            id=id,
            family=family,
            family_title=FAMILY_TITLES.get(family, ""),
            level=level,
            statement=statement,
            source=source,
            needs=needs,
            check=check,
            rationale=rationale,
            reads=reads,
            interop=interop,
            scope=scope,
            dialects=dialects,
        )
        return check

    return register
