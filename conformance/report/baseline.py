"""Baseline mode: compare a run with an earlier one and fail only on what got worse.

Verdicts are ranked fail < non-strict < pass = info = n/a. A (case, invariant) whose rank
dropped is a new failure (also when the baseline had no verdict for it, e.g. a new case);
one whose rank rose is fixed; the rest are unchanged. Verdicts the baseline had and this
run lacks are listed as missing, which does not fail the comparison.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..results import InvariantVerdict, RunResult
from ..verdicts import ATTENTION, BY_SEVERITY, Verdict

Key = tuple[str, str]  # (case id, invariant id)


@dataclass(frozen=True)
class VerdictChange:
    case: str
    invariant: str
    before: Verdict | None  # None: the baseline has no verdict for it
    after: Verdict | None  # None: this run has no verdict for it
    reason: str  # this run's reason (the baseline's when missing now)

    def describe(self) -> str:
        before = self.before or "(none)"
        after = self.after or "(none)"
        change = after if before == after else f"{before} -> {after}"
        reason = f": {self.reason}" if self.reason else ""
        return f"{self.invariant} {self.case}: {change}{reason}"


@dataclass(frozen=True)
class BaselineDiff:
    new_failures: tuple[VerdictChange, ...]
    fixed: tuple[VerdictChange, ...]
    unchanged: tuple[VerdictChange, ...]
    missing: tuple[VerdictChange, ...]

    @property
    def failed(self) -> bool:
        """The run is worse than its baseline somewhere (the exit status of baseline mode)."""
        return bool(self.new_failures)

    @property
    def still_failing(self) -> tuple[VerdictChange, ...]:
        return tuple(change for change in self.unchanged if change.after in ATTENTION)


def compare_baseline(current: RunResult, baseline: RunResult) -> BaselineDiff:
    before = _verdicts(baseline)
    after = _verdicts(current)
    worse, better, same = [], [], []
    for key, now in after.items():
        then = before.get(key)
        change = VerdictChange(*key, then.verdict if then else None, now.verdict, now.reason)
        rank_then = _rank(then.verdict if then else "pass")
        if _rank(now.verdict) < rank_then:
            worse.append(change)
        elif _rank(now.verdict) > rank_then:
            better.append(change)
        else:
            same.append(change)
    missing = [
        VerdictChange(*key, then.verdict, None, then.reason)
        for key, then in before.items()
        if key not in after
    ]
    return BaselineDiff(tuple(worse), tuple(better), tuple(same), tuple(missing))


def _rank(verdict: Verdict) -> int:
    """fail < non-strict < the rest, which tie: pass -> info or n/a is no change."""
    return BY_SEVERITY.index(verdict) if verdict in ATTENTION else len(ATTENTION)


def _verdicts(result: RunResult) -> dict[Key, InvariantVerdict]:
    return {
        (case.case, invariant_id): verdict
        for case in result.cases
        for invariant_id, verdict in case.verdicts.items()
    }


def format_baseline(diff: BaselineDiff) -> str:
    """A plain-text summary for the terminal and CI logs."""
    still = diff.still_failing
    lines = [
        f"Baseline comparison: {len(diff.new_failures)} new failure(s), {len(diff.fixed)} "
        f"fixed, {len(still)} still failing or non-strict, "
        f"{len(diff.unchanged) - len(still)} unchanged passing"
        + (f", {len(diff.missing)} no longer judged" if diff.missing else ""),
    ]
    sections = (
        ("New failures (verdict got worse)", diff.new_failures),
        ("Fixed", diff.fixed),
        ("Unchanged failing or non-strict", still),
        ("No longer judged", diff.missing),
    )
    for title, changes in sections:
        if changes:
            lines += ["", f"{title}:"] + [f"  {change.describe()}" for change in changes]
    return "\n".join(lines) + "\n"
