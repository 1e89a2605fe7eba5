"""Reports of a run: a self-contained HTML page, a matrix of runs, JUnit XML, baselines."""

from __future__ import annotations

from pathlib import Path

from fakeprovider.files import write_atomic

from ..results import RunResult
from .baseline import (
    Baseline,
    BaselineDiff,
    BaselineError,
    VerdictChange,
    compare_baseline,
    fails_gate,
    format_baseline,
    read_baseline,
)
from .html import MatrixTable, render_html, render_matrix
from .junit import render_junit

REPORT_FILES = {"html": "index.html", "json": "results.json", "junit": "junit.xml"}


def write_reports(result: RunResult, out_dir: Path) -> dict[str, Path]:
    """Write ``index.html``, ``results.json`` and ``junit.xml`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    contents = {
        "html": render_html(result),
        "json": result.to_json(),
        "junit": render_junit(result),
    }
    paths = {}
    for kind, text in contents.items():
        path = out_dir / REPORT_FILES[kind]
        write_atomic(path, text)
        paths[kind] = path
    return paths


__all__ = [
    "REPORT_FILES",
    "Baseline",
    "BaselineDiff",
    "BaselineError",
    "MatrixTable",
    "VerdictChange",
    "compare_baseline",
    "fails_gate",
    "format_baseline",
    "read_baseline",
    "render_html",
    "render_junit",
    "render_matrix",
    "write_reports",
]
