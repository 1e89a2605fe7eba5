"""Command-line pieces the suite's commands share (run, mutants, fuzz, matrix, gateway)."""

from __future__ import annotations

from pathlib import Path

import click

from .invariants import Verdict

VERDICT_STYLE: dict[Verdict, str] = {
    "pass": "green",
    "non-strict": "yellow",
    "info": "cyan",
    "n/a": "dim",
    "fail": "bold red",
}

fixtures_option = click.option(
    "--fixtures",
    "fixture_paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Fixture file or directory (repeatable); default: the bundled corpus.",
)
