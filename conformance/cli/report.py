"""``conformance report``: render saved results, one report or a matrix of adapters."""

from __future__ import annotations

from pathlib import Path

import click

from fakeprovider.files import write_atomic

from ..report import render_matrix, write_reports
from ..results import RunResult
from .console import terminal
from .options import read_results
from .outputs import Output, Writes, check_outputs, write_outputs


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path))
def report(results: tuple[Path, ...], out_dir: Path) -> None:
    """Render saved results: one file gives its report, several a matrix of adapters."""
    check_outputs(Output("--out", out_dir, directory=True))
    loaded = [read_results(path) for path in results]
    console = terminal()
    writes = Writes()
    if len(loaded) == 1:
        write_outputs(console, loaded[0], None, out_dir, writes, report_option="--out")
        writes.exit(failed=False)
    links: list[tuple[RunResult, str]] = []
    for number, result in enumerate(loaded, 1):
        name = f"{number:02d}-{_slug(str(result.adapter.get('name', 'adapter')))}"
        with writes.writing("--out", out_dir / name):
            write_reports(result, out_dir / name)
        links.append((result, f"{name}/index.html"))
    matrix = out_dir / "index.html"
    with writes.writing("--out", matrix):
        write_atomic(matrix, render_matrix(links))
        console.print(f"matrix: {matrix}")
    writes.exit(failed=False)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:60] or "adapter"
