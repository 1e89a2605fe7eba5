"""``conformance``: the command-line face of the suite, one module per command.

``run`` (one adapter), ``fuzz`` and ``replay`` (generated cases), ``mutants`` (the kill
table), ``matrix`` (real libraries), ``gateway`` and ``lint`` (gateways and captured
streams), ``validate`` (fixtures), ``report`` (saved results) and ``list`` (the catalogue).
Options they share live in :mod:`.options`, what they print in :mod:`.console`.
"""

from __future__ import annotations

import importlib

import click

from .heap import frozen_at_exit
from .options import document_exit_codes

COMMANDS = {
    "run": "run:run",
    "fuzz": "generate:fuzz",
    "replay": "generate:replay",
    "mutants": "mutants:mutants",
    "matrix": "matrix:matrix",
    "gateway": "gateway:gateway",
    "lint": "gateway:lint",
    "validate": "validate:validate",
    "report": "report:report",
    "list": "catalogue:list_invariants",
}
"""Each command's module and function: a command imports only what it needs (``run`` has
no Hypothesis to load), a fifth of a default run's start-up."""


class _CommandsOnDemand(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, _, attribute = COMMANDS[name].partition(":")
        command: click.Command = getattr(importlib.import_module(f".{module}", __name__), attribute)
        document_exit_codes(command)
        return command


@click.group(cls=_CommandsOnDemand)
@click.version_option(package_name="streamconform")
def main() -> None:
    """Conformance suite for LLM streaming adapters."""
    frozen_at_exit()


document_exit_codes(main)
