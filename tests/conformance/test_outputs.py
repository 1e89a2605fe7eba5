"""Errors that arrive early and in one line: bad output paths before the run, a write that
fails after it, hostile saved JSON (baselines, results, matrix columns)."""

from __future__ import annotations

import errno
import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from text_case import write_text_case

from conformance.cli import main, outputs as outputs_module
from conformance.cli.options import ExitCode
from fakeprovider.cli import main as fakeprovider_main
from fakeprovider.files import unwritable_reason, write_atomic

SILENT = shlex.join([sys.executable, "-c", "pass"])  # exits before its hello: exit 3 if run
DEEP = "[" * 100_000 + "]" * 100_000


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(arg) for arg in args])


def one_error_line(result: Result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A directory, a file, and a path below that file."""
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    return {
        "dir": tmp_path / "a-dir",
        "file": tmp_path / "a-file",
        "under_file": tmp_path / "a-file" / "out.json",
        "fixture": write_text_case(tmp_path),
        "results": tmp_path / "results.json",
    }


@pytest.mark.parametrize(
    ("args", "option", "bad"),
    [
        (("run", "--adapter-cmd", SILENT, "--json"), "--json", "dir"),
        (("run", "--adapter-cmd", SILENT, "--json"), "--json", "under_file"),
        (("run", "--adapter-cmd", SILENT, "--report"), "--report", "file"),
        (("run", "--adapter-cmd", SILENT, "--write-baseline"), "--write-baseline", "dir"),
        (("gateway", "--gateway-url", "http://127.0.0.1:9/v1", "--json"), "--json", "dir"),
        (("gateway", "--gateway-url", "http://127.0.0.1:9/v1", "--report"), "--report", "file"),
        (("fuzz", "--adapter-cmd", SILENT, "--save-failures"), "--save-failures", "file"),
        (("matrix", "column", "openai", "--out"), "--out", "file"),
        (("matrix", "--summary"), "--summary", "dir"),
        (("report", "{results}", "--out"), "--out", "file"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_bad_output_path_is_one_line_exit_2_before_the_run(
    args: tuple[str, ...], option: str, bad: str, places: dict[str, Path]
) -> None:
    # Each command would otherwise exit 3 (an adapter that never says hello, a gateway
    # that does not answer, a library not installed) or run: 2 proves the check came first.
    write_atomic(places["results"], _results_of_one_run(places["fixture"]))
    command = [arg.format(**places) for arg in args]
    if command[0] in ("run", "gateway"):
        command += [str(places[bad]), "--fixtures", str(places["fixture"])]
    else:
        command.append(str(places[bad]))
    result = invoke(*command)
    assert result.exit_code == ExitCode.USAGE_ERROR, result.output
    line = one_error_line(result)
    assert line.startswith(f"Error: {option} {places[bad]}: "), line


def test_the_output_check_leaves_nothing_behind(places: dict[str, Path]) -> None:
    target = places["dir"] / "new" / "deeper" / "results.json"
    assert unwritable_reason(target) is None
    assert unwritable_reason(places["dir"], directory=True) is None
    assert list(places["dir"].iterdir()) == []
    assert unwritable_reason(places["file"], directory=True) == "exists and is not a directory"
    assert unwritable_reason(places["under_file"]) == f"{places['file']} is not a directory"


def test_record_refuses_an_out_that_is_a_file_before_listening(places: dict[str, Path]) -> None:
    args = ["record", "--upstream", "http://127.0.0.1:9/v1", "--port", "0"]
    result = CliRunner().invoke(fakeprovider_main, [*args, "--out", str(places["file"])])
    assert result.exit_code == 2, result.output
    assert one_error_line(result) == (
        f"fakeprovider record: --out {places['file']}: exists and is not a directory"
    )


def _results_of_one_run(fixture: Path) -> str:
    json_path = fixture.parent / "first.json"
    assert invoke("run", "--fixtures", fixture, "--json", json_path).exit_code == 0
    return json_path.read_text(encoding="utf-8")


def test_a_write_that_fails_after_the_run_loses_only_itself(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    json_path, report_dir = places["dir"] / "r.json", places["dir"] / "report"
    written = outputs_module.write_atomic

    def disk_full_for_json(path: Path, data: str | bytes) -> None:
        if path == json_path:
            raise OSError(errno.ENOSPC, "No space left on device")
        written(path, data)

    monkeypatch.setattr(outputs_module, "write_atomic", disk_full_for_json)
    baseline = places["dir"] / "b.json"
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--fixtures",
            str(places["fixture"]),
            "--json",
            str(json_path),
            "--report",
            str(report_dir),
            "--write-baseline",
            str(baseline),
        ],
    )
    assert result.exit_code == ExitCode.USAGE_ERROR, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"Error: --json {json_path}: not written (No space left on device)" in result.output
    assert (report_dir / "index.html").exists()
    assert baseline.exists()
    assert not json_path.exists()


def test_a_deep_baseline_is_one_line_exit_2(places: dict[str, Path]) -> None:
    for document in (DEEP, '{"schema": "streamconform.baseline", "cases": ' + DEEP + "}"):
        places["results"].write_text(document, encoding="utf-8")
        result = invoke("run", "--fixtures", places["fixture"], "--baseline", places["results"])
        assert result.exit_code == ExitCode.USAGE_ERROR, result.output
        line = one_error_line(result)
        assert line.startswith(f"Error: {places['results']}: the baseline is not JSON ("), line


def test_a_baseline_over_the_size_bound_is_refused_unread(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("conformance.results.MAX_SAVED_BYTES", 10)
    places["results"].write_text('{"schema": "streamconform.baseline"}', encoding="utf-8")
    result = invoke("run", "--fixtures", places["fixture"], "--baseline", places["results"])
    assert result.exit_code == ExitCode.USAGE_ERROR, result.output
    assert one_error_line(result) == f"Error: {places['results']}: the baseline is over 0 MiB"


def _edited(results: str, edit: str) -> str:
    """The results file with one edit: a hand-edit of the kind a user makes."""
    data = json.loads(results)
    if edit == "deep":
        return results.replace('"cases": [', '"cases": [' + DEEP + ",", 1)
    if edit == "dialects-not-a-list":
        data["adapter"]["dialects"] = 5
    elif edit == "versions-not-an-object":
        data["options"]["matrix"] = {"column": "x", "versions": 5}
    elif edit == "case-missing-verdicts":
        del data["cases"][0]["verdicts"]
    elif edit == "events-not-objects":
        data["cases"][0]["events"] = [5]
    elif edit == "not-an-object":
        data = [data]
    return json.dumps(data)


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        ("deep", "the results file is not JSON (recursion limit exceeded"),
        ("dialects-not-a-list", "invalid streamconform.results: adapter: Value error, dialects"),
        ("versions-not-an-object", "invalid streamconform.results: options: Value error, matrix"),
        ("case-missing-verdicts", "invalid streamconform.results: cases.0.verdicts: Field req"),
        ("events-not-objects", "invalid streamconform.results: cases.0.events.0: Input should"),
        ("not-an-object", "not a streamconform results file (schema None)"),
    ],
)
def test_report_of_a_hand_edited_results_file_is_one_line_exit_2(
    places: dict[str, Path], edit: str, what: str
) -> None:
    places["results"].write_text(_edited(_results_of_one_run(places["fixture"]), edit), "utf-8")
    for results in ([places["results"]], [places["results"], places["results"]]):
        result = invoke("report", *results, "--out", places["dir"])
        assert result.exit_code == ExitCode.USAGE_ERROR, result.output
        line = one_error_line(result)
        assert line.startswith(f"Error: {places['results']}: {what}"), line


def test_matrix_render_of_an_edited_column_is_one_line_exit_2(places: dict[str, Path]) -> None:
    edited = _edited(_results_of_one_run(places["fixture"]), "versions-not-an-object")
    for contract in ("harness", "interop"):
        (places["dir"] / f"x.{contract}.json").write_text(edited, encoding="utf-8")
    result = invoke("matrix", "render", places["dir"], "--summary", places["dir"] / "c.md")
    assert result.exit_code == ExitCode.USAGE_ERROR, result.output
    assert "matrix.versions: Input should be a valid dictionary" in one_error_line(result)
