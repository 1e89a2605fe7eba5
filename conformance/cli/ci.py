"""What a run leaves for CI: the Markdown summary and, under GitHub Actions, the job summary
and the step's outputs.

GitHub gives a step two files to append to: ``GITHUB_STEP_SUMMARY`` (Markdown shown on the
job's page) and ``GITHUB_OUTPUT`` (``name<<delimiter`` blocks the workflow reads as
``steps.<id>.outputs.<name>``). Each is appended to by rewriting it whole through
``write_atomic``, so a run cut short leaves what earlier commands of the step wrote.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

import click
from rich.console import Console

from fakeprovider.files import write_atomic

from ..report import REPORT_FILES, BaselineDiff, fails_gate
from ..report.summary import render_summary
from ..results import RunResult
from ..verdicts import Verdict

summary_option = click.option(
    "--summary",
    "summary_path",
    type=click.Path(path_type=Path),
    help="Write a Markdown summary: verdict counts, each failure with its replay command, "
    "the baseline comparison (also appended to $GITHUB_STEP_SUMMARY when that is set).",
)

# The verdicts by output name: an output's name is read in expressions, where n/a is not.
_COUNT_OUTPUTS: dict[str, Verdict] = {
    "pass": "pass",
    "non-strict": "non-strict",
    "info": "info",
    "not-applicable": "n/a",
    "fail": "fail",
}


def write_ci_files(
    console: Console,
    result: RunResult,
    diff: BaselineDiff | None,
    *,
    summary_path: Path | None,
    fixtures: Sequence[Path],
    json_path: Path | None,
    report_dir: Path | None,
) -> None:
    """The ``--summary`` file, and the step's summary and outputs when GitHub gives them."""
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path is not None or step_summary:
        text = render_summary(result, diff, fixtures)
        if summary_path is not None:
            summary_path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(summary_path, text)
            console.print(f"summary: {summary_path}", markup=False)
        if step_summary:
            _append(Path(step_summary), text)
    if step_outputs := os.environ.get("GITHUB_OUTPUT"):
        files = {"report": report_dir, "results": json_path, "summary": summary_path}
        outputs = github_outputs(result, diff, files)
        _append(Path(step_outputs), format_outputs(outputs))


def github_outputs(
    result: RunResult, diff: BaselineDiff | None, files: Mapping[str, Path | None]
) -> dict[str, str]:
    """The step's outputs: the gate, the verdict counts, the baseline's, and the ``files``
    written (``report``: the report directory, ``results``: the results JSON, which is
    the report's own when there is no other, ``summary``)."""
    counts = result.counts()
    outputs = {"gate": "failed" if fails_gate(result, diff) else "passed"}
    outputs["cases"] = str(len(result.cases))
    outputs |= {name: str(counts[verdict]) for name, verdict in _COUNT_OUTPUTS.items()}
    if diff is not None:
        outputs |= {
            "new": str(len(diff.new_failures)),
            "changed": str(len(diff.changed)),
            "known": str(len(diff.known_failures)),
            "stale": str(len(diff.stale)),
        }
    report_dir = files.get("report")
    if report_dir is not None and files.get("results") is None:
        files = {**files, "results": report_dir / REPORT_FILES["json"]}
    outputs |= {name: str(path) for name, path in files.items() if path is not None}
    return outputs


def format_outputs(outputs: Mapping[str, str]) -> str:
    """``outputs`` in GitHub's multiline form, under a delimiter no value contains."""
    blocks = []
    for name, value in outputs.items():
        delimiter = f"streamconform_{secrets.token_hex(8)}"
        blocks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(blocks)


def _append(path: Path, text: str) -> None:
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    write_atomic(path, before + text)
