"""The kill table: every mutant run over the fixtures, and which invariants caught it.

A mutant is *killed* when each of its target invariants fails in a case that completed:
``fail``, or ``non-strict`` for a SHOULD invariant. A verdict of a case the runner had to
cut off (``timeout``, ``crash``...) is the runner's, not the checker's, so it never counts
as a kill; rows say when a target was breached only there.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from fakeprovider.interrupts import Interruption
from fakeprovider.scenario import Scenario

from ..adapters.base import PythonAdapterSession, load_python_adapter
from ..adapters.mutants import MUTANTS, Mutant
from ..adapters.reference import ReferenceAdapter
from ..invariants import CATALOGUE
from ..options import RunOptions, case_policy
from ..results import CaseResult, RunResult
from ..verdicts import ATTENTION, Verdict
from .estimate import estimated_duration_s, longest_first
from .runner import run_suite
from .schedule import CaseSchedule, run_scheduled


@dataclass(frozen=True)
class Breach:
    """One failing (or non-strict) verdict of a mutant's run."""

    invariant: str
    case: str
    verdict: Verdict
    reason: str
    completed: bool  # False: the runner cut the case off; the verdict is not the checker's

    @property
    def caught(self) -> bool:
        """Breaks the invariant: a MUST fails, a SHOULD fails or is non-strict (a MUST's
        non-strict is a weaker outcome the spec accepts)."""
        level = CATALOGUE[self.invariant].level if self.invariant in CATALOGUE else "MUST"
        return self.verdict == "fail" or (self.verdict == "non-strict" and level == "SHOULD")

    @property
    def kills(self) -> bool:
        """Counts as catching the bug: caught, in a case the checker judged."""
        return self.completed and self.caught


@dataclass(frozen=True)
class KillRow:
    """How one mutant fared."""

    mutant: str
    bug: str
    targets: tuple[str, ...]
    cases: tuple[str, ...]  # the cases it ran
    breaches: tuple[Breach, ...]
    timed_out: tuple[str, ...]  # cases that did not complete (timeout, crash, protocol error)
    duration_s: float

    @property
    def killed_by(self) -> tuple[str, ...]:
        """Target invariants that caught the mutant."""
        caught = {breach.invariant for breach in self.breaches if breach.kills}
        return tuple(target for target in self.targets if target in caught)

    @property
    def survived(self) -> tuple[str, ...]:
        """Target invariants that did not catch it."""
        return tuple(target for target in self.targets if target not in self.killed_by)

    @property
    def killed(self) -> bool:
        return not self.survived

    @property
    def failed(self) -> tuple[str, ...]:
        """Every invariant with a fail or non-strict verdict, in catalogue order."""
        breached = {breach.invariant for breach in self.breaches}
        return tuple(sorted(breached, key=_catalogue_order))

    @property
    def timeout_only(self) -> tuple[str, ...]:
        """Targets breached, but only in cases the runner cut off."""
        cut = {breach.invariant for breach in self.breaches if not breach.completed}
        return tuple(target for target in self.survived if target in cut)

    def cases_killing(self, invariant: str) -> tuple[str, ...]:
        return tuple(b.case for b in self.breaches if b.invariant == invariant and b.kills)


def kill_table(
    fixtures: Sequence[Scenario],
    options: RunOptions,
    *,
    names: Iterable[str] | None = None,
    focus: bool = False,
    jobs: int = 1,
    interruption: Interruption | None = None,
) -> list[KillRow]:
    """Run every mutant (or those ``names``) over ``fixtures``; one row each, in registry order.

    With ``focus``, the reference adapter runs first and each mutant then runs only the
    cases that exercise one of its targets (the cases the reference got a verdict for).
    ``jobs`` cases are in flight at once (see :func:`run_mutants`). A signal
    ``interruption`` catches stops it: the rows are those of the mutants that ended.
    """

    async def run() -> list[KillRow]:
        baseline = (
            await run_reference(fixtures, options, jobs=jobs, interruption=interruption)
            if focus
            else None
        )
        return await run_mutants(
            fixtures, options, names=names, baseline=baseline, jobs=jobs, interruption=interruption
        )

    return asyncio.run(run())


