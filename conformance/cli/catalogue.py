"""``conformance list``: the invariant catalogue."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from ..invariants import CATALOGUE
from ..verdicts import CONTRACTS, reading_order


@click.command("list")
def list_invariants() -> None:
    """Print the invariant catalogue in INVARIANTS.md's order, with each invariant's level
    under each contract."""
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
