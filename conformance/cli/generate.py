"""``conformance fuzz`` and ``conformance replay``: generated cases, shrunk failures, replays.

``fuzz`` runs one property per invariant family (:mod:`conformance.run.properties`) and writes
each shrunk failure as a fixture (``--save-failures``); ``replay`` re-runs such a fixture
(or any) under the same conditions and prints every verdict. ``generated_cases`` serves
``conformance run --generate N``.
"""

from __future__ import annotations

import functools
import random
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import click
import hypothesis
from rich.console import Console
from rich.table import Table

from fakeprovider.dialects import DEFAULT_DIALECT, DIALECT_IDS, DialectId
from fakeprovider.files import write_atomic
from fakeprovider.fixtures import fixture_yaml
from fakeprovider.interrupts import Interruption
from fakeprovider.scenario import Scenario
from fakeprovider.stopping import exit_interrupted, stops_on_signals, written

from ..adapters.base import AdapterLoadError
from ..invariants import CATALOGUE
from ..options import RunOptions, Transport
from ..results import CaseResult
from ..run.case_runner import GENERATED_OPTIONS, CaseRunner
from ..run.family_pool import FamilyJob, check_families, check_job, fuzz_settings
from ..run.properties import (
    FamilyRun,
    PropertyFailureError,
    check_family,
    families,
    family_label,
    sample_cases,
)
from ..strategies.profiles import PROFILES
from ..verdicts import Contract, reading_order
from .console import VERDICT_STYLE, terminal, transient_progress, visible
from .heap import setup_frozen
from .options import (
    SetupError,
    adapter_cmd_option,
    adapter_target_option,
    contract_option,
    exit_judged,
    fixtures_or_exit,
    jobs_option,
    judging_spec,
    spec_option,
    strict_option,
)
from .outputs import Output, Writes, check_outputs

F = TypeVar("F", bound=Callable[..., Any])

_TRANSPORTS: dict[str, Transport | None] = {
    "auto": None,
    "in-process": "in-process",
    "loopback": "loopback",
}
_ADAPTER_OPTIONS = (
    adapter_target_option,
    adapter_cmd_option,
    click.option(
        "--transport",
        type=click.Choice(sorted(_TRANSPORTS)),
        default="auto",
        show_default=True,
        help="auto: in process for a Python adapter that takes an http_client.",
    ),
    strict_option,
    contract_option,
    spec_option,
)


def adapter_options(command: F) -> F:
    """The options that choose the adapter and how it reaches the provider."""
    for option in reversed(_ADAPTER_OPTIONS):
        command = option(command)
    return command


def generated_cases(count: int, seed: int | None) -> tuple[list[Scenario], int]:
    """``count`` generated cases and the seed that draws them (a random one if None)."""
    chosen = random.SystemRandom().randrange(2**32) if seed is None else seed
    return sample_cases(count, chosen), chosen


def _open_runner(
    stack: ExitStack,
    target: str | None,
    command: str | None,
    transport: str,
    strict: bool,
    contract: Contract,
    spec: str | None,
    interruption: Interruption | None = None,
) -> CaseRunner:
    if target and command:
        raise click.UsageError("give --adapter or --adapter-cmd, not both")
    spec = judging_spec(spec, contract)
    options = replace(GENERATED_OPTIONS, strict=strict, contract=contract, spec=spec)
    transport_wanted = _TRANSPORTS[transport]
    runner = CaseRunner(
        target, command, options, transport=transport_wanted, interruption=interruption
    )
    try:
        return stack.enter_context(runner)
    except AdapterLoadError as error:
        raise SetupError(str(error)) from None
    except ValueError as error:  # --transport in-process for an adapter that cannot
        raise click.UsageError(str(error)) from None


