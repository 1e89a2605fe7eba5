"""Command-line pieces the suite's commands share (run, mutants, fuzz, matrix, gateway)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from fakeprovider.fixtures import FixtureError, load_fixtures
from fakeprovider.scenario import Scenario

from ..options import bundled_fixtures
from ..verdicts import Verdict

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


def selected_scenarios(
    paths: Sequence[Path],
    select: str | None,
    profiles: Sequence[str] = (),
    generated: Sequence[Scenario] = (),
) -> list[Scenario]:
    """The fixtures below ``paths`` (the bundled corpus when none) plus ``generated``,
    filtered by id and profile; a malformed fixture exits 2 with one line per problem."""
    try:
        scenarios = [*load_fixtures(paths or (bundled_fixtures(),)), *generated]
    except FixtureError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        sys.exit(2)
    chosen = [
        s
        for s in scenarios
        if (select is None or select in s.id) and (not profiles or set(profiles) & set(s.profiles))
    ]
    if not chosen:
        known = sorted({profile for s in scenarios for profile in s.profiles})
        hint = f" (profiles in these fixtures: {', '.join(known)})" if profiles else ""
        raise click.UsageError(f"no case selected{hint}")
    return chosen
