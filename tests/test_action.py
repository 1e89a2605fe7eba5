"""The GitHub Action (action.yml), its steps run here as a runner runs them.

The action's checkout is a copy of the sources (a runner downloads the action's repository
into a directory of its own, GITHUB_ACTION_PATH). Each ``run:`` step runs under bash as a
runner starts it (``bash --noprofile --norc -eo pipefail``), in the workspace, with its own
GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, the job's GITHUB_ENV, RUNNER_TEMP, and its
``env:`` and ``working-directory`` with ``inputs.*`` and ``steps.*.outputs.*`` expressions
substituted (the only ones the action may use there); a step that fails skips the run
steps after it. The upload step is not run: its inputs are checked. The install step
installs the suite from the copy with pip (the package index, through pip's cache).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from conformance.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # pip installs the suite

ROOT = Path(__file__).resolve().parents[1]
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
SOURCES = ("pyproject.toml", "setup.py", "README.md", "action.yml")
PACKAGES = ("fakeprovider", "conformance", "fixtures")
BASE_PYTHON: str = getattr(sys, "_base_executable", sys.executable)
SUITE_DEPENDENCIES = ("click", "hypothesis", "jinja2", "pydantic", "typing_extensions")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
MUTANT = "conformance.adapters.mutants:identity_any_defined"
# A report directory a shell would run as code if the action pasted it into a script.
HOSTILE_DIR = 'out dir/$(touch pwned)"`touch pwned2`'


@dataclass
class ActionRun:
    outcomes: dict[str, int] = field(default_factory=dict)  # step id -> exit status
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)  # step id -> outputs
    summaries: dict[str, str] = field(default_factory=dict)  # step id -> its job summary
    logs: dict[str, str] = field(default_factory=dict)
    env_file: str = ""
    uploads: list[dict[str, str]] = field(default_factory=list)  # each uses: step's with

    def action_outputs(self) -> dict[str, str]:
        return {name: self.resolve(spec["value"], {}) for name, spec in ACTION["outputs"].items()}

    def resolve(self, text: str, inputs: Mapping[str, str]) -> str:
        def value(found: re.Match[str]) -> str:
            words = found[1].split(".")
            if words[0] == "inputs" and len(words) == 2:
                return inputs[words[1]]
            if words[0] == "steps" and words[2:3] == ["outputs"] and len(words) == 4:
                return self.outputs.get(words[1], {}).get(words[3], "")
            raise AssertionError(f"an expression the test does not know: {found[0]}")

        return EXPRESSION.sub(value, text)


def read_outputs(text: str) -> dict[str, str]:
    """A GITHUB_OUTPUT file: ``name=value`` lines and ``name<<delimiter`` blocks."""
    outputs, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            for body in lines:
                if body == delimiter:
                    break
                block.append(body)
            outputs[name] = "\n".join(block)
        else:
            name, _, value = line.partition("=")
            outputs[name] = value
    return outputs


def run_action(
    given: Mapping[str, str], workspace: Path, runner: Path, installed: ActionRun | None = None
) -> ActionRun:
    """The action's steps with the ``given`` inputs; with ``installed``, the install step's
    outputs are that run's and the step is not run again."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    assert set(given) <= set(inputs), set(given) - set(inputs)
    inputs |= given
    action_path = runner / "action"
    done = ActionRun()
    if installed is not None:
        done.outputs["install"] = installed.outputs["install"]
    env_file = runner / "env"
    env_file.write_text("")
    failed = False
    for number, step in enumerate(ACTION["runs"]["steps"]):
        step_id = step.get("id", f"step{number}")
        if "uses" in step:
            with_ = {key: done.resolve(str(v), inputs) for key, v in step["with"].items()}
            done.uploads.append({"uses": step["uses"], "if": step.get("if", ""), **with_})
            continue
        if failed or step_id in done.outputs:
            continue
        script = step["run"]
        assert "${{" not in script, f"step {step_id} pastes an expression into its script"
        files = {name: runner / f"{step_id}.{name}" for name in ("output", "summary")}
        for path in files.values():
            path.write_text("")  # each step's own, empty
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(Path.home()),
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_ACTION_PATH": str(action_path),
            "GITHUB_OUTPUT": str(files["output"]),
            "GITHUB_STEP_SUMMARY": str(files["summary"]),
            "GITHUB_ENV": str(env_file),
            "RUNNER_TEMP": str(runner),
        }
        env |= {key: done.resolve(str(v), inputs) for key, v in step.get("env", {}).items()}
        where = workspace / done.resolve(step.get("working-directory", "."), inputs)
        assert step["shell"] == "bash"
        (runner / f"{step_id}.sh").write_text(script, encoding="utf-8")
        ran = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(runner / f"{step_id}.sh")],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
            timeout=540,
        )
        done.outcomes[step_id] = ran.returncode
        done.logs[step_id] = ran.stdout + ran.stderr
        done.outputs[step_id] = read_outputs(files["output"].read_text(encoding="utf-8"))
        done.summaries[step_id] = files["summary"].read_text(encoding="utf-8")
        failed = ran.returncode != 0
    done.env_file = env_file.read_text(encoding="utf-8")
    return done


def copy_action(runner: Path) -> None:
    checkout = runner / "action"
    checkout.mkdir(parents=True)
    for name in SOURCES:
        shutil.copy2(ROOT / name, checkout / name)
    for name in PACKAGES:
        shutil.copytree(ROOT / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))


