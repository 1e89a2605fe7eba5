"""``conformance matrix``: real libraries over the corpus, side by side.

``conformance matrix`` runs every shim whose library is importable here and renders the
page; ``matrix column NAME`` runs one shim (each tox environment of ``tox -m matrix`` runs
its own, since the libraries cannot share one environment); ``matrix render DIR`` builds
``DIR/index.html`` and ``reports/compatibility.md`` from the columns saved in DIR.

A column runs the cases of the dialects its shim's hello declares (an Anthropic client's, the
``anthropic-messages`` fixtures; any other, the chat corpus). It is four saved results: the
corpus with the library's retries off, run once and
judged under each contract (``NAME.harness.json``, ``NAME.interop.json``: the same observed
behaviour), and its retry column, the ``retry-profile`` fixtures with the library's own
retry layer on (its shim declares the policy), judged for R under each contract
(``NAME.retry.harness.json``, ``NAME.retry.interop.json``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import click

from fakeprovider.files import write_atomic
from fakeprovider.interrupts import Interruption
from fakeprovider.scenario import Scenario
from fakeprovider.stopping import exit_interrupted, stops_on_signals, written

from ..adapters.base import AdapterLoadError
from ..adapters.thirdparty import SHIMS, NodeShim, Shim
from ..adapters.thirdparty.common import NATIVE_RETRY
from ..options import RunOptions
from ..report import MatrixTable, render_matrix, write_reports
from ..report.compatibility import (
    GAPS_NOTE,
    GAPS_TITLE,
    LOST_NOTE,
    LOST_TITLE,
    RETRY_PROFILE_TAG,
    RETRY_TITLE,
    TODO_NOTE,
    TODO_TITLE,
    Column,
    gaps_table,
    lost_table,
    render_compatibility,
    todo_table,
)
from ..report.retry_layers import retry_sections
from ..report.upstream import CausesError, known_causes
from ..results import RunResult
from ..run.runner import run_judged
from ..verdicts import CONTRACTS, Contract
from .console import terminal
from .options import (
    InputError,
    SetupError,
    fixtures_option,
    jobs_option,
    read_results,
    selected_scenarios,
)

DEFAULT_OUT = Path("reports/matrix")
DEFAULT_SUMMARY = Path("reports/compatibility.md")
CONTENT_OPTIONS = RunOptions(timeout_s=15.0)
# The library's own backoff decides the waits here (haystack needs about 14 s for a 429).
RETRY_OPTIONS = RunOptions(timeout_s=40.0, extra={NATIVE_RETRY: True})


def contract_suffix(contract: Contract) -> str:
    """How a column's corpus run judged under ``contract`` is saved: ``NAME.<contract>.json``."""
    return f".{contract}.json"


def retry_suffix(contract: Contract) -> str:
    """How its retry column judged under ``contract`` is saved: ``NAME.retry.<contract>.json``."""
    return f".retry{contract_suffix(contract)}"


@click.group("matrix", invoke_without_command=True)
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=DEFAULT_OUT)
@click.option("--summary", type=click.Path(path_type=Path), default=DEFAULT_SUMMARY)
@fixtures_option
@jobs_option()
@click.pass_context
@stops_on_signals
def matrix(
    ctx: click.Context,
    out_dir: Path,
    summary: Path,
    fixture_paths: tuple[Path, ...],
    jobs: int,
    interruption: Interruption,
) -> None:
    """Run every installed third-party shim over the corpus and render the matrix.

    SIGINT or SIGTERM stops it in a column (as `matrix column`), nothing rendered."""
    if ctx.invoked_subcommand is not None:
        return
    installed = [shim for shim in SHIMS.values() if shim.installed]
    if not installed:
        raise SetupError(
            "no shim's library is installed here; run `tox -m matrix`, or: "
            + "; ".join(sorted({s.setup for s in SHIMS.values()}))
        )
    scenarios = corpus_scenarios(fixture_paths)
    for shim in installed:
        _run_column(shim, scenarios, out_dir, jobs, interruption)
    _render(out_dir, summary, _corpus_label(fixture_paths))


def corpus_scenarios(fixture_paths: tuple[Path, ...]) -> list[Scenario]:
    """The corpus's cases of every dialect: each column runs those its shim speaks."""
    return selected_scenarios(fixture_paths, None)


@matrix.command("column")
@click.argument("name", type=click.Choice(sorted(SHIMS)))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=DEFAULT_OUT)
@fixtures_option
@jobs_option()
@stops_on_signals
def column(
    name: str, out_dir: Path, fixture_paths: tuple[Path, ...], jobs: int, interruption: Interruption
) -> None:
    """Run one shim: its corpus column and its native retry profile.

    SIGINT or SIGTERM stops it: the column's cases that ended are saved, marked
    interrupted, the retry profile not run; it exits 130 or 143."""
    shim = SHIMS[name]
    if not shim.installed:
        raise SetupError(f"{shim.name}: its library is not installed here ({shim.setup})")
    _run_column(shim, corpus_scenarios(fixture_paths), out_dir, jobs, interruption)


@matrix.command("render")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--summary", type=click.Path(path_type=Path), default=DEFAULT_SUMMARY)
def render(directory: Path, summary: Path) -> None:
    """Render DIR/index.html and the compatibility summary from saved columns."""
    _render(directory, summary, "the bundled fixture corpus")


def _corpus_label(paths: Sequence[Path]) -> str:
    return ", ".join(f"`{p}`" for p in paths) if paths else "the bundled fixture corpus"


