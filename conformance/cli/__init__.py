"""``conformance``: the command-line face of the suite, one module per command.

``run`` (one adapter), ``fuzz`` and ``replay`` (generated cases), ``mutants`` (the kill
table), ``matrix`` (real libraries), ``gateway`` and ``lint`` (gateways and captured
streams), ``validate`` (fixtures), ``report`` (saved results) and ``list`` (the catalogue).
Options they share live in :mod:`.options`, what they print in :mod:`.console`.
"""

from __future__ import annotations

import click

from . import catalogue, gateway, generate, matrix, mutants, report, run, validate
from .options import document_exit_codes


@click.group()
@click.version_option(package_name="streamconform")
def main() -> None:
    """Conformance suite for LLM streaming adapters."""


for _command in (
    run.run,
    generate.fuzz,
    generate.replay,
    mutants.mutants,
    matrix.matrix,
    gateway.gateway,
    gateway.lint,
    validate.validate,
    report.report,
    catalogue.list_invariants,
):
    main.add_command(_command)
document_exit_codes(main)
