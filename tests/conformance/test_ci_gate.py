"""``conformance run`` as a CI gate: stale baseline entries, --baseline-strict, rewriting the
baseline, the Markdown summary and GitHub's step summary and outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner, Result

from conformance.cli import main

TOOL_CONT = ("-k", "tool-cont", "--transport", "in-process")
MUTANT = ("--adapter", "conformance.adapters.mutants:identity_any_defined", *TOOL_CONT)


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's ``name<<delimiter`` blocks, read as the runner reads them."""
    found = re.findall(r"^([\w-]+)<<(\S+)\n(.*?)\n\2$", path.read_text(), flags=re.M | re.S)
    return {name: value for name, _, value in found}


def test_stale_entries_are_listed_and_fail_only_a_strict_gate(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    assert invoke("run", *MUTANT, "--write-baseline", str(baseline)).exit_code == 1
    fixed = invoke("run", *TOOL_CONT, "--baseline", str(baseline))
    assert fixed.exit_code == 0, fixed.output
    assert "Stale baseline entries (a failure that now passes or fails less; refresh with " in (
        fixed.output
    )
    assert "  T1 tool-cont-null-id-name: fail -> pass" in fixed.output
    assert "OK: 0 known failures (baseline), 0 new, 0 changed, 2 stale;" in fixed.output
    strict = invoke("run", *TOOL_CONT, "--baseline", str(baseline), "--baseline-strict")
    assert strict.exit_code == 1, strict.output
    assert "failing the gate (--baseline-strict):" in strict.output
    assert "FAILED: 0 known failures (baseline), 0 new, 0 changed, 2 stale;" in strict.output
    # --write-baseline over the --baseline file drops the stale entries.
    rewrite = ("--baseline", str(baseline), "--write-baseline", str(baseline))
    assert invoke("run", *TOOL_CONT, *rewrite).exit_code == 0
    assert (
        "fail"
        not in json.loads(baseline.read_text())["cases"]["tool-cont-null-id-name"][
            "verdicts"
        ].values()
    )
    again = invoke("run", *TOOL_CONT, "--baseline", str(baseline), "--baseline-strict")
    assert again.exit_code == 0, again.output
    assert "OK: 0 known failures (baseline), 0 new, 0 changed;" in again.output


def test_baseline_strict_needs_a_baseline() -> None:
    refused = invoke("run", *TOOL_CONT, "--baseline-strict")
    assert refused.exit_code == 2
    assert "--baseline-strict needs --baseline" in refused.output


def test_the_summary_goes_to_its_file_and_is_appended_to_the_step_summary(
    tmp_path: Path,
) -> None:
    summary, step_summary, outputs = (tmp_path / name for name in ("s.md", "step.md", "out"))
    step_summary.write_text("earlier step text\n")
    baseline = tmp_path / "baseline.json"
    invoke("run", *TOOL_CONT, "--write-baseline", str(baseline))
    env = {"GITHUB_STEP_SUMMARY": str(step_summary), "GITHUB_OUTPUT": str(outputs)}
    failed = invoke(
        "run",
        *MUTANT,
        "--baseline",
        str(baseline),
        "--summary",
        str(summary),
        "--report",
        str(tmp_path / "report"),
        env=env,
    )
    assert failed.exit_code == 1
    text = summary.read_text()
    assert text.startswith("## streamconform: FAILED — ` streamconform-mutant-identity_any")
    assert "against the baseline: 0 known failures (baseline), 2 new, 0 changed" in text
    assert "- **fail** ` T1 ` · ` tool-cont-null-id-name ` (new) — ` attempt 1: " in text
    assert (
        "  replay: ` conformance run --adapter conformance.adapters.mutants:identity_any_defined"
        " --transport in-process -k tool-cont-null-id-name `"
    ) in text
    assert step_summary.read_text() == "earlier step text\n" + text
    assert read_outputs(outputs) == {
        "gate": "failed",
        "cases": "2",
        "pass": "26",
        "non-strict": "0",
        "info": "0",
        "not-applicable": "6",
        "fail": "2",
        "new": "2",
        "changed": "0",
        "known": "0",
        "stale": "0",
        "report": str(tmp_path / "report"),
        "results": str(tmp_path / "report" / "results.json"),
        "summary": str(summary),
    }
