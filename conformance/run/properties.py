"""One property per invariant family: every generated case gets the oracle's outcome.

The property of family F draws cases from :func:`conformance.strategies.family_cases`, runs
each one against the adapter (:class:`~conformance.run.case_runner.CaseRunner`), judges it with
the catalogue, and fails when an invariant of F is breached — a ``fail``, or a
``non-strict`` on a SHOULD, the kill table's rule. Hypothesis then shrinks the case; the
:class:`PropertyFailureError` it ends with names the family, the invariant and the verdict's
reason, and holds the shrunk scenario, ready to be saved as a fixture.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import hypothesis
from hypothesis import Phase, Verbosity, given
from hypothesis.errors import FlakyFailure

from fakeprovider.dialects import DEFAULT_DIALECT, DialectId
from fakeprovider.scenario import (
    TERMINAL_STEPS,
    ErrorAttempt,
    FaultAttempt,
    PauseStep,
    Scenario,
    StreamAttempt,
)
from fakeprovider.wire import encode_stream, error_body

from ..codes import ConformanceError
from ..invariants import CATALOGUE
from ..invariants.judging import documented_order
from ..results import CaseResult
from ..strategies import DIALECT_FAMILIES, family_cases
from ..strategies.profiles import PROFILES, register_profiles
from ..verdicts import ATTENTION
from .case_runner import CaseRunner
from .kill_table import Breach

register_profiles()


def families(dialect: DialectId = DEFAULT_DIALECT) -> tuple[str, ...]:
    """The families that have both invariants in the catalogue and generated cases of
    ``dialect`` (none for a dialect without strategies)."""
    present = {invariant.family for invariant in CATALOGUE.values()}
    return tuple(family for family in DIALECT_FAMILIES.get(dialect, ()) if family in present)


def family_label(family: str, dialect: DialectId = DEFAULT_DIALECT) -> str:
    """How a family's run is named: ``C`` for chat's cases, ``C anthropic-messages`` for
    another dialect's (the same invariants, another wire)."""
    return family if dialect == DEFAULT_DIALECT else f"{family} {dialect}"


def generated_family(family: str) -> str:
    """The generated family that exercises a catalogue family: a wire's own rules are drawn
    with its cases of the same letter (AN-G's by G on the Anthropic wire)."""
    return family.rpartition("-")[2]


def family_invariants(family: str, dialect: DialectId = DEFAULT_DIALECT) -> tuple[str, ...]:
    """The invariants a generated family of ``dialect`` judges."""
    return tuple(
        i.id
        for i in CATALOGUE.values()
        if generated_family(i.family) == family and dialect in i.dialects
    )


@dataclass(frozen=True)
class ScenarioSize:
    """How big a case is on the wire: events written (SSE events and lines, error
    responses, faults) and body bytes, over every attempt."""

    events: int
    bytes: int


def scenario_size(scenario: Scenario) -> ScenarioSize:
    events = size = 0
    for attempt in scenario.attempts:
        if isinstance(attempt, StreamAttempt):
            plan = encode_stream(attempt.stream)
            events += sum(1 for step in attempt.stream.steps if not isinstance(step, _SILENT))
            size += len(plan.body)
        elif isinstance(attempt, ErrorAttempt):
            events += 1
            size += len(error_body(attempt.error))
        elif isinstance(attempt, FaultAttempt):
            events += 1
    return ScenarioSize(events, size)


_SILENT = (PauseStep, *TERMINAL_STEPS)  # steps that write no bytes


def breaches(result: CaseResult, invariants: Iterable[str] | None = None) -> tuple[Breach, ...]:
    """The verdicts that break the property: any failure of the case, under the invariant
    that owns its root cause (a crash while fuzzing tool calls is G1's, not T4's); or, where
    ``invariants`` names targets (a mutant's), each target caught, non-strict on a SHOULD
    included."""
    # The headline is the first: the documented order breaks ties, as it does in a run.
    completed, verdicts = result.status == "completed", result.verdicts
    found = [
        Breach(name, result.case, verdicts[name].verdict, verdicts[name].reason, completed)
        for name in documented_order(verdicts)
    ]
    if invariants is None:
        return tuple(breach for breach in found if breach.verdict == "fail")
    wanted = set(invariants)
    return tuple(breach for breach in found if breach.invariant in wanted and breach.caught)