async def run_reference(
    fixtures: Sequence[Scenario],
    options: RunOptions,
    *,
    jobs: int = 1,
    interruption: Interruption | None = None,
) -> RunResult:
    """The reference adapter's run: the baseline every mutant is a variant of."""
    session = PythonAdapterSession(ReferenceAdapter())
    try:
        return await run_suite(session, fixtures, options, jobs=jobs, interruption=interruption)
    finally:
        await session.close()


async def run_mutants(
    fixtures: Sequence[Scenario],
    options: RunOptions,
    *,
    names: Iterable[str] | None = None,
    baseline: RunResult | None = None,
    jobs: int = 1,
    interruption: Interruption | None = None,
) -> list[KillRow]:
    """The kill rows, in registry order; ``baseline`` focuses each mutant on its targets.

    ``jobs`` mutants run side by side, each one case at a time (so ``jobs`` cases are in
    flight), the longest first; until ``interruption`` says stop, leaving out the rows of
    the mutants that had not ended. Raises KeyError for a name that is not a mutant.
    """
    chosen = list(MUTANTS) if names is None else list(names)
    mutants = [MUTANTS[name] for name in chosen]
    cases = [
        fixtures if baseline is None else focus_cases(fixtures, baseline, mutant.targets)
        for mutant in mutants
    ]
    rows: dict[int, KillRow] = {}

    async def one(position: int) -> int:
        rows[position] = await run_mutant(mutants[position], cases[position], options)
        return 0  # each mutant's run keeps within its own budget

    order = longest_first([_estimated_s(scenarios, options) for scenarios in cases])
    stop = None if interruption is None else interruption.signalled()
    await run_scheduled(CaseSchedule(order), jobs, one, stop)
    return [rows[position] for position in range(len(mutants)) if position in rows]


def _estimated_s(scenarios: Sequence[Scenario], options: RunOptions) -> float:
    """How long the reference adapter's retries and waits make a mutant's run take."""
    return sum(
        estimated_duration_s(s, case_policy(options.policy, s), options.idle_timeout_s)
        for s in scenarios
    )


def focus_cases(
    fixtures: Sequence[Scenario], baseline: RunResult, targets: Iterable[str]
) -> list[Scenario]:
    """The fixtures whose case, in ``baseline``, was judged on any of ``targets``."""
    wanted = set(targets)
    judged = {case.case for case in baseline.cases if wanted & case.verdicts.keys()}
    return [scenario for scenario in fixtures if scenario.id in judged]


async def run_mutant(mutant: Mutant, fixtures: Sequence[Scenario], options: RunOptions) -> KillRow:
    """Run one mutant, judged under the contract that must catch it (:attr:`Mutant.contract`)."""
    begun = time.monotonic()
    options = replace(options, contract=mutant.contract)
    # Loaded by name, exactly as `--adapter conformance.adapters.mutants:<name>` loads it.
    session = load_python_adapter(mutant.target, options)
    try:
        result = await run_suite(
            session, fixtures, options, invocation=f"--adapter {mutant.target}"
        )
    finally:
        await session.close()
    return KillRow(
        mutant=mutant.name,
        bug=mutant.bug,
        targets=mutant.targets,
        cases=tuple(case.case for case in result.cases),
        breaches=tuple(breach for case in result.cases for breach in _breaches(case)),
        timed_out=tuple(case.case for case in result.cases if case.status != "completed"),
        duration_s=round(time.monotonic() - begun, 2),
    )


def _breaches(case: CaseResult) -> list[Breach]:
    completed = case.status == "completed"
    return [
        Breach(invariant, case.case, verdict.verdict, verdict.reason, completed)
        for invariant, verdict in case.verdicts.items()
        if verdict.verdict in ATTENTION
    ]


def _catalogue_order(invariant: str) -> int:
    order = list(CATALOGUE)
    return order.index(invariant) if invariant in order else len(order)
