"""``conformance run``: the suite against one adapter, a summary, results and reports."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Literal

import click
from rich.console import Console

from fakeprovider.scenario import Scenario

from ..adapters.base import AdapterLoadError, AdapterSession
from ..adapters.loading import adapter_invocation, open_session
from ..options import DEFAULT_POLICY, RetryPolicyError, RunOptions
from ..report import compare_baseline, format_baseline
from ..results import CaseResult, RunResult
from ..run.runner import run_suite
from ..verdicts import Contract
from .console import print_summary, transient_progress
from .generate import generated_cases
from .options import (
    contract_option,
    fixtures_option,
    json_option,
    read_results,
    report_option,
    select_option,
    selected_scenarios,
    strict_option,
    timeout_options,
    write_outputs,
)


@click.command()
@click.option("--adapter", "adapter_target", help="Python adapter: module:factory.")
@click.option("--adapter-cmd", help="Subprocess adapter command (JSON Lines protocol).")
@fixtures_option
@select_option
@click.option(
    "--profile",
    "profiles",
    multiple=True,
    help="Only fixtures of this provider profile, e.g. dashscope, ollama (repeatable).",
)
@json_option
@report_option
@strict_option
@contract_option
@click.option(
    "--baseline",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Earlier results.json: fail only on verdicts that got worse.",
)
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
def run(
    adapter_target: str | None,
    adapter_cmd: str | None,
    fixture_paths: tuple[Path, ...],
    select: str | None,
    profiles: tuple[str, ...],
    json_path: Path | None,
    report_dir: Path | None,
    strict: bool,
    contract: Contract,
    baseline: Path | None,
    transport: Literal["loopback", "in-process"],
    idle_timeout: float,
    timeout: float,
    generate: int,
    seed: int | None,
) -> None:
    """Run the cases against an adapter (the bundled reference adapter by default).

    Exits 0 only when no verdict is a failure (with --baseline: none got worse).
    """
    if adapter_target and adapter_cmd:
        raise click.UsageError("give --adapter or --adapter-cmd, not both")
    generated, seed = generated_cases(generate, seed) if generate else ([], seed)
    scenarios = selected_scenarios(fixture_paths, select, profiles, generated)
    options = RunOptions(
        policy=DEFAULT_POLICY,
        idle_timeout_s=idle_timeout,
        timeout_s=timeout,
        strict=strict,
        contract=contract,
        transport=transport,
    )
    try:  # the runner checks every case's retry_policy before the first case
        result = asyncio.run(_run(adapter_target, adapter_cmd, scenarios, options))
    except RetryPolicyError as error:
        raise click.ClickException(str(error)) from None
    if generate:
        result.options |= {"generated": generate, "seed": seed}
    console = Console()
    print_summary(console, result)
    write_outputs(console, result, json_path, report_dir)
    if baseline is not None:
        diff = compare_baseline(result, read_results(baseline))
        console.print(format_baseline(diff), markup=False, highlight=False)
        sys.exit(1 if diff.failed else 0)
    sys.exit(1 if result.failed else 0)


async def _run(
    target: str | None, command: str | None, scenarios: list[Scenario], options: RunOptions
) -> RunResult:
    session = await _open_session(target, command, options)
    try:
        with transient_progress("{task.fields[case]}") as progress:
            task = progress.add_task(session.hello.name, total=len(scenarios), case="")

            def advance(case: CaseResult) -> None:
                progress.update(task, advance=1, case=case.case)

            return await run_suite(
                session,
                scenarios,
                options,
                on_case=advance,
                invocation=adapter_invocation(target, command),
            )
    finally:
        await session.close()


async def _open_session(
    target: str | None, command: str | None, options: RunOptions
) -> AdapterSession:
    if target and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a project-local adapter module, as pytest finds it
    try:
        return await open_session(target, command, options)
    except AdapterLoadError as error:
        raise click.ClickException(str(error)) from None