class PropertyFailureError(ConformanceError, AssertionError):
    """A generated case on which the family's invariants do not hold."""

    def __init__(
        self, family: str, found: tuple[Breach, ...], result: CaseResult, scenario: Scenario
    ) -> None:
        self.family = family
        self.breaches = found
        self.result = result
        self.scenario = scenario
        self.size = scenario_size(scenario)
        first = found[0]
        super().__init__(
            f"{family_label(family, scenario.dialect)}: "
            f"{first.invariant} {first.verdict}: {first.reason} "
            f"[{scenario.id}: {self.size.events} events, {self.size.bytes} bytes]"
        )

    @property
    def invariants(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(breach.invariant for breach in self.breaches))

    def __reduce__(self) -> tuple[type[PropertyFailureError], tuple[object, ...]]:
        # Rebuilt from its parts when a worker process sends it back (`fuzz --jobs`).
        return type(self), (self.family, self.breaches, self.result, self.scenario)


@dataclass
class FamilyRun:
    """How one family's property fared."""

    family: str
    invariants: tuple[str, ...]
    dialect: DialectId = DEFAULT_DIALECT  # the wire its cases speak
    examples: int = 0
    seconds: float = 0.0
    exercised: Counter[str] = field(default_factory=Counter)  # invariant -> judged cases
    failure: PropertyFailureError | None = None
    flaky: bool = False  # the failure did not reproduce when Hypothesis replayed it

    @property
    def passed(self) -> bool:
        return self.failure is None

    @property
    def label(self) -> str:
        return family_label(self.family, self.dialect)


def property_settings(profile: hypothesis.settings) -> hypothesis.settings:
    """A profile made fit for a property over a live adapter: no example database (a
    failure is kept as a fixture instead), no explain phase, one bug reported, quiet."""
    return hypothesis.settings(
        profile,
        database=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
    )


def check_family(
    runner: CaseRunner,
    family: str,
    *,
    settings: hypothesis.settings | None = None,
    seed: int | None = None,
    invariants: Iterable[str] | None = None,
    on_example: Callable[[FamilyRun], None] | None = None,
    dialect: DialectId = DEFAULT_DIALECT,
) -> FamilyRun:
    """Run family ``family``'s property on cases of ``dialect``; ``invariants`` narrows it
    to targets (a mutant's).

    Without targets any failing verdict of a generated case breaks the property. ``settings``
    defaults to the active Hypothesis profile; ``seed`` fixes the draws (otherwise they
    follow the profile: derandomized or random); ``on_example`` hears of every example run.
    """
    targets = tuple(invariants) if invariants is not None else None
    selected = targets or family_invariants(family, dialect)
    run = FamilyRun(family, selected, dialect)
    options = runner.options

    def example(scenario: Scenario) -> None:
        observed = runner.observe(scenario)
        verdicts = observed.verdicts(options.contract, strict=options.strict, spec=options.spec)
        run.examples += 1
        run.exercised.update(
            name
            for name, verdict in verdicts.items()
            if name in selected and verdict.verdict != "n/a"
        )
        if on_example is not None:
            on_example(run)
        if any(verdict.verdict in ATTENTION for verdict in verdicts.values()):
            # Only a case that may break the property needs its whole result.
            result = observed.judged(options.contract, strict=options.strict, spec=options.spec)
            found = breaches(result, targets)
            if found:
                raise PropertyFailureError(family, found, result, scenario)

    test = given(family_cases(family, dialect))(example)
    chosen = property_settings(settings or hypothesis.settings())
    if seed is not None:
        chosen = hypothesis.settings(chosen, derandomize=False)
        test = hypothesis.seed(seed)(test)
    begun = time.monotonic()
    try:
        chosen(test)()
    except PropertyFailureError as failure:
        run.failure = failure
    except FlakyFailure as flaky:  # it failed, then passed when Hypothesis replayed it
        failures = [error for error in flaky.exceptions if isinstance(error, PropertyFailureError)]
        if not failures:
            raise
        run.failure, run.flaky = failures[0], True
    run.seconds = time.monotonic() - begun
    return run


def sample_cases(
    count: int, seed: int, only: Iterable[str] | None = None, dialect: DialectId = DEFAULT_DIALECT
) -> list[Scenario]:
    """``count`` generated cases of ``dialect``, spread over the families, the same for the
    same seed."""
    chosen = tuple(only) if only is not None else families(dialect)
    drawn: dict[str, Scenario] = {}
    for position, family in enumerate(chosen):
        share = count // len(chosen) + (position < count % len(chosen))
        if share:
            drawn |= _sample_family(family, share, seed, dialect)
    return list(drawn.values())


def _sample_family(family: str, count: int, seed: int, dialect: DialectId) -> dict[str, Scenario]:
    drawn: dict[str, Scenario] = {}

    def keep(scenario: Scenario) -> None:
        drawn[scenario.id] = scenario

    profile = hypothesis.settings(
        PROFILES["ci"], max_examples=count, derandomize=False, phases=(Phase.generate,)
    )
    test = hypothesis.seed(seed)(profile(given(family_cases(family, dialect))(keep)))
    test()
    return drawn
