"""Baseline mode: only verdicts that got worse, or failures whose cause changed, fail the
comparison; a baseline is a compact file or a whole results file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import report_builders as build

from conformance.report import (
    Baseline,
    BaselineError,
    compare_baseline,
    fails_gate,
    format_baseline,
    read_baseline,
)
from conformance.results import RunResult, reproducible_json, reproducible_reason


def run(verdicts: dict[str, dict[str, str | tuple[str, str]]]) -> RunResult:
    return build.result([build.case(case_id, judged) for case_id, judged in verdicts.items()])


def test_same_run_is_not_worse() -> None:
    mutant = run({"a": {"C1": "fail", "G1": "pass"}, "b": {"G8": "non-strict"}})
    diff = compare_baseline(mutant, mutant)
    assert not diff.failed
    assert not diff.new_failures and not diff.changed and not diff.fixed and not diff.missing
    assert len(diff.unchanged) == 3
    assert [(c.case, c.invariant) for c in diff.known_failures] == [("a", "C1"), ("b", "G8")]


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


def test_a_failure_with_another_cause_has_changed_and_fails() -> None:
    baseline = run(
        {
            "a": {"T1": ("fail", "tool call 0 id '', expected 'call_1'"), "G1": "pass"},
            "b": {"G8": ("non-strict", "usage null")},
            "c": {"C1": ("fail", "text ['x']")},
        }
    )
    current = run(
        {
            "a": {"T1": ("fail", "tool call 0 name '', expected 'f'"), "G1": ("pass", "other")},
            "b": {"G8": ("non-strict", "finish null")},
            "c": {"C1": ("fail", "text ['x']")},
        }
    )
    diff = compare_baseline(current, baseline)
    assert diff.failed and not diff.new_failures
    changed = {(c.case, c.invariant): (c.reason, c.baseline_cause) for c in diff.changed}
    assert changed == {
        ("a", "T1"): ("tool call 0 name '', expected 'f'", "tool call 0 id '', expected 'call_1'"),
        ("b", "G8"): ("finish null", "usage null"),
    }
    # A passing verdict has no cause: its reason may change freely.
    assert [(c.case, c.invariant) for c in diff.unchanged] == [("a", "G1"), ("c", "C1")]
    assert diff.headline == "1 known failure (baseline), 0 new, 2 changed"


def test_the_cause_is_the_reason_without_durations_and_ports() -> None:
    then = "retry 1 came 3 ms after attempt 1 ended; at least 995 ms expected"
    now = "retry 1 came 12.5 ms after attempt 1 ended; at least 995 ms expected"
    stall = "attempt 1: gave up after 15.01 s; the idle timeout is 1.0 s"
    url = "threw TRANSPORT: Client error for url 'http://127.0.0.1:{}/case/v1/chat/completions'"
    baseline = run(
        {"a": {"R6": ("fail", then), "H4": ("fail", stall), "H3": ("fail", url.format(41234))}}
    )
    current = run(
        {
            "a": {
                "R6": ("fail", now),
                "H4": ("fail", stall.replace("15.01", "15.34")),
                "H3": ("fail", url.format(50123)),
            }
        }
    )
    diff = compare_baseline(current, baseline)
    assert not diff.failed and len(diff.known_failures) == 3
    assert (
        reproducible_reason(now)
        == "retry 1 came … ms after attempt 1 ended; at least … ms expected"
    )
    assert reproducible_reason(stall) == "attempt 1: gave up after … s; the idle timeout is … s"
    assert "http://127.0.0.1:…/case/v1" in reproducible_reason(url.format(41234))
    assert reproducible_reason(reproducible_reason(now)) == reproducible_reason(now)
    # Only numbers that are durations: a count that changed is another cause.
    other = run({"a": {"R6": ("fail", then.replace("retry 1", "retry 2"))}})
    assert compare_baseline(other, baseline).changed


def test_summary_text() -> None:
    baseline = run(
        {"a": {"C1": "pass", "G8": "fail"}, "b": {"G1": "non-strict"}, "c": {"T1": ("fail", "x")}}
    )
    current = run(
        {
            "a": {"C1": ("fail", "text ['x']"), "G8": "pass"},
            "b": {"G1": "non-strict"},
            "c": {"T1": ("fail", "id ''")},
        }
    )
    diff = compare_baseline(current, baseline)
    text = format_baseline(diff)
    assert text.splitlines()[0] == (
        "Baseline comparison: 1 new failure(s), 1 changed cause(s), 1 stale, 1 known "
        "failure(s), 0 unchanged passing"
    )
    assert "New failures (verdict got worse):\n  C1 a: pass -> fail: text ['x']" in text
    assert (
        "Changed cause (same verdict, another reason):\n  T1 c: fail: id '' (baseline: x)" in text
    )
    assert (
        "Stale baseline entries (a failure that now passes or fails less; refresh with "
        "--write-baseline):\n  G8 a: fail -> pass" in text
    )
    assert "Known failures (same verdict and cause):\n  G1 b: non-strict" in text
    assert diff.headline == "1 known failure (baseline), 1 new, 1 changed, 1 stale"


def test_the_gate_passes_on_known_failures_only() -> None:
    failing = run({"a": {"C1": ("fail", "text ['x']")}, "b": {"G8": ("non-strict", "null")}})
    assert fails_gate(failing, None)
    diff = compare_baseline(failing, failing)
    assert not fails_gate(failing, diff)
    assert diff.headline == "2 known failures (baseline), 0 new, 0 changed"
    worse = run({"a": {"C1": ("fail", "text ['x']")}, "b": {"G8": ("fail", "null")}})
    assert fails_gate(worse, compare_baseline(worse, failing))


# --- the baseline file --------------------------------------------------------------------


def sample() -> RunResult:
    return build.result(
        [
            build.case("tool-b", {"T1": ("fail", "waits 8 ms"), "G1": ("pass", "ok"), "C1": "n/a"}),
            build.case("a-text", {"G8": ("non-strict", "null usage"), "C1": "pass", "T7": "info"}),
            build.case("c-clean", {"G1": "pass"}),
        ],
        contract="interop",
    )


def test_the_baseline_file_is_compact_sorted_and_timeless() -> None:
    text = Baseline.of(sample()).to_json()
    assert text == (
        "{\n"
        '  "schema": "streamconform.baseline",\n'
        '  "schema_version": 1,\n'
        '  "suite_version": "0.1.0",\n'
        '  "contract": "interop",\n'
        '  "spec": "1.2",\n'
        '  "adapter": "example-adapter",\n'
        '  "cases": {\n'
        '    "a-text": {\n'
        '      "verdicts": {\n'
        '        "C1": "pass",\n'
        '        "G8": "non-strict",\n'
        '        "T7": "info"\n'
        "      },\n"
        '      "causes": {\n'
        '        "G8": "null usage"\n'
        "      }\n"
        "    },\n"
        '    "c-clean": {\n'
        '      "verdicts": {\n'
        '        "G1": "pass"\n'
        "      }\n"
        "    },\n"
        '    "tool-b": {\n'
        '      "verdicts": {\n'
        '        "C1": "n/a",\n'
        '        "G1": "pass",\n'
        '        "T1": "fail"\n'
        "      },\n"
        '      "causes": {\n'
        '        "T1": "waits … ms"\n'
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    later = sample().model_copy(update={"started_at": "2027-01-01T00:00:00+00:00"})
    assert Baseline.of(later).to_json() == text


def test_both_kinds_of_file_give_the_same_comparison(tmp_path: Path) -> None:
    baseline = sample()
    compact, full = tmp_path / "baseline.json", tmp_path / "results.json"
    compact.write_text(Baseline.of(baseline).to_json(), encoding="utf-8")
    full.write_text(baseline.to_json(), encoding="utf-8")
    assert read_baseline(compact) == read_baseline(full) == Baseline.of(baseline)
    current = run({"tool-b": {"T1": ("fail", "waits 9 ms"), "G1": "fail"}, "a-text": {}})
    diff = compare_baseline(current, read_baseline(compact))
    assert diff == compare_baseline(current, baseline)
    assert [(c.case, c.invariant) for c in diff.new_failures] == [("tool-b", "G1")]
    assert [(c.case, c.invariant) for c in diff.known_failures] == [("tool-b", "T1")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "missing.json: cannot read the baseline (No such file or directory)"),
        ('{"schema": ', "missing.json: the baseline is not JSON (EOF while parsing a value"),
        ("[1, 2]", "missing.json: neither a baseline (schema 'streamconform.baseline') nor"),
        ('{"schema": "streamconform.baseline", "schema_version": 2}', "schema_version: Input"),
        (
            '{"schema": "streamconform.results", "schema_version": 1}',
            "invalid streamconform.results: suite_version: Field required (and 6 more)",
        ),
    ],
)
def test_a_malformed_baseline_is_one_line_error(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "missing.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError) as raised:
        read_baseline(path)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_baseline_verdict_must_be_a_verdict(tmp_path: Path) -> None:
    document = json.loads(Baseline.of(sample()).to_json())
    document["cases"]["c-clean"]["verdicts"]["G1"] = "passed"
    path = tmp_path / "b.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(BaselineError, match=r"cases\.c-clean\.verdicts\.G1: Input should be"):
        read_baseline(path)


def test_reproducible_json_blanks_ports_an_adapter_quotes_and_a_raced_hang_up() -> None:
    """An adapter's error message and stderr may name the provider's URL, and whether the
    provider's last write or the hang-up of an adapter that stopped reading came first is
    the clock's: neither differs between two reproducible runs."""

    def ran(port: int, ended: str) -> RunResult:
        url = f"http://127.0.0.1:{port}/c/v1/chat/completions"
        request = build.hostile_requests()[0] | {"ended": ended}
        thrown = {"case": "c", "type": "thrown", "message": f"IncompleteRead: {url}"}
        return build.result(
            [build.case("c", {}, events=[thrown], stderr=f"failed: {url}", requests=[request])]
        )

    once, again = ran(41234, "complete"), ran(50123, "client-disconnected")
    assert reproducible_json(once) == reproducible_json(again)
    assert "127.0.0.1:…/c/v1" in reproducible_json(once)
    assert reproducible_json(ran(41234, "reset")) != reproducible_json(once)