@pytest.fixture(scope="module")
def gate_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[ActionRun, Path, Path]:
    """The action against a mutant that fails T1 in two cases, under a strict baseline that
    knows both failures and has one stale entry."""
    workspace, runner = tmp_path_factory.mktemp("workspace"), tmp_path_factory.mktemp("runner")
    copy_action(runner)
    baseline = workspace / "baseline.json"
    select = ("-k", "tool-cont", "--transport", "in-process")
    written = CliRunner().invoke(
        main, ["run", "--adapter", MUTANT, *select, "--write-baseline", str(baseline)]
    )
    assert written.exit_code == 1, written.output
    document = json.loads(baseline.read_text(encoding="utf-8"))
    document["cases"]["tool-cont-null-id-name"]["verdicts"]["C1"] = "fail"  # passes now
    baseline.write_text(json.dumps(document), encoding="utf-8")
    inputs = {
        "adapter": MUTANT,
        "dialects": "chat-completions",
        "baseline": "baseline.json",
        "baseline-strict": "true",
        "args": " ".join(select),
        "report-dir": HOSTILE_DIR,
        "python": BASE_PYTHON,
    }
    return run_action(inputs, workspace, runner), workspace, runner


def test_the_action_installs_the_suite_and_fails_the_step_on_a_stale_baseline(
    gate_run: tuple[ActionRun, Path, Path],
) -> None:
    done, workspace, _ = gate_run
    assert done.outcomes["install"] == 0, done.logs["install"]
    assert done.outputs["install"]["conformance"].endswith("/streamconform-venv/bin/conformance")
    # The suite's dependencies come from its venv, never from the runner's Python (which here
    # holds them too, unlike a fresh runner's).
    venv = Path(done.outputs["install"]["conformance"]).parents[1]
    imported = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "".join(f"import {name}; print({name}.__file__)\n" for name in SUITE_DEPENDENCIES),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(line.startswith(str(venv)) for line in imported.stdout.splitlines()), imported.stdout
    assert done.outcomes["run"] == 1, done.logs["run"]  # the gate: exit 1 fails the step
    assert "FAILED: 2 known failures (baseline), 0 new, 0 changed, 1 stale;" in done.logs["run"]
    assert not list(workspace.rglob("pwned*"))  # the inputs stayed values
    assert done.env_file == ""  # nothing leaks into the caller's later steps


def test_the_job_summary_and_the_outputs(gate_run: tuple[ActionRun, Path, Path]) -> None:
    done, workspace, _ = gate_run
    report = workspace / HOSTILE_DIR
    outputs = done.action_outputs()
    assert outputs == {
        "gate": "failed",
        "cases": "2",
        "pass": "26",
        "non-strict": "0",
        "info": "0",
        "not-applicable": "6",
        "fail": "2",
        "new": "0",
        "changed": "0",
        "known": "2",
        "stale": "1",
        "report": str(report),
        "results": str(report / "results.json"),
        "summary": str(report / "summary.md"),
    }
    summary = done.summaries["run"]
    assert summary == (report / "summary.md").read_text(encoding="utf-8")
    assert done.summaries["install"] == ""
    assert summary.startswith("## streamconform: FAILED — ` streamconform-mutant-identity_")
    assert "- **fail** ` T1 ` · ` tool-cont-null-id-name ` (known) — ` attempt 1: " in summary
    assert f"--adapter {MUTANT} --transport in-process -k tool-cont-null-id-name `" in summary
    assert "failing the gate (--baseline-strict) (1)\n\n- ` C1 ` · ` tool-cont-null-id-name `" in (
        summary
    )
    assert {path.name for path in report.iterdir()} == {
        "index.html",
        "results.json",
        "junit.xml",
        "summary.md",
    }


def test_the_report_is_uploaded_even_when_the_gate_fails(
    gate_run: tuple[ActionRun, Path, Path],
) -> None:
    done, workspace, _ = gate_run
    [upload] = done.uploads
    assert upload["uses"].startswith("actions/upload-artifact@v")
    assert upload["if"].startswith("always()")  # after a failing step too
    assert upload["path"] == str(workspace / HOSTILE_DIR)
    assert upload["name"] == "conformance-report"
    assert upload["if-no-files-found"] == "error"


def test_the_dialects_input_selects_cases_and_a_run_that_cannot_start_uploads_nothing(
    gate_run: tuple[ActionRun, Path, Path],
) -> None:
    installed, workspace, runner = gate_run
    inputs = {"dialects": "anthropic-messages, openai-responses", "args": "-k tool-cont"}
    done = run_action(inputs, workspace, runner, installed)
    assert done.outcomes == {"run": 2}  # no case of those dialects has tool-cont in its id
    assert "no case selected" in done.logs["run"]
    assert done.outputs["run"] == {} and done.summaries["run"] == ""
    [upload] = done.uploads
    assert upload["path"] == ""  # and its condition, steps.run.outputs.report != '', is false
    assert "steps.run.outputs.report != ''" in upload["if"]


def test_the_spec_input_judges_by_that_revision(gate_run: tuple[ActionRun, Path, Path]) -> None:
    """A gate wired under 1.1 stays green on a rule 1.2 added (AN-C2 here): only observed."""
    installed, workspace, runner = gate_run
    inputs = {
        "adapter": "conformance.adapters.mutants:an_signature_dropped",
        "spec": "1.1",
        "dialects": "anthropic-messages",
        "args": "-k an-thinking-signature --transport in-process",
        "report-dir": "spec-report",
    }
    done = run_action(inputs, workspace, runner, installed)
    assert done.outcomes == {"run": 0}, done.logs["run"]
    outputs = done.action_outputs()
    assert (outputs["gate"], outputs["fail"]) == ("passed", "0")
    assert int(outputs["info"]) > 0
    assert ", spec ` 1.1 `" in done.summaries["run"]
    saved = json.loads((workspace / "spec-report" / "results.json").read_text(encoding="utf-8"))
    assert saved["spec"] == "1.1"
