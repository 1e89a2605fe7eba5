"""``conformance run``: the suite against one adapter, a summary, results and reports."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

import click

from fakeprovider.dialects import DialectId
from fakeprovider.files import write_atomic
from fakeprovider.interrupts import Interruption
from fakeprovider.scenario import Scenario
from fakeprovider.stopping import exit_interrupted, stops_on_signals, written

from ..adapters.base import AdapterLoadError, AdapterSession
from ..adapters.loading import adapter_invocation, open_session
from ..options import DEFAULT_POLICY, RetryPolicyError, RunOptions
from ..report import Baseline, BaselineError, compare_baseline, fails_gate, read_baseline
from ..results import CaseResult, RunResult
from ..run.case_runner import in_process_capable
from ..run.runner import run_suite
from ..spec import SPEC
from ..verdicts import Contract
from .ci import summary_option, write_ci_files
from .console import controls_shown, print_summary, terminal, transient_progress
from .heap import setup_frozen
from .options import (
    InputError,
    SetupError,
    adapter_cmd_option,
    adapter_target_option,
    contract_option,
    dialect_option,
    fixtures_option,
    jobs_option,
    json_option,
    judging_spec,
    report_option,
    select_option,
    selected_scenarios,
    spec_option,
    strict_option,
    timeout_options,
)
from .outputs import Output, Writes, check_outputs, write_outputs


@click.command()
@adapter_target_option
@adapter_cmd_option
@fixtures_option
@select_option
@click.option(
    "--profile",
    "profiles",
    multiple=True,
    help="Only fixtures of this provider profile, e.g. dashscope, ollama (repeatable).",
)
@dialect_option
@json_option
@report_option
@strict_option
@contract_option
@spec_option
@click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    help="Earlier baseline or results JSON: fail only on verdicts that got worse "
    "or failures whose cause changed.",
)
@click.option(
    "--baseline-strict",
    is_flag=True,
    help="With --baseline: its stale entries (failures that now pass) fail the run too.",
)
@click.option(
    "--write-baseline",
    type=click.Path(path_type=Path),
    help="Write this run's verdicts and causes as a compact baseline (it may be the "
    "--baseline file: rewritten without its stale entries).",
)
@summary_option
@click.option(
    "--transport",
    type=click.Choice(["loopback", "in-process"]),
    default="loopback",
    show_default=True,
    help="How the adapter reaches the fake provider.",
)
@timeout_options(idle=1.0, case=15.0)
@click.option(
    "--generate",
    default=0,
    type=click.IntRange(min=0),
    help="Add N generated cases (conformance.strategies); -k selects among them too.",
)
@click.option("--seed", type=int, help="Seed of the generated cases (default: random).")
@jobs_option()
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="List every invariant, exercised or not, and every case's retries.",
)
@stops_on_signals
def run(
    adapter_target: str | None,
    adapter_cmd: str | None,
    fixture_paths: tuple[Path, ...],
    select: str | None,
    profiles: tuple[str, ...],
    dialects: tuple[DialectId, ...],
    json_path: Path | None,
    report_dir: Path | None,
    strict: bool,
    contract: Contract,
    spec: str | None,
    baseline: Path | None,
    baseline_strict: bool,
    write_baseline: Path | None,
    summary_path: Path | None,
    transport: Literal["loopback", "in-process"],
    idle_timeout: float,
    timeout: float,
    generate: int,
    seed: int | None,
    jobs: int,
    verbose: bool,
    interruption: Interruption,
) -> None:
    """Run the cases against an adapter (the bundled reference adapter by default).

    Exits 0 only when no verdict is a failure (with --baseline: none got worse and no
    failure changed its cause; with --baseline-strict also no baseline failure now passes).
    SIGINT or SIGTERM stops it: the results of the cases that ended are written, marked
    interrupted (the baseline is not rewritten), and it exits 130 or 143.
    """
    if adapter_target and adapter_cmd:
        raise click.UsageError("give --adapter or --adapter-cmd, not both")
    if baseline_strict and baseline is None:
        raise click.UsageError("--baseline-strict needs --baseline")
    check_outputs(
        Output("--json", json_path),
        Output("--report", report_dir, directory=True),
        Output("--write-baseline", write_baseline),
        Output("--summary", summary_path),
    )
    known = None if baseline is None else _read_baseline(baseline)
    spec = judging_spec(spec, contract, None if known is None else known.spec)
    generated: list[Scenario] = []
    if generate:
        from .generate import generated_cases  # Hypothesis loads only for generated cases

        generated, seed = generated_cases(generate, seed)
    scenarios = selected_scenarios(fixture_paths, select, profiles, generated, dialects)
    options = RunOptions(
        policy=DEFAULT_POLICY,
        idle_timeout_s=idle_timeout,
        timeout_s=timeout,
        strict=strict,
        contract=contract,
        spec=spec,
        transport=transport,
    )
    # From here on a signal stops the cases, not the command: what ran is still written.
    with interruption.deferred():
        try:  # the runner checks every case's retry_policy before the first case
            with setup_frozen():
                result = asyncio.run(
                    _run(adapter_target, adapter_cmd, scenarios, options, jobs, interruption)
                )
        except RetryPolicyError as error:
            raise InputError(str(error)) from None
        if generate:
            result.options |= {"generated": generate, "seed": seed}
        console = terminal()
        diff = None if known is None else compare_baseline(result, known, strict=baseline_strict)
        print_summary(console, result, diff, verbose=verbose)
        writes = Writes()
        write_outputs(console, result, json_path, report_dir, writes)
        with writes.writing("--summary", summary_path):  # and GitHub's step files
            write_ci_files(
                console,
                result,
                diff,
                summary_path=summary_path,
                fixtures=fixture_paths,
                json_path=json_path,
                report_dir=report_dir,
            )
        if write_baseline is not None and result.interrupted is None:
            with writes.writing("--write-baseline", write_baseline):
                write_atomic(write_baseline, Baseline.of(result).to_json())
                console.print(f"baseline: {write_baseline}", markup=False)
    if interruption.signal is not None:
        kept = written([json_path, report_dir, summary_path])
        if write_baseline is not None and result.interrupted is not None:
            kept += f" ({write_baseline} not rewritten)"
        progress = f"after {len(result.cases)} of {len(scenarios)} cases"
        exit_interrupted(interruption.signal, kept, progress)
    writes.exit(fails_gate(result, diff))


def _read_baseline(path: Path) -> Baseline:
    """The --baseline file, read before the run: a bad one exits 2 with one line."""
    try:
        known = read_baseline(path)
    except BaselineError as error:
        raise InputError(str(error)) from None
    if known.spec not in SPEC.versions:  # written by a later suite
        raise InputError(
            f"{path}: written under spec {known.spec}, which this suite does not know "
            f"(it knows {', '.join(SPEC.versions)})"
        )
    return known


async def _run(
    target: str | None,
    command: str | None,
    scenarios: list[Scenario],
    options: RunOptions,
    jobs: int,
    interruption: Interruption,
) -> RunResult:
    session = await _open_session(target, command, options)
    try:
        with transient_progress("{task.fields[case]}") as progress:
            task = progress.add_task(
                controls_shown(session.hello.name), total=len(scenarios), case=""
            )

            def advance(case: CaseResult) -> None:
                progress.update(task, advance=1, case=controls_shown(case.case))

            return await run_suite(
                session,
                scenarios,
                options,
                on_case=advance,
                invocation=adapter_invocation(target, command),
                jobs=jobs,
                interruption=interruption,
            )
    finally:
        await session.close()


async def _open_session(
    target: str | None, command: str | None, options: RunOptions
) -> AdapterSession:
    try:
        session = await open_session(target, command, options)
    except AdapterLoadError as error:
        raise SetupError(str(error)) from None
    if options.transport == "in-process" and not in_process_capable(session):
        await session.close()  # as fuzz and replay refuse it: a usage error, not failed cases
        invocation = adapter_invocation(target, command)
        raise click.UsageError(f"{invocation} cannot take an in-process http_client")
    return session
