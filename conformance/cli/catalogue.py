"""``conformance list``: the invariant catalogue."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from ..gateway.reference import crossing_reference
from ..invariants import CATALOGUE
from ..report.reference import render_invariant_reference
from ..spec import LATEST_SPEC, SPEC
from ..verdicts import CONTRACTS, reading_order
from .console import terminal


@click.command("list")
@click.option(
    "--markdown",
    is_flag=True,
    help="Print the full reference (invariants, their fixtures, the quirks) as Markdown: "
    "the text of docs/invariants.md.",
)
def list_invariants(markdown: bool) -> None:
    """Print the invariant catalogue in reading order: each invariant's level under each
    contract, what it states and why it matters."""
    if markdown:
        click.echo(render_invariant_reference(crossing_reference), nl=False)
        return
    table = Table(
        "id",
        *CONTRACTS,
        "since",
        "dialects",
        "needs",
        "statement (why it matters)",
        "source",
        show_lines=True,
    )
    for invariant_id in sorted(CATALOGUE, key=reading_order):
        invariant = CATALOGUE[invariant_id]
        table.add_row(
            invariant.id,
            *(invariant.level_in(contract) for contract in CONTRACTS),
            SPEC.rule_since.get(invariant.id, LATEST_SPEC),
            ", ".join(invariant.dialects),
            ", ".join(invariant.needs),
            Text(invariant.statement).append(f"\n{invariant.rationale}", style="dim"),
            Text(invariant.source),
        )
    terminal().print(table)