@click.command()
@adapter_options
@click.option(
    "--family",
    "chosen",
    multiple=True,
    help="Only this invariant family (repeatable): G, C, T, E, S, H…",
)
@click.option(
    "--dialect",
    "dialects",
    multiple=True,
    type=click.Choice(DIALECT_IDS),
    help="Cases of this wire (repeatable); default: chat-completions, as before dialects.",
)
@click.option(
    "--hypothesis-profile",
    "profile",
    type=click.Choice(sorted(PROFILES)),
    default="ci",
    show_default=True,
    help="Examples per family and randomness: ci (25, fixed), dev (200), thorough (2000).",
)
@click.option("--seed", type=int, help="Seed of the draws (default: 0 for ci, else random).")
@click.option("--max-examples", type=click.IntRange(min=1), help="Examples per family.")
@click.option(
    "--save-failures",
    type=click.Path(path_type=Path),
    help="Write each shrunk failure here as a fixture.",
)
@jobs_option(
    "Families checked at once, each in a worker process of its own (the slow ones first); "
    "the results are those of --jobs 1.",
    processes=True,
)
@stops_on_signals
def fuzz(
    adapter_target: str | None,
    adapter_cmd: str | None,
    transport: str,
    strict: bool,
    contract: Contract,
    spec: str | None,
    chosen: tuple[str, ...],
    dialects: tuple[DialectId, ...],
    profile: str,
    seed: int | None,
    max_examples: int | None,
    save_failures: Path | None,
    jobs: int,
    interruption: Interruption,
) -> None:
    """Generate adversarial streams per invariant family and dialect; shrink every failure.

    A family's cases speak chat-completions, or each dialect of --dialect: the same
    invariants judged on another wire (n/a for a dialect the adapter does not declare). A
    generated case fails on any failing verdict, headlined by the invariant that owns its
    root cause; non-strict verdicts fail only with --strict. Exits 0 when every family's
    property holds. SIGINT or SIGTERM stops it (workers and adapters too) after the families
    that ended, their failures saved; it exits 130 or 143.
    """
    check_outputs(Output("--save-failures", save_failures, directory=True))
    dialects = dialects or (DEFAULT_DIALECT,)
    known = {dialect: families(dialect) for dialect in dialects}
    listed = list(dict.fromkeys(family for found in known.values() for family in found))
    unknown = [family for family in chosen if family not in listed]
    if unknown:
        raise click.UsageError(f"no generated cases for {unknown}; families: {', '.join(listed)}")
    settings = fuzz_settings(profile, max_examples)
    if seed is None:
        seed = 0 if settings.derandomize else random.SystemRandom().randrange(2**32)
    console = terminal()
    runs: list[FamilyRun] = []
    selected: list[tuple[DialectId, str]] = []
    stopped: signal.Signals | None = None
    # A signal is heeded where a case or a family can stop (CaseRunner, check_families),
    # so that closing the session and the workers is never cut short.
    with interruption.deferred(), ExitStack() as stack:
        runner = _open_runner(
            stack, adapter_target, adapter_cmd, transport, strict, contract, spec, interruption
        )
        _line(
            console,
            f"[bold]{visible(runner.session.hello.name)}[/] over {runner.transport}; "
            f"--hypothesis-profile {profile} --seed {seed} --contract {contract} "
            f"--spec {runner.options.spec}",
        )
        spoken = runner.session.hello.spoken_dialects
        for dialect in dialects:
            if dialect not in spoken:  # n/a, as its cases are in a run: never a failure
                _line(console, f"n/a {dialect}: the adapter does not declare this dialect")
        selected += [
            (dialect, family)
            for dialect in dialects
            if dialect in spoken
            for family in known[dialect]
            if not chosen or family in chosen
        ]
        stack.enter_context(setup_frozen())
        if jobs == 1 or len(selected) == 1:
            checked = _checked_here(runner, selected, settings, seed)
        else:  # this process and workers, each with a session of its own
            options, transport_used = runner.options, runner.transport
            checked = _checked_in_workers(
                runner,
                [
                    FamilyJob(
                        family,
                        adapter_target,
                        adapter_cmd,
                        options,
                        transport_used,
                        profile,
                        max_examples,
                        seed,
                        dialect,
                    )
                    for dialect, family in selected
                ],
                jobs,
                interruption,
            )
        writes = Writes()
        try:
            _print_families(
                console, checked, runs, save_failures, writes, seed, profile, runner.invocation
            )
        except KeyboardInterrupt:  # a signal stopped a family: those that ended stand
            stopped = interruption.signal or signal.SIGINT
    console.print(_summary(runs))
    if stopped is not None:
        progress = f"after {len(runs)} of {len(selected)} families"
        exit_interrupted(stopped, written([save_failures]), progress)
    writes.exit(not all(run.passed for run in runs))


