"""Spec versions: a gate wired against one revision keeps its meaning as the catalogue grows.

The revisions are data (conformance/spec_versions.yaml): every rule the suite can report is
added by exactly one, and a run under an earlier revision judges what it had, at its levels,
and only observes the rest ("new since")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.gateway.crossing import CROSSING_RULES
from conformance.gateway.meaning import MEANING_RULES
from conformance.invariants import CATALOGUE
from conformance.lint.rules import MESSAGES_RULES, RESPONSES_RULES, RULES
from conformance.report.junit import render_junit
from conformance.report.summary import render_summary
from conformance.results import RunResult, reproducible_reason
from conformance.spec import LATEST_SPEC, SPEC, UnknownSpecError, load_spec_history
from fakeprovider.dialects import DIALECT_IDS

IN_PROCESS = ("--transport", "in-process")
# The Anthropic mutant whose signature_delta is lost: an AN-C2 failure, a rule of 1.2.
SIGNATURE_DROPPED = ("--adapter", "conformance.adapters.mutants:an_signature_dropped")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def saved(path: Path) -> RunResult:
    return RunResult.from_json(path.read_bytes())


def verdicts(result: RunResult) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (case.case, rule): (verdict.verdict, reproducible_reason(verdict.reason))
        for case in result.cases
        for rule, verdict in case.verdicts.items()
    }


def test_every_rule_the_suite_reports_is_added_by_exactly_one_revision() -> None:
    reported = {
        *CATALOGUE,
        *MEANING_RULES,
        *RULES,
        *MESSAGES_RULES,
        *RESPONSES_RULES,
        *CROSSING_RULES,
    }
    assert set(SPEC.rule_since) == reported
    assert set(SPEC.dialect_since) == set(DIALECT_IDS)
    # A rule of one wire alone is no older than the wire.
    for rule_id, invariant in CATALOGUE.items():
        oldest = min(SPEC.dialect_since[dialect] for dialect in invariant.dialects)
        assert SPEC.rule_since[rule_id] >= oldest, rule_id
    assert SPEC.latest == LATEST_SPEC == SPEC.versions[-1]


def test_a_level_changed_later_weighs_what_it_weighed_then() -> None:
    history = load_spec_history(
        """
revisions:
  - {version: "1.0", date: d, summary: s, adds: [X1], contracts: [harness]}
  - {version: "1.1", date: d, summary: s, levels: {X1: {harness: [SHOULD, MUST]}}}
  - {version: "1.2", date: d, summary: s, adds: [X2], dialects: [anthropic-messages]}
  - {version: "1.10", date: d, summary: s, levels: {X1: {harness: [MUST, INFO]}}}
