"""``conformance run --generate``, ``conformance fuzz`` and ``conformance replay``."""

from __future__ import annotations

import gc
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.adapters.reference import ReferenceAdapter
from conformance.cli import main
from conformance.options import RunOptions
from conformance.results import RunResult, reproducible_json

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PYTHON_EXAMPLE = f"{sys.executable} {REPO / 'examples/python-adapter/adapter.py'}"


class ChatOnly(ReferenceAdapter):
    """The reference adapter as a protocol-1.0 adapter would greet: no dialect declared."""

    hello = ReferenceAdapter.hello.model_copy(update={"dialects": None})


def chat_only(options: RunOptions) -> ReferenceAdapter:
    return ChatOnly()


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_generated_cases_are_the_same_for_the_same_seed(tmp_path: Path) -> None:
    # In process here; test_determinism.py runs the default (loopback) run with a seed.
    runs = []
    for number in (1, 2):
        path = tmp_path / f"{number}.json"
        args = ("run", "--generate", "16", "--seed", "11", "-k", "gen-", "--idle-timeout", "0.2")
        result = invoke(*args, "--transport", "in-process", "--json", str(path))
        assert result.exit_code == 0, result.output
        runs.append(RunResult.from_json(path.read_bytes()))
    assert reproducible_json(runs[0]) == reproducible_json(runs[1])
    assert runs[0].options["seed"] == 11 and runs[0].options["generated"] == 16
    assert all(case.case.startswith("gen-") for case in runs[0].cases)


def test_a_run_records_the_seed_it_drew(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    result = invoke("run", "--generate", "3", "-k", "gen-", "--json", str(path))
    assert result.exit_code == 0, result.output
    saved = RunResult.from_json(path.read_bytes())
    assert isinstance(saved.options["seed"], int) and len(saved.cases) == 3


def test_fuzz_a_subprocess_adapter_over_loopback() -> None:
    result = invoke("fuzz", "--adapter-cmd", PYTHON_EXAMPLE, "--family", "C", "--max-examples", "8")
    assert result.exit_code == 0, result.output
    assert "over loopback" in result.output
    assert "ok C: 8 examples" in result.output


def test_fuzz_names_the_families_it_knows() -> None:
    result = CliRunner().invoke(main, ["fuzz", "--family", "Z"])
    assert result.exit_code == 2
    assert "no generated cases for ['Z']" in result.output


def test_fuzz_names_the_families_of_the_dialects_it_is_given() -> None:
    # The quirk transforms (Q) re-encode chat chunks: Anthropic cases have no Q family.
    result = CliRunner().invoke(main, ["fuzz", "--dialect", "anthropic-messages", "--family", "Q"])
    assert result.exit_code == 2
    assert "no generated cases for ['Q']; families: G, C, T, E, S, H, R" in result.output


def test_fuzz_reports_a_dialect_the_adapter_does_not_declare_as_not_applicable() -> None:
    result = invoke("fuzz", "--adapter", f"{__name__}:chat_only", "--dialect", "anthropic-messages")
    assert result.exit_code == 0, result.output
    assert "n/a anthropic-messages: the adapter does not declare this dialect" in result.output
    assert "examples in" not in result.output


def test_replay_reports_a_malformed_fixture(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("attempts: [{fault: explode}]\n")
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 2
    assert "bad.yaml:1: attempts[0].fault" in result.output


def test_fuzz_runs_its_cases_with_the_setup_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    # The collector's full passes then skip what setup made; the heap is given back after.
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    result = invoke("fuzz", "--family", "C", "--max-examples", "2")
    assert result.exit_code == 0, result.output
    assert calls == ["freeze", "unfreeze"]


def _without_seconds(output: str, folder: Path) -> list[str]:
    """fuzz's lines, without the seconds (the summary table's too) and the folder saved to."""
    lines = (re.sub(r"\d+\.\d s|│ +\d+\.\d +│", "…", line) for line in output.splitlines())
    return [line.replace(str(folder), "…") for line in lines if line.strip()]


def test_fuzz_with_two_jobs_checks_families_in_workers_with_the_results_of_one(
    tmp_path: Path,
) -> None:
    """Q checked here, E in a worker process: the same lines in the same order (the examples
    counted too, shrinking included) and the same shrunk failure as one at a time. (E holds
    for these five draws, which Hypothesis makes from the constants of the loaded modules
    too: in a worker that had not loaded the command's, E would fail.)"""
    mutant = "--adapter=conformance.adapters.mutants:cached_in_input"
    outputs, saved = [], []
    for jobs in ("1", "2"):
        folder = tmp_path / jobs
        args = ["--family", "Q", "--family", "E", "--max-examples", "5", "--jobs", jobs]
        result = invoke("fuzz", mutant, *args, "--save-failures", str(folder))
        assert result.exit_code == 1, result.output
        outputs.append(_without_seconds(result.output, folder))
        saved.append({path.name: path.read_text() for path in folder.glob("*.yaml")})
    assert outputs[0] == outputs[1]
    assert saved[0] == saved[1] and len(saved[0]) == 1
    assert any(line.startswith("ok E: 5 examples") for line in outputs[1])


def test_replay_with_jobs_prints_the_cases_in_their_order(tmp_path: Path) -> None:
    starter = REPO / "fixtures/starter"
    fixtures = sorted(str(path) for path in starter.glob("*.yaml"))[:6]
    serial = invoke("replay", *fixtures, "--jobs", "1")
    concurrent = invoke("replay", *fixtures, "--jobs", "4")
    assert serial.exit_code == concurrent.exit_code == 0, concurrent.output
    assert _cases(concurrent.output) == _cases(serial.output) != []


def _cases(output: str) -> list[str]:
    return [line for line in output.splitlines() if not line.startswith(" ")]
