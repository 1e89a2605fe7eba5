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
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import click

from fakeprovider.files import write_atomic
from fakeprovider.interrupts import Interruption
from fakeprovider.scenario import Scenario
from fakeprovider.stopping import exit_interrupted, stops_on_signals, written

from ..adapters.base import AdapterLoadError, AdapterSession
from ..adapters.loading import adapter_invocation, open_session
from ..adapters.thirdparty import SHIMS
from ..adapters.thirdparty.common import NATIVE_RETRY
from ..events import Hello
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
from ..report.gateway_findings import GATEWAYS_FOLDER, GatewayRun
from ..report.retry_layers import retry_sections
from ..report.site import DOCS_URL, SiteInputError, site_files, slug
from ..report.upstream import CausesError, known_causes
from ..results import RunResult
from ..run.runner import run_judged
from ..verdicts import CONTRACTS, Contract
from .console import terminal
from .options import (
    InputError,
    SetupError,
    adapter_cmd_option,
    adapter_target_option,
    fixtures_option,
    jobs_option,
    read_results,
    select_option,
    selected_scenarios,
)
from .outputs import Output, Writes, check_outputs

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
    check_outputs(Output("--out", out_dir, directory=True), Output("--summary", summary))
    installed = [shim for shim in SHIMS.values() if shim.installed]
    if not installed:
        raise SetupError(
            "no shim's library is installed here; run `tox -m matrix`, or: "
            + "; ".join(sorted({s.setup for s in SHIMS.values()}))
        )
    scenarios = corpus_scenarios(fixture_paths)
    writes = Writes()
    for shim in installed:
        _run_column(shim, scenarios, out_dir, jobs, interruption, writes)
    _render(out_dir, summary, _corpus_label(fixture_paths), writes, "--out")
    writes.exit(failed=False)


def corpus_scenarios(fixture_paths: tuple[Path, ...]) -> list[Scenario]:
    """The corpus's cases of every dialect: each column runs those its shim speaks."""
    return selected_scenarios(fixture_paths, None)


class ColumnSource(Protocol):
    """What a column runs: a third-party library's shim, or any adapter (``--adapter``)."""

    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    def versions(self) -> dict[str, str]: ...
    def invocation(self, options: RunOptions) -> str: ...
    async def open(self, options: RunOptions) -> AdapterSession: ...


@dataclass
class AdapterColumn:
    """A column of any adapter, named by the user: columns that need no library installed
    (another implementation, a fork, a version under test), side by side with the shims'."""

    name: str
    title: str
    target: str | None
    command: str | None
    hello: Hello | None = None  # its handshake, once opened: the column's versions

    def versions(self) -> dict[str, str]:
        return {} if self.hello is None else {self.hello.name: self.hello.version}

    def invocation(self, options: RunOptions) -> str:
        return adapter_invocation(self.target, self.command)

    async def open(self, options: RunOptions) -> AdapterSession:
        session = await open_session(self.target, self.command, options)
        self.hello = session.hello
        return session


