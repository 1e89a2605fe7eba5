"""Baseline mode: only verdicts that got worse fail the comparison."""

from __future__ import annotations

import report_builders as build

from conformance.report import compare_baseline, format_baseline
from conformance.results import RunResult


def run(verdicts: dict[str, dict[str, str | tuple[str, str]]]) -> RunResult:
    return build.result([build.case(case_id, judged) for case_id, judged in verdicts.items()])


def test_same_run_is_not_worse() -> None:
    mutant = run({"a": {"C1": "fail", "G1": "pass"}, "b": {"G8": "non-strict"}})
    diff = compare_baseline(mutant, mutant)
    assert not diff.failed
    assert not diff.new_failures and not diff.fixed and not diff.missing
    assert len(diff.unchanged) == 3
    assert [(c.case, c.invariant) for c in diff.still_failing] == [("a", "C1"), ("b", "G8")]


def test_worse_better_and_missing() -> None:
    baseline = run(
        {
            "a": {"C1": "pass", "G1": "non-strict", "G8": "fail", "H2": "n/a"},
            "gone": {"G1": "fail"},
        }
    )
    current = run(
        {
            "a": {"C1": ("fail", "text ['x']"), "G1": "fail", "G8": "pass", "H2": "info"},
            "new": {"E1": ("non-strict", "threw EMPTY_RESPONSE")},
        }
    )
    diff = compare_baseline(current, baseline)
    assert diff.failed
    worse = {(c.case, c.invariant): (c.before, c.after) for c in diff.new_failures}
    assert worse == {
        ("a", "C1"): ("pass", "fail"),
        ("a", "G1"): ("non-strict", "fail"),
        ("new", "E1"): (None, "non-strict"),
    }
    assert [(c.case, c.invariant, c.before, c.after) for c in diff.fixed] == [
        ("a", "G8", "fail", "pass")
    ]
    assert [(c.invariant, c.before, c.after) for c in diff.unchanged] == [("H2", "n/a", "info")]
    assert [(c.case, c.before, c.after) for c in diff.missing] == [("gone", "fail", None)]


def test_summary_text() -> None:
    baseline = run({"a": {"C1": "pass", "G8": "fail"}, "b": {"G1": "non-strict"}})
    current = run({"a": {"C1": ("fail", "text ['x']"), "G8": "pass"}, "b": {"G1": "non-strict"}})
    text = format_baseline(compare_baseline(current, baseline))
    assert text.splitlines()[0] == (
        "Baseline comparison: 1 new failure(s), 1 fixed, 1 still failing or non-strict, "
        "0 unchanged passing"
    )
    assert "New failures (verdict got worse):\n  C1 a: pass -> fail: text ['x']" in text
    assert "Fixed:\n  G8 a: fail -> pass" in text
    assert "Unchanged failing or non-strict:\n  G1 b: non-strict" in text
