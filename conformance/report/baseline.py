"""Baseline mode: compare a run with an earlier one and fail only on what got worse.

Verdicts are ranked fail < non-strict < pass = info = n/a. A (case, invariant) whose rank
dropped is a new failure (also when the baseline had no verdict for it, e.g. a new case);
one whose rank rose is fixed, and its baseline entry **stale**: a later regression of that
case back to the baseline's verdict would hide behind it (mypy's ``warn_unused_ignores``
habit). A fail or non-strict verdict that kept its rank but not its *cause* has
**changed**: another bug behind the same verdict. New failures and changed causes fail the
comparison, stale entries too when it is strict (``--baseline-strict``); the rest are
unchanged, and the fail or non-strict verdicts among them are the known failures. Verdicts
the baseline had and this run lacks are listed as missing, which does not fail the
comparison (a run of fewer cases, ``-k``, lacks them too).

The cause of a fail or non-strict verdict is its reason without what the clock and the
loopback server decide (:func:`conformance.results.reproducible_reason`: the durations and
URL ports it quotes), so the same bug gives the same cause run after run. Other verdicts
have no cause.

A baseline is read from either of two files: the compact baseline
``conformance run --write-baseline`` writes (:class:`Baseline`, schema
``streamconform.baseline``), or a whole results file (``--json``), which is read down to
the same.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from ..codes import ConformanceError
from ..results import (
    SCHEMA as RESULTS_SCHEMA,
    CaseResult,
    InvariantVerdict,
    RunResult,
    SavedFileError,
    read_document,
    reproducible_reason,
    validated,
)
from ..verdicts import ATTENTION, BY_SEVERITY, UNRECORDED_SPEC, Contract, SpecVersion, Verdict

BASELINE_SCHEMA: Final = "streamconform.baseline"
BASELINE_SCHEMA_VERSION: Final = 1


class BaselineError(ConformanceError, ValueError):
    """A baseline that cannot be used; the message is one line that names the file."""


class BaselineCase(BaseModel):
    """One case of a baseline: each invariant's verdict, and the cause of each fail or
    non-strict one that has a reason."""

    model_config = ConfigDict(extra="forbid")

    verdicts: dict[str, Verdict]
    causes: dict[str, str] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _without_empty_causes(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.causes:
            del data["causes"]
        return data


class Baseline(BaseModel):
    """What a comparison reads of a run: no events, requests, scenarios or timestamps.

    Cases and invariants are sorted by id, so the file of the same verdicts and causes is
    the same byte for byte, and the diff of two is the verdicts that changed.
    """

    schema_id: Literal["streamconform.baseline"] = Field(default=BASELINE_SCHEMA, alias="schema")
    schema_version: Literal[1] = BASELINE_SCHEMA_VERSION
    suite_version: str
    contract: Contract
    # The spec revision it was judged under: a run compared with it is judged under that
    # one unless --spec moves it (written before baselines recorded one: 1.2).
    spec: SpecVersion = UNRECORDED_SPEC
    adapter: str  # the adapter's name from its handshake
    cases: dict[str, BaselineCase]

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @classmethod
    def of(cls, result: RunResult) -> Baseline:
        return cls(
            suite_version=result.suite_version,
            contract=result.contract,
            spec=result.spec,
            adapter=str(result.adapter.get("name", "")),
            cases={
                case.case: _baseline_case(case)
                for case in sorted(result.cases, key=lambda case: case.case)
            },
        )

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2) + "\n"


def _baseline_case(case: CaseResult) -> BaselineCase:
    judged = sorted(case.verdicts.items())
    return BaselineCase(
        verdicts={invariant: verdict.verdict for invariant, verdict in judged},
        causes={invariant: text for invariant, verdict in judged if (text := cause(verdict))},
    )


def cause(verdict: InvariantVerdict) -> str:
    """What a fail or non-strict verdict is compared by: its reason, normalised ("" for
    any other verdict)."""
    return reproducible_reason(verdict.reason) if verdict.verdict in ATTENTION else ""


def read_baseline(path: Path) -> Baseline:
    """The baseline in ``path``: a compact baseline, or a results file read down to one.

    Raises :class:`BaselineError` for a file that is missing, too large, not JSON (or nested
    too deep), or not valid under either schema (:func:`conformance.results.read_document`).
    """
    try:
        document = read_document(path, "the baseline")
        schema = document.get("schema") if isinstance(document, dict) else None
        if schema == BASELINE_SCHEMA:
            return validated(Baseline, document, path, schema)
        if schema == RESULTS_SCHEMA:
            return Baseline.of(validated(RunResult, document, path, schema))
    except SavedFileError as error:
        raise BaselineError(str(error)) from None
    raise BaselineError(
        f"{path}: neither a baseline (schema {BASELINE_SCHEMA!r}) "
        f"nor a results file (schema {RESULTS_SCHEMA!r})"
    )


@dataclass(frozen=True)
class VerdictChange:
    case: str
    invariant: str
    before: Verdict | None  # None: the baseline has no verdict for it
    after: Verdict | None  # None: this run has no verdict for it
    reason: str  # this run's reason (the baseline's cause when missing now)
    baseline_cause: str | None = None  # set for a changed cause: the one the baseline has

    def describe(self) -> str:
        before = self.before or "(none)"
        after = self.after or "(none)"
        change = after if before == after else f"{before} -> {after}"
        reason = f": {self.reason}" if self.reason else ""
        was = "" if self.baseline_cause is None else f" (baseline: {self.baseline_cause})"
        return f"{self.invariant} {self.case}: {change}{reason}{was}"


@dataclass(frozen=True)
class BaselineDiff:
    new_failures: tuple[VerdictChange, ...]
    changed: tuple[VerdictChange, ...]
    fixed: tuple[VerdictChange, ...]
    unchanged: tuple[VerdictChange, ...]
    missing: tuple[VerdictChange, ...]
    strict: bool = False  # stale entries fail the comparison too

    @property
    def stale(self) -> tuple[VerdictChange, ...]:
        """The baseline's failures that now pass (or fail less): entries to drop."""
        return self.fixed

    @property
    def failed(self) -> bool:
        """The run is worse than its baseline somewhere, or (``strict``) its baseline is
        stale (the exit status of baseline mode)."""
        return bool(self.new_failures or self.changed or (self.strict and self.stale))

    @property
    def known_failures(self) -> tuple[VerdictChange, ...]:
        """The fail and non-strict verdicts the baseline has, with the same cause."""
        return tuple(change for change in self.unchanged if change.after in ATTENTION)

    @property
    def headline(self) -> str:
        """The comparison in one line: ``3 known failures (baseline), 0 new, 0 changed``."""
        known = len(self.known_failures)
        stale = f", {len(self.stale)} stale" if self.stale else ""
        return (
            f"{known} known failure{'' if known == 1 else 's'} (baseline), "
            f"{len(self.new_failures)} new, {len(self.changed)} changed{stale}"
        )