def _checked_here(
    runner: CaseRunner,
    chosen: Sequence[tuple[DialectId, str]],
    settings: hypothesis.settings,
    seed: int,
) -> Iterator[FamilyRun]:
    """Each family checked in this process, one after another, with a progress line."""
    for dialect, family in chosen:
        label = family_label(family, dialect)
        with _FamilyProgress(label, settings.max_examples) as progress:
            run = check_family(
                runner,
                family,
                settings=settings,
                seed=seed,
                on_example=progress.advance,
                dialect=dialect,
            )
        yield run


def _checked_in_workers(
    runner: CaseRunner,
    family_jobs: Sequence[FamilyJob],
    processes: int,
    interruption: Interruption,
) -> Iterator[FamilyRun]:
    """Each family checked in this process with ``runner`` or in a worker process, in family
    order as they are done."""
    check_here = functools.partial(check_job, runner)
    progress = transient_progress("families")
    task = progress.add_task(f"{processes} at once", total=len(family_jobs))
    try:
        with progress:
            for run in check_families(family_jobs, processes, check_here, interruption):
                progress.update(task, advance=1)
                yield run
    except AdapterLoadError as error:
        raise SetupError(str(error)) from None


def _print_families(
    console: Console,
    checked: Iterator[FamilyRun],
    runs: list[FamilyRun],
    save_failures: Path | None,
    writes: Writes,
    seed: int,
    profile: str,
    invocation: str,
) -> None:
    """Print each family's line as its run comes (into ``runs``), saving its failure if
    asked to."""
    for run in checked:
        runs.append(run)
        _print_family(console, run)
        if run.failure is not None and save_failures is not None:
            with writes.writing("--save-failures", save_failures):
                path = save_failure(run.failure, save_failures, seed, profile, invocation)
                _line(console, visible(f"  saved: {path}"))
                _line(console, visible(f"  replay: conformance replay {path} {invocation}"))


class _FamilyProgress:
    """A transient line on stderr while a family runs: examples so far, the last verdict."""

    def __init__(self, family: str, examples: int) -> None:
        self._progress = transient_progress("examples (shrinking counts too)")
        self._task = self._progress.add_task(family, total=examples)

    def __enter__(self) -> _FamilyProgress:
        self._progress.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._progress.stop()

    def advance(self, run: FamilyRun) -> None:
        self._progress.update(self._task, completed=run.examples)


def _line(console: Console, markup: str) -> None:
    """One line as is: never wrapped (reasons are grepped), no highlighting."""
    console.print(markup, highlight=False, soft_wrap=True)


def _print_family(console: Console, run: FamilyRun) -> None:
    exercised = ", ".join(f"{name} {count}" for name, count in sorted(run.exercised.items()))
    head = f"{run.label}: {run.examples} examples in {run.seconds:.1f} s"
    failure = run.failure
    if failure is None:
        _line(console, f"[green]ok[/] {head} (judged: {exercised or 'none'})")
        return
    flaky = " (flaky)" if run.flaky else ""
    size = f"{failure.size.events} events, {failure.size.bytes} bytes"
    _line(console, f"[bold red]FAILED[/] {head}{flaky}; shrunk to {size} ({failure.scenario.id})")
    for breach in failure.breaches:
        verdict = f"[{VERDICT_STYLE[breach.verdict]}]{breach.verdict}[/]"
        _line(console, f"  {verdict} {breach.invariant}: {visible(breach.reason)}")


