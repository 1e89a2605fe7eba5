"""``conformance report``: render saved results, one report or a matrix of adapters."""

from __future__ import annotations

from pathlib import Path

import click

from fakeprovider.files import write_atomic

from ..report import render_matrix, write_reports
from ..results import RunResult
from .console import terminal
from .options import read_results, write_outputs


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path))
def report(results: tuple[Path, ...], out_dir: Path) -> None:
    """Render saved results: one file gives its report, several a matrix of adapters."""
    loaded = [read_results(path) for path in results]
    console = terminal()
    if len(loaded) == 1:
        write_outputs(console, loaded[0], None, out_dir)
        return
    links: list[tuple[RunResult, str]] = []
    for number, result in enumerate(loaded, 1):
        name = f"{number:02d}-{_slug(str(result.adapter.get('name', 'adapter')))}"
        write_reports(result, out_dir / name)
        links.append((result, f"{name}/index.html"))
    matrix = out_dir / "index.html"
    write_atomic(matrix, render_matrix(links))
    console.print(f"matrix: {matrix}")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:60] or "adapter"