def test_a_baseline_failure_that_now_passes_is_stale_and_fails_a_strict_comparison() -> None:
    baseline = run({"a": {"C1": "fail", "G8": "non-strict"}, "b": {"T1": ("fail", "x")}})
    current = run({"a": {"C1": "pass", "G8": "info"}, "b": {"T1": ("non-strict", "y")}})
    lenient = compare_baseline(current, baseline)
    assert [(c.case, c.invariant, c.before, c.after) for c in lenient.stale] == [
        ("a", "C1", "fail", "pass"),
        ("a", "G8", "non-strict", "info"),
        ("b", "T1", "fail", "non-strict"),
    ]
    assert not lenient.failed and not fails_gate(current, lenient)
    assert lenient.headline == "0 known failures (baseline), 0 new, 0 changed, 3 stale"
    strict = compare_baseline(current, baseline, strict=True)
    assert strict.failed and fails_gate(current, strict)
    assert "failing the gate (--baseline-strict):\n  C1 a: fail -> pass" in format_baseline(strict)
    # A fresh baseline has nothing stale; missing verdicts (a run of fewer cases) are not stale.
    assert not compare_baseline(current, current, strict=True).failed
    fewer = run({"a": {"C1": "pass", "G8": "info"}})
    assert not compare_baseline(fewer, current, strict=True).failed
