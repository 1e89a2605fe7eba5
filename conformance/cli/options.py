"""Command-line pieces the suite's commands share: options, reading and writing results."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from enum import IntEnum
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from fakeprovider.dialects import DIALECT_IDS, DialectId
from fakeprovider.fixtures import FixtureError, load_fixtures
from fakeprovider.scenario import Scenario

from ..codes import ConformanceError
from ..options import bundled_fixtures
from ..results import (
    SCHEMA as RESULTS_SCHEMA,
    RunResult,
    SavedFileError,
    read_document,
    validated,
)
from ..spec import LATEST_SPEC, SPEC, UnknownSpecError
from ..verdicts import CONTRACTS, Contract
from .console import controls_shown

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(IntEnum):
    """How every ``conformance`` command exits, in the manner of pytest."""

    CONFORMANT = 0
    NOT_CONFORMANT = 1  # a failing verdict (lint: a finding; mutants: a survivor)
    USAGE_ERROR = 2  # a bad option, fixture, baseline, results file or output path; no case
    SETUP_ERROR = 3  # the run could not start: the adapter, its handshake, the gateway, a port


EXIT_CODES_HELP = (
    "Exit codes: 0 conformant; 1 not conformant; 2 usage or input error (a bad option, "
    "fixture, baseline or results file, no case selected, an output that cannot be "
    "written); 3 the run could not start (the "
    "adapter does not load or its handshake fails, the gateway does not answer, a port is "
    "in use)."
)


class InputError(ConformanceError, click.ClickException):
    """A fixture, baseline or results file the command cannot use."""

    exit_code = ExitCode.USAGE_ERROR

    def format_message(self) -> str:
        # It may quote a file's keys or a path: shown, never run by the terminal.
        return controls_shown(self.message)


class SetupError(ConformanceError, click.ClickException):
    """The run could not start: the adapter, the gateway or a port."""

    exit_code = ExitCode.SETUP_ERROR

    def format_message(self) -> str:
        # It may quote the adapter's hello line and stderr: shown, never run by the terminal.
        return "\n".join(controls_shown(line) for line in self.message.split("\n"))


def exit_judged(failed: bool) -> NoReturn:
    """End a command that ran: 1 when something failed, else 0."""
    sys.exit(ExitCode.NOT_CONFORMANT if failed else ExitCode.CONFORMANT)


def document_exit_codes(command: click.Command) -> None:
    """Put the exit codes at the end of ``--help`` of ``command`` and its subcommands."""
    command.epilog = EXIT_CODES_HELP
    if isinstance(command, click.Group):
        for subcommand in command.commands.values():
            document_exit_codes(subcommand)


def _not_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # Left out, the bundled reference adapter runs: an empty value (an unset shell variable)
    # must not quietly stand for it and pass a gate.
    if value is not None and not value.strip():
        raise click.BadParameter("is empty: give the adapter, or leave the option out")
    return value


adapter_target_option = click.option(
    "--adapter", "adapter_target", callback=_not_blank, help="Python adapter: module:factory."
)
adapter_cmd_option = click.option(
    "--adapter-cmd", callback=_not_blank, help="Subprocess adapter command (JSON Lines protocol)."
)
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


def _known_spec(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    try:
        return None if value is None else SPEC.known(value)
    except UnknownSpecError as error:
        raise click.BadParameter(str(error)) from None


spec_option = click.option(
    "--spec",
    callback=_known_spec,
    metavar="VERSION",
    help=f"Judge by this revision of the spec ({', '.join(SPEC.versions)}; default "
    f"{LATEST_SPEC}, or the --baseline's): rules added after it are INFO, reported as "
    '"new since VERSION".',
)


def judging_spec(spec: str | None, contract: Contract, baseline_spec: str | None = None) -> str:
    """The revision a run judges by: --spec, else the baseline's (compared under the
    revision it was written under), else the latest; a usage error where that revision
    has no such contract."""
    chosen = spec or baseline_spec or LATEST_SPEC
    try:
        SPEC.check_contract(chosen, contract)
    except UnknownSpecError as error:
        raise click.UsageError(str(error)) from None
    return chosen


def _usable_cpus() -> int:
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return len(usable) if usable is not None else os.cpu_count() or 1


def default_jobs() -> int:
    """Four times the CPUs this process may run on, and at least 8: a case mostly waits on
    the provider's clock (pauses, stalls, retry delays), not on a CPU; the default run's
    cases wait 16 s in all, its longest 3 s."""
    return max(8, 4 * _usable_cpus())


def default_processes() -> int:
    """Twice the CPUs, and at least 4: worker processes, each busy drawing cases."""
    return max(4, 2 * _usable_cpus())


JOBS_HELP = (
    "Cases in flight at once, the longest first; a subprocess adapter runs as up to N "
    "processes, a Python adapter whose run is not an async generator one case at a time. "
    "Results are those of --jobs 1 but for clock fields."
)


def jobs_option(help: str = JOBS_HELP, *, processes: bool = False) -> Callable[[F], F]:
    """-j/--jobs: cases in flight (four times the CPU count, at least 8) or, with
    ``processes``, worker processes (twice the CPU count, at least 4)."""
    return click.option(
        "-j",
        "--jobs",
        type=click.IntRange(min=1),
        default=default_processes if processes else default_jobs,
        show_default=(
            "twice the CPU count, at least 4"
            if processes
            else "four times the CPU count, at least 8"
        ),
        help=help,
    )


def timeout_options(idle: float, case: float) -> Callable[[F], F]:
    """--idle-timeout and --timeout, with this command's defaults."""

    def add(command: F) -> F:
        seconds = click.FloatRange(min=0, min_open=True)  # 0 or less would end every case
        command = click.option(
            "--timeout", type=seconds, default=case, show_default=True, help="Seconds per case."
        )(command)
        return click.option(
            "--idle-timeout",
            type=seconds,
            default=idle,
            show_default=True,
            help="Seconds without a byte.",
        )(command)

    return add