@matrix.command("column")
@click.argument("name", required=False, type=click.Choice(sorted(SHIMS)))
@adapter_target_option
@adapter_cmd_option
@click.option("--name", "column_name", help="With --adapter or --adapter-cmd: the column's name.")
@click.option("--title", default="", help="With --adapter or --adapter-cmd: what it drives.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=DEFAULT_OUT)
@fixtures_option
@select_option
@jobs_option()
@stops_on_signals
def column(
    name: str | None,
    adapter_target: str | None,
    adapter_cmd: str | None,
    column_name: str | None,
    title: str,
    out_dir: Path,
    fixture_paths: tuple[Path, ...],
    select: str | None,
    jobs: int,
    interruption: Interruption,
) -> None:
    """Run one column: a shim NAME (its corpus column and its native retry profile), or
    any adapter given by --adapter or --adapter-cmd with --name (its corpus column).

    Each column is a unit of work of its own: columns run by separate processes or CI
    jobs are gathered by `matrix merge`. SIGINT or SIGTERM stops it: the column's cases
    that ended are saved, marked interrupted, the retry profile not run; it exits 130 or
    143."""
    check_outputs(Output("--out", out_dir, directory=True))
    source = _column_source(name, adapter_target, adapter_cmd, column_name, title)
    writes = Writes()
    scenarios = selected_scenarios(fixture_paths, select)
    _run_column(source, scenarios, out_dir, jobs, interruption, writes)
    writes.exit(failed=False)


def _column_source(
    name: str | None,
    target: str | None,
    command: str | None,
    column_name: str | None,
    title: str,
) -> ColumnSource:
    if bool(name) == bool(target or command):
        raise click.UsageError("give a shim NAME, or --adapter or --adapter-cmd with --name")
    if name is not None:
        shim = SHIMS[name]
        if not shim.installed:
            raise SetupError(f"{shim.name}: its library is not installed here ({shim.setup})")
        return shim
    if target and command:
        raise click.UsageError("give --adapter or --adapter-cmd, not both")
    if not column_name:
        raise click.UsageError("--adapter and --adapter-cmd need --name, the column's name")
    try:
        slug(column_name)
    except SiteInputError as error:
        raise click.BadParameter(str(error), param_hint="--name") from None
    return AdapterColumn(column_name, title or column_name, target, command)


@matrix.command("render")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--summary", type=click.Path(path_type=Path), default=DEFAULT_SUMMARY)
def render(directory: Path, summary: Path) -> None:
    """Render DIR/index.html and the compatibility summary from saved columns."""
    check_outputs(Output("DIRECTORY", directory, directory=True), Output("--summary", summary))
    writes = Writes()
    _render(directory, summary, "the bundled fixture corpus", writes, "DIRECTORY")
    writes.exit(failed=False)


@matrix.command("merge")
@click.argument(
    "directories",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=DEFAULT_OUT)
def merge(directories: tuple[Path, ...], out_dir: Path) -> None:
    """Gather the columns saved in DIRECTORIES (by separate processes, machines or CI jobs)
    into --out. Every file is read as results first; two different files of one name are an
    error (exit 2), the same file twice is not."""
    check_outputs(Output("--out", out_dir, directory=True))
    gathered: dict[str, tuple[Path, bytes]] = {}
    for directory in directories:
        for path in sorted(directory.glob("*.json")):
            read_results(path)  # a malformed or foreign file: one line, exit 2
            data = path.read_bytes()
            earlier = gathered.setdefault(path.name, (path, data))
            if earlier[1] != data:
                raise InputError(f"{earlier[0]} and {path}: two different columns of one name")
    if not gathered:
        raise InputError(f"no saved column in {', '.join(map(str, directories))}")
    writes = Writes()
    console = terminal()
    for name, (_, data) in gathered.items():
        target = out_dir / name
        with writes.writing("--out", target):
            write_atomic(target, data)
    console.print(f"merged {len(gathered)} files into {out_dir}", markup=False)
    writes.exit(failed=False)


@matrix.command("site")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out_dir", metavar="OUT", type=click.Path(path_type=Path))
@click.option(
    "--history",
    "history_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Columns of an earlier run (repeatable, oldest first): a history per library.",
)
@click.option(
    "--docs-url",
    default=DOCS_URL,
    show_default=True,
    help="Where the documentation's pages are: each failure links to its invariant there.",
)
def site(directory: Path, out_dir: Path, history_dirs: tuple[Path, ...], docs_url: str) -> None:
    """Build the results site from the columns saved in DIRECTORY: OUT/index.html (the
    libraries by dialect and contract), a page per library with its failures and their
    known causes, the full reports, SVG badges, and a history per library across the
    versions of --history. Self-contained files; the same columns give the same site."""
    check_outputs(Output("OUT", out_dir, directory=True))
    columns = _saved_columns(directory)
    try:
        files = site_files(columns, [_saved_columns(path) for path in history_dirs], docs_url)
    except SiteInputError as error:
        raise InputError(f"{directory}: {error}") from None
    writes = Writes()
    for name, text in files.items():
        target = out_dir / name
        with writes.writing("OUT", target):
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, text)
    terminal().print(f"site: {out_dir / 'index.html'} ({len(files)} files)", markup=False)
    writes.exit(failed=False)