class _Judged(NamedTuple):
    verdict: Verdict | None  # None: not judged
    cause: str


_NOT_JUDGED = _Judged(None, "")


def compare_baseline(
    current: RunResult, baseline: Baseline | RunResult, *, strict: bool = False
) -> BaselineDiff:
    """``current`` against ``baseline`` (a whole run is read down to its baseline first);
    ``strict``: a stale baseline entry fails the comparison."""
    if isinstance(baseline, RunResult):
        baseline = Baseline.of(baseline)
    before = {
        (case_id, invariant): _Judged(verdict, case.causes.get(invariant, ""))
        for case_id, case in baseline.cases.items()
        for invariant, verdict in case.verdicts.items()
    }
    after = {
        (case.case, invariant): verdict
        for case in current.cases
        for invariant, verdict in case.verdicts.items()
    }
    worse, changed, better, same = [], [], [], []
    for key, now in after.items():
        then = before.get(key, _NOT_JUDGED)
        change = VerdictChange(*key, then.verdict, now.verdict, now.reason)
        step = _rank(now.verdict) - _rank(then.verdict)
        if step < 0:
            worse.append(change)
        elif step > 0:
            better.append(change)
        elif now.verdict in ATTENTION and cause(now) != then.cause:
            changed.append(replace(change, baseline_cause=then.cause))
        else:
            same.append(change)
    missing = [
        VerdictChange(*key, then.verdict, None, then.cause)
        for key, then in before.items()
        if key not in after
    ]
    return BaselineDiff(
        tuple(worse), tuple(changed), tuple(better), tuple(same), tuple(missing), strict
    )


def _rank(verdict: Verdict | None) -> int:
    """fail < non-strict < the rest, which tie: pass -> info, n/a or not judged is no change."""
    return BY_SEVERITY.index(verdict) if verdict in ATTENTION else len(ATTENTION)


def fails_gate(result: RunResult, diff: BaselineDiff | None) -> bool:
    """Whether ``conformance run`` fails: on any fail verdict, or, with a baseline, on a new
    failure, a changed cause or (a strict comparison) a stale entry; known failures alone
    pass."""
    return result.failed if diff is None else diff.failed


class BaselineSection(NamedTuple):
    title: str
    changes: tuple[VerdictChange, ...]
    failing: bool  # its verdicts are this run's failures (the rest are not, or not judged)


def baseline_sections(diff: BaselineDiff) -> tuple[BaselineSection, ...]:
    """The comparison's lists, each with its title, in the order a reader needs them."""
    stale = "Stale baseline entries (a failure that now passes or fails less; refresh with "
    stale += "--write-baseline)" + (", failing the gate (--baseline-strict)" if diff.strict else "")
    return (
        BaselineSection("New failures (verdict got worse)", diff.new_failures, True),
        BaselineSection("Changed cause (same verdict, another reason)", diff.changed, True),
        BaselineSection(stale, diff.stale, False),
        BaselineSection("Known failures (same verdict and cause)", diff.known_failures, True),
        BaselineSection("No longer judged", diff.missing, False),
    )


def format_baseline(diff: BaselineDiff) -> str:
    """A plain-text summary for the terminal and CI logs."""
    lines = [
        f"Baseline comparison: {len(diff.new_failures)} new failure(s), {len(diff.changed)} "
        f"changed cause(s), {len(diff.stale)} stale, {len(diff.known_failures)} known "
        f"failure(s), {len(diff.unchanged) - len(diff.known_failures)} unchanged passing"
        + (f", {len(diff.missing)} no longer judged" if diff.missing else ""),
    ]
    for title, changes, _ in baseline_sections(diff):
        if changes:
            lines += ["", f"{title}:"] + [f"  {change.describe()}" for change in changes]
    return "\n".join(lines) + "\n"