def _summary(runs: list[FamilyRun]) -> Table:
    table = Table("family", "examples", "seconds", "result", "shrunk (events, bytes)")
    for run in runs:
        failure = run.failure
        table.add_row(
            run.label,
            str(run.examples),
            f"{run.seconds:.1f}",
            "[green]ok[/]" if failure is None else f"[red]{', '.join(failure.invariants)}[/]",
            "·" if failure is None else f"{failure.size.events}, {failure.size.bytes}",
        )
    return table


def save_failure(
    failure: PropertyFailureError, directory: Path, seed: int, profile: str, invocation: str
) -> Path:
    """Write the shrunk scenario as ``directory/<id>.yaml``, saying how it was found."""
    scenario = failed_fixture(failure, seed, profile, invocation)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{scenario.id}.yaml"
    write_atomic(path, fixture_yaml(scenario))
    return path


def failed_fixture(
    failure: PropertyFailureError, seed: int, profile: str, invocation: str
) -> Scenario:
    """The shrunk scenario with the invariant, the seed and the adapter in its provenance."""
    first = failure.breaches[0]
    scenario = failure.scenario
    dialect = "" if scenario.dialect == DEFAULT_DIALECT else f" --dialect {scenario.dialect}"
    notes = (
        f"Found by `conformance fuzz --family {failure.family}{dialect} --hypothesis-profile "
        f"{profile} --seed {seed} {invocation}`: {first.invariant} {first.verdict}: "
        f"{first.reason}. Shrunk by Hypothesis to {failure.size.events} events, "
        f"{failure.size.bytes} bytes."
    )
    provenance = scenario.provenance.model_copy(update={"notes": notes})
    label = family_label(failure.family, scenario.dialect)
    return scenario.model_copy(
        update={
            "title": f"Generated: {first.invariant} {first.verdict} ({label} family)",
            "provenance": provenance,
            "tags": (*scenario.tags, *failure.invariants),
        }
    )


@click.command()
@click.argument(
    "fixture_paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path)
)
@adapter_options
@jobs_option()
def replay(
    fixture_paths: tuple[Path, ...],
    adapter_target: str | None,
    adapter_cmd: str | None,
    transport: str,
    strict: bool,
    contract: Contract,
    spec: str | None,
    jobs: int,
) -> None:
    """Re-run fixtures, such as a saved failure of `conformance fuzz`; print every verdict.

    The cases run with the options generated cases run with. Exits 1 on a failing verdict.
    """
    scenarios = fixtures_or_exit(fixture_paths)
    if not scenarios:
        raise click.UsageError("no case selected")
    console = terminal()
    failed = False
    with ExitStack() as stack:
        runner = _open_runner(stack, adapter_target, adapter_cmd, transport, strict, contract, spec)
        for result in runner.run_all(scenarios, jobs):
            _print_verdicts(console, result, runner.options)
            failed = failed or result.worst == "fail"
    exit_judged(failed)


def _print_verdicts(console: Console, result: CaseResult, options: RunOptions) -> None:
    """One line per verdict, as `conformance run` prints failures."""
    ended = "" if result.status == "completed" else f" ({result.status}: {result.detail})"
    _line(console, f"[bold]{visible(result.case)}[/]{visible(ended)}")
    for name in sorted(result.verdicts, key=reading_order):
        verdict = result.verdicts[name]
        known = CATALOGUE.get(name)
        level = known.level_in(options.contract, options.spec) if known else "?"
        reason = f": {visible(verdict.reason)}" if verdict.reason else ""
        _line(
            console,
            f"  [{VERDICT_STYLE[verdict.verdict]}]{verdict.verdict}[/] {name} ({level}){reason}",
        )