def _saved_columns(directory: Path) -> list[Column]:
    columns = load_columns(directory)
    if not columns:
        raise InputError(f"{directory}: no saved column (run `conformance matrix column`)")
    try:
        known_causes()  # a malformed causes file is an input error, no traceback
    except CausesError as error:
        raise InputError(str(error)) from None
    return columns


def gateway_runs(directory: Path) -> list[GatewayRun]:
    """The gateway runs saved under ``directory/gateways/``, by gateway then direction;
    none when that folder is absent (no gateway judged yet)."""
    folder = directory / GATEWAYS_FOLDER
    if not folder.is_dir():
        return []
    runs = []
    for gateway in sorted(path for path in folder.iterdir() if path.is_dir()):
        found = [gateway / "results.json", *sorted(gateway.glob("*/results.json"))]
        runs += [GatewayRun(gateway.name, read_results(path)) for path in found if path.is_file()]
    return runs


def _corpus_label(paths: Sequence[Path]) -> str:
    return ", ".join(f"`{p}`" for p in paths) if paths else "the bundled fixture corpus"


def _run_column(
    shim: ColumnSource,
    scenarios: Sequence[Scenario],
    out_dir: Path,
    jobs: int,
    interruption: Interruption,
    writes: Writes,
) -> None:
    """Run and save one column; a signal ends the command once what ran is saved."""
    with interruption.deferred():  # a signal stops the cases: what ended is still saved
        saved = _save_column(shim, scenarios, out_dir, jobs, interruption, writes)
    if interruption.signal is not None:
        stopped = saved[-1][1]  # the corpus's run, or the retry profile's after it
        cases = stopped.interrupted.progress(len(stopped.cases)) if stopped.interrupted else ""
        progress = f"{cases} in the column {shim.name}".strip()
        exit_interrupted(interruption.signal, written([path for path, _ in saved]), progress)


def _save_column(
    shim: ColumnSource,
    scenarios: Sequence[Scenario],
    out_dir: Path,
    jobs: int,
    interruption: Interruption,
    writes: Writes,
) -> list[tuple[Path, RunResult]]:
    """The column's results, each saved (the corpus's, then the retry profile's)."""
    console = terminal(stderr=True)
    profile = [s for s in scenarios if RETRY_PROFILE_TAG in s.tags]
    contracts = " and ".join(CONTRACTS)
    console.print(f"{shim.name}: the corpus in its dialects, judged under {contracts}")
    judged = asyncio.run(_run(shim, scenarios, CONTENT_OPTIONS, CONTRACTS, jobs, interruption))
    saved = {contract_suffix(contract): judged[contract] for contract in CONTRACTS}
    if profile and interruption.signal is None and not isinstance(shim, AdapterColumn):
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
        with writes.writing("--out", path):
            write_atomic(path, result.to_json())
            console.print(f"{shim.name}: {path}")
            paths.append((path, result))
    return paths


async def _run(
    shim: ColumnSource,
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


def _render(
    directory: Path, summary: Path, corpus: str, writes: Writes, directory_option: str
) -> None:
    columns = _saved_columns(directory)
    runs = [
        (column.judged(contract), _report(column, contract))
        for column in columns
        for contract in CONTRACTS
    ]
    for result, link in runs:
        report_dir = directory / link.removesuffix("/index.html")
        with writes.writing(directory_option, report_dir):
            write_reports(result, report_dir)
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
    console = terminal()
    with writes.writing(directory_option, page):
        write_atomic(page, render_matrix(runs, sections=tables))
        console.print(f"matrix: {page}")
    page_text = render_compatibility(
        columns, fixtures=corpus, retry_sections=retries, gateways=gateway_runs(directory)
    )
    with writes.writing("--summary", summary):
        write_atomic(summary, page_text)
        console.print(f"summary: {summary}")


def _report(column: Column, contract: Contract) -> str:
    """Where a column's report under ``contract`` goes, relative to the matrix page."""
    return (
        f"{column.name}/index.html"
        if contract == "harness"
        else f"{column.name}/{contract}/index.html"
    )
