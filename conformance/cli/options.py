"""Command-line pieces the suite's commands share: options, reading and writing results."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from fakeprovider.fixtures import FixtureError, load_fixtures
from fakeprovider.scenario import Scenario

from ..options import bundled_fixtures
from ..report import write_reports
from ..results import RunResult
from ..verdicts import CONTRACTS

F = TypeVar("F", bound=Callable[..., Any])

select_option = click.option(
    "-k", "select", default=None, help="Only cases whose id contains this text."
)
json_option = click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="Write results JSON."
)
report_option = click.option(
    "--report", "report_dir", type=click.Path(path_type=Path), help="Write reports."
)
strict_option = click.option(
    "--strict", is_flag=True, help="Non-strict verdicts count as failures."
)
contract_option = click.option(
    "--contract",
    type=click.Choice(CONTRACTS),
    default="harness",
    show_default=True,
    help="harness: the notes' invariants and the harness's own rules; interop: fail only "
    "where the adapter loses, corrupts or invents what the provider sent, crashes or hangs.",
)


def timeout_options(idle: float, case: float) -> Callable[[F], F]:
    """--idle-timeout and --timeout, with this command's defaults."""

    def add(command: F) -> F:
        command = click.option(
            "--timeout", default=case, show_default=True, help="Seconds per case."
        )(command)
        return click.option(
            "--idle-timeout", default=idle, show_default=True, help="Seconds without a byte."
        )(command)

    return add


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


def read_results(path: Path) -> RunResult:
    try:
        return RunResult.from_json(path.read_bytes())
    except (OSError, ValueError) as error:
        raise click.ClickException(f"{path}: not a streamconform results file ({error})") from None


def write_outputs(
    console: Console, result: RunResult, json_path: Path | None, report_dir: Path | None
) -> None:
    """The results JSON and the reports a command was asked for."""
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(result.to_json(), encoding="utf-8")
        console.print(f"results: {json_path}", markup=False)
    if report_dir is not None:
        for kind, path in write_reports(result, report_dir).items():
            console.print(f"{kind}: {path}", markup=False)
