"""SIGINT and SIGTERM stop a command cleanly: what ended is written and marked interrupted,
one line on stderr, exit 130 or 143, nothing left running (issue 23, "Signals")."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest
from signalled import after, later, lines_in, run_signalled, sleepy_adapter
from test_gateway import _free_port as free_port, example_gateway

from conformance.options import bundled_fixtures
from conformance.report import compare_baseline, read_baseline
from conformance.results import RunResult
from fakeprovider.fixtures import load_fixtures


@pytest.mark.parametrize(
    ("signals", "code"),
    [
        ((signal.SIGTERM,), 143),
        ((signal.SIGINT,), 130),
        ((signal.SIGINT, signal.SIGINT), 130),  # a second Ctrl-C while it stops
    ],
)
def test_a_signalled_run_writes_what_ended_and_leaves_nothing_running(
    tmp_path: Path, signals: tuple[signal.Signals, ...], code: int
) -> None:
    log, results, reports = tmp_path / "cases.log", tmp_path / "r.json", tmp_path / "reports"
    stopped = run_signalled(
        [
            "run",
            "--adapter-cmd",
            sleepy_adapter(log),
            "--jobs",
            "2",
            "--json",
            results,
            "--report",
            reports,
        ],
        lines_in(log, 6),
        signals,
    )
    assert stopped.returncode == code, stopped.stderr
    result = RunResult.from_json(results.read_bytes())
    assert result.interrupted is not None
    assert result.interrupted.signal == signals[0].name
    selected = len(load_fixtures([bundled_fixtures()]))
    assert result.interrupted.cases_selected == selected
    assert 0 < len(result.cases) < selected
    assert stopped.stderr_lines == [
        f"interrupted by {signals[0].name} after {len(result.cases)} of {selected} cases; "
        f"results so far in {results}, {reports}"
    ]
    assert RunResult.from_json((reports / "results.json").read_bytes()) == result
    html = (reports / "index.html").read_text()
    assert f"interrupted by {signals[0].name} after {len(result.cases)} of {selected} cases" in html
    assert f"interrupted by {signals[0].name}" in stopped.stdout  # the terminal summary
    assert stopped.survivors == [], "adapters and the sleepers they left must be gone"


def test_an_interrupted_run_keeps_the_baseline_and_claims_nothing_fixed(tmp_path: Path) -> None:
    log, baseline = tmp_path / "cases.log", tmp_path / "b.json"
    every_case_failed = {
        s.id: {"verdicts": {"G1": "fail"}} for s in load_fixtures([bundled_fixtures()])
    }
    before = json.dumps(
        {
            "schema": "streamconform.baseline",
            "schema_version": 1,
            "suite_version": "0",
            "contract": "harness",
            "adapter": "hostile",
            "cases": every_case_failed,
        }
    )
    baseline.write_text(before)
    stopped = run_signalled(
        [
            "run",
            "--adapter-cmd",
            sleepy_adapter(log),
            "--jobs",
            "1",
            "--json",
            tmp_path / "r",
            "--baseline",
            baseline,
            "--write-baseline",
            baseline,
        ],
        lines_in(log, 3),
        (signal.SIGTERM,),
    )
    assert stopped.returncode == 143, stopped.stderr
    assert baseline.read_text() == before
    assert stopped.stderr_lines[-1].endswith(f"({baseline} not rewritten)")
    result = RunResult.from_json((tmp_path / "r").read_bytes())
    diff = compare_baseline(result, read_baseline(baseline))
    ran = {case.case for case in result.cases}
    assert {change.case for change in diff.fixed} <= ran
    assert {change.case for change in diff.missing} == set(every_case_failed) - ran != set()


def test_a_run_that_was_not_interrupted_says_nothing_of_it(tmp_path: Path) -> None:
    result = RunResult.model_validate(
        {
            "suite_version": "0",
            "adapter": {},
            "options": {},
            "started_at": "",
            "finished_at": "",
            "catalogue": [],
            "cases": [],
        }
    )
    assert "interrupted" not in result.to_json()
    assert RunResult.from_json(result.to_json()).interrupted is None


@pytest.mark.parametrize(
    ("signals", "to_group", "code"),
    [
        ((signal.SIGTERM,), False, 143),  # kill PID: the parent alone
        ((signal.SIGINT, signal.SIGINT), True, 130),  # Ctrl-C twice: every worker too
    ],
)
def test_a_signalled_fuzz_stops_its_workers_and_their_adapters(
    tmp_path: Path, signals: tuple[signal.Signals, ...], to_group: bool, code: int
) -> None:
    log = tmp_path / "cases.log"
    stopped = run_signalled(
        [
            "fuzz",
            "--adapter-cmd",
            sleepy_adapter(log, slow_s=0.05),
            "--jobs",
            "2",
            "--save-failures",
            tmp_path / "failures",
        ],
        lines_in(log, 20),
        signals,
        to_group=to_group,
    )
    assert stopped.returncode == code, stopped.stderr
    families = re.fullmatch(
        rf"interrupted by {signals[0].name} after (\d+) of (\d+) families; (.*)",
        stopped.stderr_lines[-1],
    )
    assert families is not None, stopped.stderr
    assert len(stopped.stderr_lines) == 1, stopped.stderr  # no traceback, from any process
    assert stopped.survivors == [], "workers, adapters, sleepers, resource tracker all gone"


def test_a_signalled_gateway_run_writes_the_cases_that_ended(tmp_path: Path) -> None:
    port, results = free_port(), tmp_path / "r.json"
    with example_gateway(port, "passthrough") as url:
        stopped = run_signalled(
            [
                "gateway",
                "--gateway-url",
                url,
                "--upstream-port",
                str(port),
                "--jobs",
                "1",
                "--json",
                results,
            ],
            after(10.0),  # it shows no progress to watch; its run takes far longer
            (signal.SIGTERM,),
        )
    assert stopped.returncode == 143, stopped.stderr
    result = RunResult.from_json(results.read_bytes())
    assert result.interrupted is not None
    selected = result.interrupted.cases_selected
    assert 0 < len(result.cases) < selected
    assert stopped.stderr_lines == [
        f"interrupted by SIGTERM after {len(result.cases)} of {selected} cases; "
        f"results so far in {results}"
    ]
    assert stopped.survivors == []


def test_signalled_mutants_show_the_mutants_that_ended() -> None:
    starter = bundled_fixtures() / "starter"  # 80 mutants over it take about a minute
    stopped = run_signalled(
        ["mutants", "--fixtures", starter, "--jobs", "2"], after(20.0), (signal.SIGINT,)
    )
    assert stopped.returncode == 130, stopped.stderr
    ended = re.fullmatch(
        r"interrupted by SIGINT after (\d+) of (\d+) mutants; nothing written",
        stopped.stderr_lines[-1],
    )
    assert ended is not None, stopped.stderr
    assert len(stopped.stderr_lines) == 1, stopped.stderr
    assert 0 < int(ended[1]) < int(ended[2])
    assert "mutant" in stopped.stdout  # the kill table of those that ended
    assert stopped.survivors == []


def test_a_signalled_matrix_column_saves_the_cases_that_ended(tmp_path: Path) -> None:
    # The column says when its corpus begins (about 9 s of cases on an idle machine, one at
    # a time); a fixed wait from the start was past its end where the machine was fast.
    progress = tmp_path / "stderr"
    stopped = run_signalled(
        ["matrix", "column", "openai", "--out", tmp_path, "--jobs", "1"],
        later(lines_in(progress, 1), 2.0),
        (signal.SIGTERM,),
        stderr=progress,
    )
    assert stopped.returncode == 143, stopped.stderr
    harness, interop = tmp_path / "openai.harness.json", tmp_path / "openai.interop.json"
    result = RunResult.from_json(harness.read_bytes())
    assert result.interrupted is not None
    assert 0 < len(result.cases) < result.interrupted.cases_selected
    assert RunResult.from_json(interop.read_bytes()).interrupted == result.interrupted
    assert not (tmp_path / "openai.retry.harness.json").exists()  # the profile never ran
    assert stopped.stderr_lines[-1] == (
        f"interrupted by SIGTERM {result.interrupted.progress(len(result.cases))} in the column "
        f"openai; results so far in {harness}, {interop}"
    )
    assert stopped.survivors == []


def test_fakeprovider_serve_stops_on_a_signal_with_one_line(tmp_path: Path) -> None:
    announced = tmp_path / "out"

    def listening() -> bool:
        return announced.exists() and "listening on" in announced.read_text()

    stopped = run_signalled(
        ["serve", "--port", "0", "--fixtures", bundled_fixtures() / "starter"],
        listening,
        (signal.SIGINT, signal.SIGINT),
        module="fakeprovider",
        stdout=announced,
    )
    assert stopped.returncode == 130
    assert stopped.stderr_lines == ["interrupted by SIGINT; stopped serving"]
