"""The ``conformance`` command line: run, list, report, baseline."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.adapters.case_log import MAX_CASE_BYTES
from conformance.cli import main
from conformance.invariants import CATALOGUE
from conformance.results import RunResult
from conformance.run.runner import MAX_RUN_BYTES
from conformance.verdicts import FAMILY_TITLES, family_of

sys.path.insert(0, str(Path(__file__).parent / "adapters_hostile"))
from hostile_adapter import HEAD_REQUESTS, HEADER_BYTES, MARKUP, POST_BYTES

REPO = Path(__file__).resolve().parents[2]
HOSTILE_PATH = "tests/conformance/adapters_hostile/hostile_adapter.py"
HOSTILE = f"{sys.executable} {REPO / HOSTILE_PATH}"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_run_reference_writes_json_and_reports(tmp_path: Path) -> None:
    result = invoke(
        "run", "-k", "tool-cont", "--json", str(tmp_path / "r.json"), "--report", str(tmp_path)
    )
    assert result.exit_code == 0, result.output
    saved = RunResult.from_json((tmp_path / "r.json").read_bytes())
    assert {case.case for case in saved.cases} == {
        "tool-cont-empty-id-name",
        "tool-cont-null-id-name",
    }
    assert saved.options["adapter"] == "--adapter conformance.adapters.reference:factory"
    assert not saved.failed
    assert (tmp_path / "index.html").read_text().startswith("<!DOCTYPE html>")
    assert "<testsuite" in (tmp_path / "junit.xml").read_text()
    assert "OK:" in result.output


def test_run_fails_on_a_failing_adapter_and_names_the_invariant(tmp_path: Path) -> None:
    result = invoke("run", "--adapter-cmd", HOSTILE, "-k", "tool-late-id")
    assert result.exit_code == 1
    assert "fail tool-late-id T4:" in result.output
    assert "FAILED" in result.output


IN_PROCESS = ("--transport", "in-process")
TOOL_CONT = ("-k", "tool-cont", *IN_PROCESS)
MUTANT = ("--adapter", "conformance.adapters.mutants:identity_any_defined", *TOOL_CONT)


def test_a_results_file_is_a_baseline_too(tmp_path: Path) -> None:
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    assert invoke("run", *MUTANT, "--json", str(bad)).exit_code == 1
    assert invoke("run", *TOOL_CONT, "--json", str(good)).exit_code == 0
    same = invoke("run", *MUTANT, "--baseline", str(bad))
    assert same.exit_code == 0, same.output
    assert "0 new failure(s)" in same.output and "FAILED" not in same.output
    worse = invoke("run", *MUTANT, "--baseline", str(good))
    assert worse.exit_code == 1
    assert "New failures (verdict got worse):" in worse.output
    assert "T1 tool-cont-null-id-name: pass -> fail" in worse.output


def test_a_run_with_only_known_failures_passes_its_written_baseline(tmp_path: Path) -> None:
    known = tmp_path / "baseline.json"
    first = invoke("run", *MUTANT, "--write-baseline", str(known))
    assert first.exit_code == 1 and "FAILED" in first.output
    saved = json.loads(known.read_text(encoding="utf-8"))
    assert (saved["schema"], saved["adapter"]) == (
        "streamconform.baseline",
        "streamconform-mutant-identity_any_defined",
    )
    assert saved["cases"]["tool-cont-null-id-name"]["verdicts"]["T1"] == "fail"
    assert "started_at" not in saved and "events" not in known.read_text(encoding="utf-8")

    again = invoke("run", *MUTANT, "--baseline", str(known))
    assert again.exit_code == 0, again.output
    assert "FAILED" not in again.output
    assert "OK: 2 known failures (baseline), 0 new, 0 changed;" in again.output


def test_a_known_failure_with_another_cause_fails_its_baseline(tmp_path: Path) -> None:
    known = tmp_path / "baseline.json"
    invoke("run", *MUTANT, "--write-baseline", str(known))
    saved = json.loads(known.read_text(encoding="utf-8"))
    saved["cases"]["tool-cont-null-id-name"]["causes"]["T1"] = "attempt 1: another bug"
    known.write_text(json.dumps(saved), encoding="utf-8")
    changed = invoke("run", *MUTANT, "--baseline", str(known))
    assert changed.exit_code == 1
    assert "Changed cause (same verdict, another reason):\n  T1 tool-cont-null-id-name: fail:" in (
        changed.output
    )
    assert "(baseline: attempt 1: another bug)" in changed.output
    assert "FAILED: 1 known failure (baseline), 0 new, 1 changed;" in changed.output


def test_measured_waits_in_a_known_failure_do_not_change_its_cause(tmp_path: Path) -> None:
    known = tmp_path / "baseline.json"
    resends = ("--adapter", "conformance.adapters.mutants:resend_on_http_error", *IN_PROCESS)
    resends += ("-k", "retry-backoff-doubling")
    assert invoke("run", *resends, "--write-baseline", str(known)).exit_code == 1
    causes = json.loads(known.read_text(encoding="utf-8"))["cases"]["retry-backoff-doubling"]
    assert (
        causes["causes"]["R5"] == "retry 1 came … ms after attempt 1 ended; at least … ms expected"
    )
    again = invoke("run", *resends, "--baseline", str(known))
    assert again.exit_code == 0, again.output
    assert "OK: 4 known failures (baseline), 0 new, 0 changed;" in again.output


def test_a_new_failure_fails_a_compact_baseline(tmp_path: Path) -> None:
    clean = tmp_path / "clean.json"
    assert invoke("run", *TOOL_CONT, "--write-baseline", str(clean)).exit_code == 0
    worse = invoke("run", *MUTANT, "--baseline", str(clean))
    assert worse.exit_code == 1
    assert "T1 tool-cont-null-id-name: pass -> fail" in worse.output
    assert "FAILED: 0 known failures (baseline), 2 new, 0 changed;" in worse.output


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (None, "cannot read the baseline (No such file or directory)"),
        ("{not json", "the baseline is not JSON"),
        ('{"hello": 1}', "neither a baseline (schema 'streamconform.baseline') nor a results"),
        ('{"schema": "streamconform.baseline", "schema_version": 1}', ": suite_version: Field"),
    ],
)
def test_a_malformed_baseline_is_refused_before_the_run(
    tmp_path: Path, content: str | None, error: str
) -> None:
    baseline, out = tmp_path / "baseline.json", tmp_path / "out.json"
    if content is not None:
        baseline.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(
        main, ["run", *MUTANT, "--baseline", str(baseline), "--json", str(out)]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {baseline}: ") and error in result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stdout == "" and not out.exists()


def test_report_renders_one_result_or_a_matrix(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    invoke("run", "-k", "empty-stop", "--json", str(first))
    invoke("run", "--adapter-cmd", HOSTILE, "-k", "empty-stop", "--json", str(second))
    single = invoke("report", str(first), "--out", str(tmp_path / "one"))
    assert single.exit_code == 0 and (tmp_path / "one" / "index.html").exists()
    matrix = invoke("report", str(first), str(second), "--out", str(tmp_path / "many"))
    assert matrix.exit_code == 0
    page = (tmp_path / "many" / "index.html").read_text()
    assert "01-streamconform-reference/index.html" in page and "02-hostile/index.html" in page


def test_report_rejects_a_file_that_is_not_results(tmp_path: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text(json.dumps({"hello": 1}))
    result = CliRunner().invoke(main, ["report", str(junk), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "not a streamconform results file" in result.output


def test_malformed_fixture_is_reported_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("attempts: [{fault: explode}]\n")
    result = CliRunner().invoke(main, ["run", "--fixtures", str(tmp_path)])
    assert result.exit_code == 2
    assert "bad.yaml:1: attempts[0].fault" in result.output


def test_list_prints_the_catalogue() -> None:
    result = invoke("list")
    assert result.exit_code == 0
    for invariant_id in ("G1", "C4", "T5", "E1", "S2", "H4"):
        assert invariant_id in result.output


def test_run_judges_under_the_contract_it_is_given(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = invoke("run", "-k", "no-done", "--contract", "interop", "--json", str(out))
    assert done.exit_code == 0, done.output
    saved = RunResult.from_json(out.read_bytes())
    assert saved.contract == "interop"
    assert "interop contract" in done.output
    assert all(entry["levels"]["harness"] for entry in saved.catalogue)
    assert all(entry.get("rationale") for entry in saved.catalogue)


def test_list_says_why_each_invariant_matters() -> None:
    # Wide enough that no rationale wraps: each is one line of its row.
    done = CliRunner().invoke(main, ["list"], env={"COLUMNS": "800"}, catch_exceptions=False)
    lines = done.output.splitlines()
    t6 = lines.index(next(line for line in lines if line.startswith("│ T6 ")))
    assert CATALOGUE["T6"].rationale in lines[t6 + 1]


def test_list_shows_each_level_per_contract() -> None:
    done = invoke("list")
    assert "harness" in done.output and "interop" in done.output
    e1 = next(line for line in done.output.splitlines() if line.startswith("│ E1 "))
    assert "MUST" in e1 and "INFO" in e1


def _row_ids(output: str) -> list[str]:
    """The first column of every table row printed (not of a row's wrapped lines)."""
    cells = [line.split("│")[1].strip() for line in output.splitlines() if line.startswith("│")]
    return [cell for cell in cells if cell]


def _in_reading_order(ids: list[str]) -> bool:
    keys = [(list(FAMILY_TITLES).index(family_of(i)), int(i[len(family_of(i)) :])) for i in ids]
    return keys == sorted(keys) and len({family_of(i) for i in ids}) > 1


def test_the_terminal_lists_invariants_in_the_reports_family_order() -> None:
    listed = _row_ids(invoke("list").output)
    assert listed[0] == "G1" and _in_reading_order(listed)
    run = invoke("run", "--transport", "in-process", "-k", "no-done")
    assert run.exit_code == 0, run.output
    assert _in_reading_order(_row_ids(run.output))


def test_the_summary_lists_only_exercised_invariants_unless_verbose() -> None:
    one_case = ("run", "--transport", "in-process", "-k", "no-done")
    exercised = [i for i in _row_ids(invoke(*one_case).output) if i in CATALOGUE]
    everything = [i for i in _row_ids(invoke(*one_case, "-v").output) if i in CATALOGUE]
    assert "G1" in exercised and "R5" not in exercised
    assert sorted(everything) == sorted(CATALOGUE)


def test_the_retry_table_shows_only_with_verbose_or_a_retry_invariant_to_look_at() -> None:
    doubling = ("-k", "retry-backoff-doubling", *IN_PROCESS)
    resends = ("--adapter", "conformance.adapters.mutants:resend_on_http_error", *doubling)
    assert "retries" not in invoke("run", *doubling).output
    shown = invoke("run", *doubling, "--verbose").output
    broken = invoke("run", *resends).output
    for output in (shown, broken):
        assert "retry-backoff-doubling" in _row_ids(output)
        assert "R5 accepts" in output


STARTER = REPO / "fixtures" / "starter"


def hostile(*flags: str) -> str:
    return shlex.join([sys.executable, str(REPO / HOSTILE_PATH), "--hello-name", MARKUP, *flags])


def hostile_fixture(folder: Path, case_id: str) -> Path:
    """A starter fixture renamed ``case_id``: the hostile adapter misbehaves as it says."""
    text = (STARTER / "empty-stop-with-usage.yaml").read_text()
    path = folder / f"{case_id}.yaml"
    path.write_text(text.replace("id: empty-stop-with-usage", f"id: {case_id}"))
    return path


def markup_fixture(tmp_path: Path) -> Path:
    """A fixture on which the hostile adapter throws MARKUP."""
    return hostile_fixture(tmp_path, "c-markup")


def assert_literal(output: str) -> None:
    """MARKUP was printed as text: its brackets shown, its escapes visible, nothing run
    (rich's own styling, in a terminal, is no concern)."""
    for raw in ("\x1b]0;pwned", "\x07", "\x1b[2J", "\x1b]8;"):  # title, bell, clear, link
        assert raw not in output
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in output
    assert "[/] [link=https://evil.example]click[/link]" in output
    assert_no_emoji_or_bidi(output)


def assert_no_emoji_or_bidi(output: str) -> None:
    """MARKUP's emoji code and bidi controls were printed as text, not as what they mean."""
    assert ":smile:" in output and "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}" not in output
    assert "\u202e" not in output and "\u2066" not in output
    assert "\\u202eevil\\u2066" in output


def test_run_prints_an_adapters_name_and_messages_literally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # a terminal: the progress bar shows the name
    monkeypatch.setenv("NO_COLOR", "1")
    fixture = markup_fixture(tmp_path)
    results = tmp_path / "results.json"

    result = CliRunner().invoke(
        main,
        ["run", "--adapter-cmd", hostile(), "--fixtures", str(fixture), "--json", str(results)],
    )

    assert result.exit_code == 1, result.output
    assert_literal(result.output)
    assert RunResult.from_json(results.read_bytes()).adapter["name"] == MARKUP


def test_replay_and_fuzz_print_an_adapters_name_and_messages_literally(tmp_path: Path) -> None:
    fixture = markup_fixture(tmp_path)

    replayed = CliRunner().invoke(main, ["replay", str(fixture), "--adapter-cmd", hostile()])
    fuzzed = CliRunner().invoke(
        main, ["fuzz", "--adapter-cmd", hostile(), "--family", "G", "--max-examples", "1"]
    )

    assert replayed.exit_code == 1, replayed.output
    assert_literal(replayed.output)
    assert fuzzed.exit_code in (0, 1), fuzzed.output
    assert "\x1b" not in fuzzed.output
    assert "[/] [link=https://evil.example]click[/link] \\x1b]0;pwned" in fuzzed.output
    assert_no_emoji_or_bidi(fuzzed.output)


def test_a_failed_handshake_shows_the_adapters_stderr_literally() -> None:
    command = shlex.join([sys.executable, "-c", f"import sys; sys.stderr.write({MARKUP!r})"])

    result = CliRunner().invoke(main, ["run", "--adapter-cmd", command])

    assert result.exit_code == 3
    assert "\x1b" not in result.output
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in result.output


def test_output_past_the_caps_is_cut_and_the_run_still_writes_its_results(tmp_path: Path) -> None:
    """Each case floods more than a case may keep: every case is cut at MAX_CASE_BYTES, and
    once the run has kept MAX_RUN_BYTES the rest are not run; the results are written."""
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    cases = [f"c-bulk-{number}" for number in range(1, 8)]
    for case_id in cases:
        hostile_fixture(fixtures, case_id)
    results, report = tmp_path / "results.json", tmp_path / "report"
    command = ["run", "--adapter-cmd", hostile(), "--fixtures", str(fixtures)]

    ran = CliRunner().invoke(main, [*command, "--json", str(results), "--report", str(report)])

    assert ran.exit_code == 1, ran.output
    run = RunResult.from_json(results.read_bytes())
    assert [case.case for case in run.cases] == cases
    assert {case.status for case in run.cases} == {"protocol-error"}
    capped = [c for c in run.cases if c.detail.startswith("more than 4 MiB of events in one case")]
    not_run = [
        c for c in run.cases if c.detail.startswith("not run: the run's results reached 16 MiB")
    ]
    assert capped and not_run and capped + not_run == run.cases
    assert all(case.events for case in capped) and not any(case.events for case in not_run)
    kept = sum(len(json.dumps(event)) for case in run.cases for event in case.events)
    assert MAX_RUN_BYTES <= kept < MAX_RUN_BYTES + MAX_CASE_BYTES
    assert (report / "index.html").stat().st_size < MAX_RUN_BYTES + 2 * MAX_CASE_BYTES


def test_request_bodies_count_against_the_caps_and_the_results_say_what_was_cut(
    tmp_path: Path,
) -> None:
    """Each case POSTs 9 MiB, which the provider reads and logs: the results keep each body
    as far as the case's bytes allow and say how much was cut, and the run's cap leaves the
    rest out; the results file stays within the bound whatever the adapter sends."""
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    cases = [f"c-post-{number}" for number in range(1, 7)]
    for case_id in cases:
        hostile_fixture(fixtures, case_id)
    results, report = tmp_path / "results.json", tmp_path / "report"
    # Four cases in flight at once: each case's request log is bounded on its own, so 9 MiB
    # bodies never push each other's records out (with one log for all, cases read none).
    command = ["run", "--jobs", "4", "--adapter-cmd", hostile(), "--fixtures", str(fixtures)]

    CliRunner().invoke(main, [*command, "--json", str(results), "--report", str(report)])

    run = RunResult.from_json(results.read_bytes())
    ran = [case for case in run.cases if case.requests]
    not_run = [case for case in run.cases if case.detail.startswith("not run: the run's results")]
    assert ran and not_run and len(ran) + len(not_run) == len(cases)
    for case in ran:
        (request,) = case.requests
        kept = len(request["body"])
        assert kept + request["body_cut_bytes"] > POST_BYTES
        assert case.cut == {"request-bodies": request["body_cut_bytes"]}
    assert sum(len(case.requests[0]["body"]) for case in ran) <= MAX_RUN_BYTES + MAX_CASE_BYTES
    # The body twice (text and base64) within the run's cap and one case's, and the rest.
    assert results.stat().st_size < 3 * (MAX_RUN_BYTES + MAX_CASE_BYTES)
    assert "request-bodies: " in (report / "index.html").read_text()


def test_request_heads_count_against_the_case_bytes_too(tmp_path: Path) -> None:
    """300 requests of a 15 kB header each (4.4 MiB of heads, within the provider's log
    bound): the results keep the requests whose heads fit in the case's bytes, and the
    others are cut and counted."""
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    hostile_fixture(fixtures, "c-heads")
    results = tmp_path / "results.json"
    command = ["run", "--adapter-cmd", hostile(), "--fixtures", str(fixtures), "--timeout", "60"]
    CliRunner().invoke(main, [*command, "--json", str(results)])

    (case,) = RunResult.from_json(results.read_bytes()).cases
    kept_heads = sum(
        len(r["method"]) + len(r["path"]) + sum(len(n) + len(v) for n, v in r["headers"])
        for r in case.requests
    )
    assert 0 < len(case.requests) < HEAD_REQUESTS
    assert kept_heads + sum(len(r["body"]) for r in case.requests) <= MAX_CASE_BYTES
    assert case.cut["request-heads"] > (HEAD_REQUESTS - len(case.requests)) * HEADER_BYTES