def _run_column(
    shim: Shim | NodeShim,
    scenarios: Sequence[Scenario],
    out_dir: Path,
    jobs: int,
    interruption: Interruption,
) -> None:
    """Run and save one column; a signal ends the command once what ran is saved."""
    with interruption.deferred():  # a signal stops the cases: what ended is still saved
        saved = _save_column(shim, scenarios, out_dir, jobs, interruption)
    if interruption.signal is not None:
        stopped = saved[-1][1]  # the corpus's run, or the retry profile's after it
        cases = stopped.interrupted.progress(len(stopped.cases)) if stopped.interrupted else ""
        progress = f"{cases} in the column {shim.name}".strip()
        exit_interrupted(interruption.signal, written([path for path, _ in saved]), progress)


def _save_column(
    shim: Shim | NodeShim,
    scenarios: Sequence[Scenario],
    out_dir: Path,
    jobs: int,
    interruption: Interruption,
) -> list[tuple[Path, RunResult]]:
    """The column's results, each saved (the corpus's, then the retry profile's)."""
    console = terminal(stderr=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    profile = [s for s in scenarios if RETRY_PROFILE_TAG in s.tags]
    contracts = " and ".join(CONTRACTS)
    console.print(f"{shim.name}: the corpus in its dialects, judged under {contracts}")
    judged = asyncio.run(_run(shim, scenarios, CONTENT_OPTIONS, CONTRACTS, jobs, interruption))
    saved = {contract_suffix(contract): judged[contract] for contract in CONTRACTS}
    if profile and interruption.signal is None:
        console.print(f"{shim.name}: the retry profile with its own retry layer")
        retries = asyncio.run(_run(shim, profile, RETRY_OPTIONS, CONTRACTS, jobs, interruption))
        saved |= {retry_suffix(contract): retries[contract] for contract in CONTRACTS}
    paths = []
    for suffix, result in saved.items():
        result.options["matrix"] = {
            "column": shim.name,
            "title": shim.title,
            "versions": shim.versions(),
        }
        path = out_dir / f"{shim.name}{suffix}"
        write_atomic(path, result.to_json())
        console.print(f"{shim.name}: {path}")
        paths.append((path, result))
    return paths


async def _run(
    shim: Shim | NodeShim,
    scenarios: Sequence[Scenario],
    options: RunOptions,
    contracts: Sequence[Contract],
    jobs: int,
    interruption: Interruption | None = None,
) -> dict[Contract, RunResult]:
    try:
        session = await shim.open(options)
    except AdapterLoadError as error:
        raise SetupError(str(error)) from None
    spoken = session.hello.spoken_dialects
    try:
        return await run_judged(
            session,
            [s for s in scenarios if s.dialect in spoken],
            options,
            contracts,
            invocation=shim.invocation(options),
            jobs=jobs,
            interruption=interruption,
        )
    finally:
        await session.close()


def load_columns(directory: Path) -> list[Column]:
    """The columns saved in ``directory``, in the order of the shim registry."""
    order = list(SHIMS)
    columns = []
    for path in sorted(directory.glob(f"*{contract_suffix('harness')}")):
        if path.name.endswith(retry_suffix("harness")):
            continue
        stem = path.name.removesuffix(contract_suffix("harness"))
        result = _read(path)
        meta = result.options.get("matrix", {})
        name = str(meta.get("column", stem))
        measured = (directory / f"{stem}{retry_suffix('harness')}").exists()
        columns.append(
            Column(
                name=name,
                title=str(meta.get("title", result.adapter.get("name", name))),
                versions=dict(meta.get("versions", {})),
                result=result,
                interop=_read(directory / f"{stem}{contract_suffix('interop')}"),
                retries={
                    contract: _read(directory / f"{stem}{retry_suffix(contract)}")
                    for contract in CONTRACTS
                    if measured
                },
            )
        )
    return sorted(columns, key=lambda c: order.index(c.name) if c.name in order else len(order))


def _read(path: Path) -> RunResult:
    if not path.exists():
        raise InputError(f"{path}: missing (run `conformance matrix column`)")
    return read_results(path)


def _render(directory: Path, summary: Path, corpus: str) -> None:
    columns = load_columns(directory)
    if not columns:
        raise InputError(f"{directory}: no saved column (run `conformance matrix column`)")
    try:
        known_causes()  # the to-do's data: a malformed file is an input error, no traceback
    except CausesError as error:
        raise InputError(str(error)) from None
    runs = [
        (column.judged(contract), _report(column, contract))
        for column in columns
        for contract in CONTRACTS
    ]
    for result, link in runs:
        write_reports(result, directory / link.removesuffix("/index.html"))
    tables = [
        MatrixTable(TODO_TITLE, TODO_NOTE, *todo_table(columns)),
        MatrixTable(LOST_TITLE, LOST_NOTE, *lost_table(columns)),
        MatrixTable(GAPS_TITLE, GAPS_NOTE, *gaps_table(columns)),
    ]
    retries = retry_sections(columns)
    tables += [
        MatrixTable(f"{RETRY_TITLE}: {section.title}", section.note, *section.table)
        for section in retries
        if section.table[1]
    ]
    page = directory / "index.html"
    write_atomic(page, render_matrix(runs, sections=tables))
    summary.parent.mkdir(parents=True, exist_ok=True)
    page_text = render_compatibility(columns, fixtures=corpus, retry_sections=retries)
    write_atomic(summary, page_text)
    console = terminal()
    console.print(f"matrix: {page}")
    console.print(f"summary: {summary}")


def _report(column: Column, contract: Contract) -> str:
    """Where a column's report under ``contract`` goes, relative to the matrix page."""
    return (
        f"{column.name}/index.html"
        if contract == "harness"
        else f"{column.name}/{contract}/index.html"
    )