"""
    )
    assert [history.level(v, "X1", "harness", "INFO") for v in history.versions] == [
        "SHOULD",
        "MUST",
        "MUST",
        "INFO",
    ]
    assert history.new_since("1.1", "X2") == "new since 1.1 (added in 1.2)"
    assert history.new_since("1.1", "X1", "anthropic-messages") == (
        "new since 1.1 (judged on anthropic-messages from 1.2)"
    )
    assert history.new_since("1.10", "X2") is None  # 1.10 is after 1.2, not before it
    with pytest.raises(
        UnknownSpecError, match=re.escape("unknown spec version '2.0': known 1.0, 1.1")
    ):
        history.known("2.0")
    with pytest.raises(ValueError, match=re.escape("X1 is added in 1.0 and 1.1")):
        load_spec_history(
            "revisions: [{version: '1.0', date: d, summary: s, adds: [X1]},"
            " {version: '1.1', date: d, summary: s, adds: [X1]}]"
        )


def test_under_1_1_the_chat_corpus_is_judged_as_today_and_the_later_wires_only_observed(
    tmp_path: Path,
) -> None:
    today, then = tmp_path / "today.json", tmp_path / "then.json"
    for spec, out in ((LATEST_SPEC, today), ("1.1", then)):
        done = invoke("run", *IN_PROCESS, "--spec", spec, "--json", str(out))
        assert done.exit_code == 0, done.output
    judged_today, judged_then = saved(today), saved(then)
    assert (judged_today.spec, judged_then.spec) == (LATEST_SPEC, "1.1")
    assert "spec 1.1" in done.output
    dialect = {case.case: case.scenario["dialect"] for case in judged_today.cases}

    def in_1_1(key: tuple[str, str]) -> bool:
        case, rule = key
        return SPEC.new_since("1.1", rule, dialect[case]) is None

    then_verdicts, today_verdicts = verdicts(judged_then), verdicts(judged_today)
    assert then_verdicts.keys() == today_verdicts.keys()
    kept = {key: v for key, v in then_verdicts.items() if in_1_1(key)}
    assert kept == {key: v for key, v in today_verdicts.items() if in_1_1(key)}
    assert {dialect[case] for case, _ in kept} == {"chat-completions"}
    later = {key: v for key, v in then_verdicts.items() if not in_1_1(key)}
    assert {dialect[case] for case, _ in later} == set(DIALECT_IDS)  # N1, N2 on chat too
    assert {verdict for verdict, _ in later.values()} <= {"info", "n/a"}
    assert all(r.startswith("new since 1.1 (") for v, r in later.values() if v == "info")
    assert later["an-thinking-signature", "AN-C2"][1].startswith("new since 1.1 (added in 1.2)")
    assert later["an-thinking-signature", "C1"][1].startswith(
        "new since 1.1 (judged on anthropic-messages from 1.2)"
    )
    levels = {entry["id"]: entry["levels"] for entry in judged_then.catalogue}
    assert levels["AN-C2"] == {"harness": "INFO", "interop": "INFO"}
    assert levels["T5"] == {"harness": "MUST", "interop": "INFO"}  # as in 1.1


def test_a_rule_added_later_fails_no_gate_wired_against_an_earlier_revision(
    tmp_path: Path,
) -> None:
    select = ("-k", "an-thinking-signature", *IN_PROCESS, *SIGNATURE_DROPPED)
    out = tmp_path / "r.json"
    today = invoke("run", *select, "--json", str(out))
    assert today.exit_code == 1
    assert {case.case: case.verdicts["AN-C2"].verdict for case in saved(out).cases} == {
        "an-thinking-signature": "fail",
        "gw-an-thinking-signature-roundtrip": "fail",
    }
    then = invoke("run", *select, "--spec", "1.1", "--json", str(out))
    assert then.exit_code == 0, then.output
    result = saved(out)
    assert {case.verdicts["AN-C2"].verdict for case in result.cases} == {"info"}
    assert 'name="spec" value="1.1"' in render_junit(result)
    summary = render_summary(result)
    assert "spec ` 1.1 `" in summary


def test_a_baseline_is_compared_under_the_revision_it_was_written_under(tmp_path: Path) -> None:
    select = ("-k", "an-thinking-signature", *IN_PROCESS, *SIGNATURE_DROPPED)
    baseline, out = tmp_path / "b.json", tmp_path / "r.json"
    assert invoke("run", *select, "--spec", "1.1", "--write-baseline", str(baseline)).exit_code == 0
    assert json.loads(baseline.read_text())["spec"] == "1.1"
    kept = invoke("run", *select, "--baseline", str(baseline), "--json", str(out))
    assert kept.exit_code == 0, kept.output
    assert saved(out).spec == "1.1"
    # Moved to today's revision, the rule it lacked fails: a new failure against it.
    moved = invoke("run", *select, "--baseline", str(baseline), "--spec", LATEST_SPEC)
    assert moved.exit_code == 1, moved.output
    assert "AN-C2 an-thinking-signature: info -> fail" in moved.output


def test_an_unknown_revision_or_a_contract_it_lacked_is_a_usage_error() -> None:
    unknown = invoke("run", "--spec", "9.9", "-k", "tool-cont")
    assert unknown.exit_code == 2
    assert "unknown spec version '9.9': known 1.0, 1.1, 1.2" in unknown.output
    interop = invoke("run", "--spec", "1.0", "--contract", "interop", "-k", "tool-cont")
    assert interop.exit_code == 2
    assert "the interop contract is new in spec 1.1: spec 1.0 has harness only" in interop.output
    fuzz = invoke("fuzz", "--spec", "0.1", "--family", "C")
    assert fuzz.exit_code == 2 and "unknown spec version '0.1'" in fuzz.output
