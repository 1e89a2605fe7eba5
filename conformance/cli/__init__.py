"""``conformance``: run the suite against an adapter, list the catalogue."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Literal

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from fakeprovider.scenario import Scenario

from ..adapters.base import AdapterLoadError, AdapterSession
from ..adapters.loading import adapter_invocation, open_session
from ..invariants import CATALOGUE
from ..options import DEFAULT_POLICY, RunOptions, case_policy
from ..report import compare_baseline, format_baseline, render_matrix, write_reports
from ..results import CaseResult, RetryWait, RunResult
from ..run.kill_table import kill_table, render_kill_table
from ..run.runner import run_suite
from ..verdicts import ATTENTION, VERDICTS
from .gateway import COMMANDS as _GATEWAY_COMMANDS
from .generate import fuzz, generated_cases, replay
from .matrix import matrix
from .options import VERDICT_STYLE, fixtures_option, selected_scenarios
from .validate import validate


@click.group()
@click.version_option(package_name="streamconform")
def main() -> None:
    """Conformance suite for LLM streaming adapters."""


@main.command()
@click.option("--adapter", "adapter_target", help="Python adapter: module:factory.")
@click.option("--adapter-cmd", help="Subprocess adapter command (JSON Lines protocol).")
@fixtures_option
@click.option("-k", "select", default=None, help="Only cases whose id contains this text.")
@click.option(
    "--profile",
    "profiles",
    multiple=True,
    help="Only fixtures of this provider profile, e.g. dashscope, ollama (repeatable).",
)
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write results JSON.")
@click.option("--report", "report_dir", type=click.Path(path_type=Path), help="Write reports.")
@click.option("--strict", is_flag=True, help="Non-strict verdicts count as failures.")
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
@click.option("--idle-timeout", default=1.0, show_default=True, help="Seconds without a byte.")
@click.option("--timeout", default=15.0, show_default=True, help="Seconds per case.")
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
        transport=transport,
    )
    for scenario in scenarios:  # a case's retry_policy must merge into the run's
        try:
            case_policy(options.policy, scenario)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    result = asyncio.run(_run(adapter_target, adapter_cmd, scenarios, options))
    if generate:
        result.options |= {"generated": generate, "seed": seed}
    console = Console()
    print_summary(console, result)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(result.to_json(), encoding="utf-8")
        console.print(f"results: {json_path}")
    if report_dir is not None:
        _write_reports(console, result, report_dir)
    if baseline is not None:
        diff = compare_baseline(result, _read_results(baseline))
        console.print(format_baseline(diff), markup=False, highlight=False)
        sys.exit(1 if diff.failed else 0)
    sys.exit(1 if result.failed else 0)


async def _run(
    target: str | None, command: str | None, scenarios: list[Scenario], options: RunOptions
) -> RunResult:
    session = await _open_session(target, command, options)
    try:
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[case]}"),
            console=Console(stderr=True),
            transient=True,
        ) as progress:
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


def print_summary(console: Console, result: RunResult) -> None:
    hello = result.adapter
    console.print(f"[bold]{hello['name']}[/] {hello['version']} — {len(result.cases)} cases")
    table = Table("invariant", "level", *VERDICTS, title="verdicts per invariant")
    for invariant_id, counts in result.per_invariant().items():
        level = CATALOGUE[invariant_id].level if invariant_id in CATALOGUE else "?"
        cells = [f"[{VERDICT_STYLE[v]}]{counts[v]}[/]" if counts[v] else "·" for v in VERDICTS]
        table.add_row(invariant_id, level, *cells)
    console.print(table)
    _print_retries(console, result)
    failing = [case for case in result.cases if case.worst in ATTENTION]
    for case in failing:
        for invariant_id, verdict in case.verdicts.items():
            if verdict.verdict in ATTENTION:
                style = VERDICT_STYLE[verdict.verdict]
                console.print(
                    f"[{style}]{verdict.verdict}[/] {case.case} {invariant_id}: {verdict.reason}",
                    markup=True,
                    highlight=False,
                )
    totals = ", ".join(f"{count} {verdict}" for verdict, count in result.counts().items())
    console.print(f"[bold]{'FAILED' if result.failed else 'OK'}[/]: {totals}")


def _print_retries(console: Console, result: RunResult) -> None:
    """Each case with retries: the requests the provider saw, and every wait it measured
    beside the spec's bounds (before the R checkers' tolerances)."""
    cases = [case for case in result.cases if case.retry is not None]
    if not cases:
        return
    table = Table("case", "requests", "waits in ms: measured (expected)", title="retries")
    for case in cases:
        assert case.retry is not None
        seen, expected = case.retry.attempts_seen, case.retry.attempts_expected
        requests = str(seen) if seen == expected else f"{seen} (expected {expected})"
        waits = ", ".join(_wait_cell(wait) for wait in case.retry.waits) or "·"
        table.add_row(escape(case.case), requests, waits)
    console.print(table)


def _wait_cell(wait: RetryWait) -> str:
    measured = "?" if wait.measured_ms is None else f"{wait.measured_ms:.0f}"
    low, high = wait.expected_min_ms, wait.expected_max_ms
    if low is None or high is None:
        return measured
    return f"{measured} ({low:.0f})" if low == high else f"{measured} ({low:.0f}-{high:.0f})"


def _write_reports(console: Console, result: RunResult, out_dir: Path) -> None:
    written = write_reports(result, out_dir)
    for kind, path in written.items():
        console.print(f"{kind}: {path}")


def _read_results(path: Path) -> RunResult:
    try:
        return RunResult.from_json(path.read_bytes())
    except (OSError, ValueError) as error:
        raise click.ClickException(f"{path}: not a streamconform results file ({error})") from None


@main.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path))
def report(results: tuple[Path, ...], out_dir: Path) -> None:
    """Render saved results: one file gives its report, several a matrix of adapters."""
    loaded = [_read_results(path) for path in results]
    console = Console()
    if len(loaded) == 1:
        _write_reports(console, loaded[0], out_dir)
        return
    links: list[tuple[RunResult, str]] = []
    for number, result in enumerate(loaded, 1):
        name = f"{number:02d}-{_slug(str(result.adapter.get('name', 'adapter')))}"
        write_reports(result, out_dir / name)
        links.append((result, f"{name}/index.html"))
    matrix = out_dir / "index.html"
    matrix.write_text(render_matrix(links), encoding="utf-8")
    console.print(f"matrix: {matrix}")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:60] or "adapter"


@main.command()
@fixtures_option
@click.option("--mutant", "names", multiple=True, help="Only these mutants (repeatable).")
@click.option("--timeout", default=5.0, show_default=True, help="Seconds per case.")
def mutants(fixture_paths: tuple[Path, ...], names: tuple[str, ...], timeout: float) -> None:
    """Run every mutant of the reference adapter and print the kill table.

    Each mutant carries one realistic bug; it must be killed by the invariants it
    targets. Exits 1 if a mutant survives or is killed only by a timeout.
    """
    scenarios = selected_scenarios(fixture_paths, None)
    options = RunOptions(timeout_s=timeout, transport="in-process")
    rows = kill_table(scenarios, options, names=names or None, focus=True)
    Console().print(render_kill_table(rows))
    sys.exit(0 if all(row.killed and not row.timeout_only for row in rows) else 1)


@main.command("list")
def list_invariants() -> None:
    """Print the invariant catalogue."""
    table = Table("id", "level", "needs", "statement", "source", show_lines=False)
    for invariant in CATALOGUE.values():
        table.add_row(
            invariant.id,
            invariant.level,
            ", ".join(invariant.needs),
            invariant.statement,
            invariant.source,
        )
    Console().print(table)


for _command in _GATEWAY_COMMANDS:
    main.add_command(_command)


main.add_command(matrix)
main.add_command(fuzz)
main.add_command(replay)
main.add_command(validate)