fixtures_option = click.option(
    "--fixtures",
    "fixture_paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Fixture file or directory (repeatable); default: the bundled corpus.",
)


def fixtures_or_exit(paths: Sequence[Path]) -> list[Scenario]:
    """The fixtures below ``paths``; a malformed one exits 2 with one line per problem."""
    try:
        return load_fixtures(paths)
    except FixtureError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        sys.exit(ExitCode.USAGE_ERROR)


dialect_option = click.option(
    "--dialect",
    "dialects",
    multiple=True,
    type=click.Choice(DIALECT_IDS),
    help="Only cases of this dialect (repeatable); default: every dialect.",
)


def selected_scenarios(
    paths: Sequence[Path],
    select: str | None,
    profiles: Sequence[str] = (),
    generated: Sequence[Scenario] = (),
    dialects: Sequence[DialectId] = (),
) -> list[Scenario]:
    """The fixtures below ``paths`` (the bundled corpus when none) plus ``generated``,
    filtered by id, profile and dialect; a malformed fixture exits 2 with one line per
    problem."""
    scenarios = [*fixtures_or_exit(paths or (bundled_fixtures(),)), *generated]
    chosen = [
        s
        for s in scenarios
        if (select is None or select in s.id)
        and (not profiles or set(profiles) & set(s.profiles))
        and (not dialects or s.dialect in dialects)
    ]
    if not chosen:
        known = sorted({profile for s in scenarios for profile in s.profiles})
        hint = f" (profiles in these fixtures: {', '.join(known)})" if profiles else ""
        raise click.UsageError(f"no case selected{hint}")
    return chosen


def read_results(path: Path) -> RunResult:
    """A saved results file (``--json``, a matrix column); any problem exits 2 with one line."""
    try:
        document = read_document(path, "the results file")
        schema = document.get("schema") if isinstance(document, dict) else None
        if schema != RESULTS_SCHEMA:
            raise InputError(f"{path}: not a streamconform results file (schema {schema!r})")
        return validated(RunResult, document, path, RESULTS_SCHEMA)
    except SavedFileError as error:
        raise InputError(str(error)) from None
