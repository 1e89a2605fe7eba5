"""``conformance mutants``: every mutant of the reference adapter, and the kill table."""

from __future__ import annotations

from pathlib import Path

import click

from fakeprovider.interrupts import Interruption
from fakeprovider.stopping import exit_interrupted, stops_on_signals

from ..adapters.mutants import MUTANTS
from ..options import RunOptions
from ..run.kill_table import kill_table
from .console import render_kill_table, render_mutant_list, terminal
from .options import exit_judged, fixtures_option, jobs_option, selected_scenarios


@click.command()
@fixtures_option
@click.option("--mutant", "names", multiple=True, help="Only these mutants (repeatable).")
@click.option("--timeout", default=5.0, show_default=True, help="Seconds per case.")
@click.option(
    "--list",
    "list_only",
    is_flag=True,
    help="List every mutant and its targets; run none.",
)
@jobs_option(
    "Cases in flight at once: the reference adapter's run has N, then N mutants run side "
    "by side, each one case at a time, the longest first."
)
@stops_on_signals
def mutants(
    fixture_paths: tuple[Path, ...],
    names: tuple[str, ...],
    timeout: float,
    list_only: bool,
    jobs: int,
    interruption: Interruption,
) -> None:
    """Run every mutant of the reference adapter and print the kill table.

    Each mutant carries one realistic bug; it must be killed by the invariants it
    targets. Exits 1 if a mutant survives or is killed only by a timeout; 130 or 143 when
    SIGINT or SIGTERM stopped it, the kill table then of the mutants that ended.
    """
    if list_only:
        terminal().print(render_mutant_list([*MUTANTS.values()]))
        return
    scenarios = selected_scenarios(fixture_paths, None)
    options = RunOptions(timeout_s=timeout, transport="in-process")
    with interruption.deferred():  # a signal stops the mutants: those that ended are shown
        rows = kill_table(
            scenarios,
            options,
            names=names or None,
            focus=True,
            jobs=jobs,
            interruption=interruption,
        )
        terminal().print(render_kill_table(rows))
    if interruption.signal is not None:
        chosen = len(names or MUTANTS)
        exit_interrupted(
            interruption.signal, "nothing written", f"after {len(rows)} of {chosen} mutants"
        )
    exit_judged(not all(row.killed and not row.timeout_only for row in rows))
