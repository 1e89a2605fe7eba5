"""``conformance list``: the invariant catalogue."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from ..invariants import CATALOGUE
from ..report.reference import render_invariant_reference
from ..verdicts import CONTRACTS, reading_order


@click.command("list")
@click.option(
    "--markdown",
    is_flag=True,
    help="Print the full reference (invariants, their fixtures, the quirks) as Markdown: "
    "the text of docs/invariants.md.",
)
def list_invariants(markdown: bool) -> None:
    """Print the invariant catalogue in reading order, with each invariant's level under
    each contract."""
    if markdown:
        click.echo(render_invariant_reference(), nl=False)
        return
    table = Table("id", *CONTRACTS, "needs", "statement", "source", show_lines=False)
    for invariant_id in sorted(CATALOGUE, key=reading_order):
        invariant = CATALOGUE[invariant_id]
        table.add_row(
            invariant.id,
            *(invariant.level_in(contract) for contract in CONTRACTS),
            ", ".join(invariant.needs),
            invariant.statement,
            invariant.source,
        )
    Console().print(table)
