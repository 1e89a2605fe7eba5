"""pytest plugin: every case and each invariant it exercises becomes one test item.

Registered wherever streamconform is installed (``pytest11`` entry point), it stays inert
unless an adapter is named, on the command line or in the ini file::

    pytest --conformance-adapter=mypkg.adapter:factory          # a Python adapter
    pytest --conformance-adapter-cmd="node adapter.js"           # a subprocess adapter
    [pytest] conformance_adapter = mypkg.adapter:factory         # ini (pytest.ini, pyproject)

Inert means no items, no marker but ``conformance``, and no import of the suite.

Items are ``conformance::<case-id>::<invariant-id>``, marked ``conformance``, with the
invariant's family (``G``, ``C``, ``T``…) and its level (``MUST``, ``SHOULD``, ``INFO``). Select
them with ``-k`` / ``-m`` (``-k tool-late-id``, ``-m "T and MUST"``, ``-m "not conformance"``);
they have no file, so a node id cannot be given as a positional argument.

Collection runs no adapter: a case's items are the invariants its run is judged on when the
adapter conforms, found by feeding the oracle's expected outcome, reported as a conforming
adapter would, to every checker. A deviating adapter can exercise fewer (those items skip) or
more (each such verdict gets an item of its own, added next to its case's items when the suite
has run; under pytest-xdist it is only in ``conformance_result``).

The suite runs once per session, after collection and before the first test, over the cases
that kept an item through ``-k`` / ``-m`` / ``--deselect``; ``--collect-only`` runs nothing.
Under pytest-xdist (``-n auto``) every worker starts its own adapter and fake provider, the
items of one case go to one worker (with the default ``--dist load``), and a worker runs a
case when the first of its items comes up.
Each item then reports its case's verdict for its invariant:

==============  ===========================================================================
pass            passed
fail            failed: the invariant, the reason, expected vs observed, a replay command
non-strict      xfailed (tolerated; ``-rx`` lists the reasons); failed with
                ``--conformance-strict`` (and, as any xfail, with ``--runxfail``)
info            passed, the observation in a "conformance" report section (``-rP``)
n/a             skipped with the reason (the adapter does not declare a capability, or the
                case's dialect)
(no verdict)    skipped: this run did not exercise the invariant
==============  ===========================================================================

Judged items record ``conformance_verdict`` and ``conformance_reason`` as user properties
(``--junitxml`` writes them). An adapter that cannot be started is a usage error. The
session-scoped fixture ``conformance_result`` gives the :class:`RunResult` of the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, cast

import pytest

from .codes import ConformanceError  # imports only the stdlib: still cheap when inert

if TYPE_CHECKING:
    from pluggy import Result

    from fakeprovider.scenario import Scenario

    from .adapters.base import AdapterSession
    from .options import RunOptions
    from .results import CaseResult, InvariantVerdict, RunResult

Transport = Literal["loopback", "in-process"]
TRANSPORTS: Final[tuple[Transport, ...]] = ("loopback", "in-process")
Contract = Literal["harness", "interop"]  # conformance.verdicts', spelled here to stay lazy
CONTRACTS: Final[tuple[Contract, ...]] = ("harness", "interop")
ROOT_NAME: Final = "conformance"  # the first part of every item's node id
NOT_EXERCISED: Final = "not exercised in this run"
MAX_EVENT_LINES: Final = 40  # observed events quoted in a failure
MAX_LINE_CHARS: Final = 500  # per quoted event or expected attempt
STDERR_LINES: Final = 20
CLOSE_TIMEOUT_S: Final = 10.0  # closing the adapter session at the end of pytest

_T = TypeVar("_T")


class SuiteUnavailableError(ConformanceError):
    """The fixtures could not be loaded or the adapter could not be started."""


@dataclass(frozen=True)
class Settings:
    """What the session asked for; ``fixtures`` empty means the bundled corpus."""

    adapter: str | None
    adapter_cmd: str | None
    fixtures: tuple[Path, ...]
    strict: bool
    transport: Transport
    contract: Contract = "harness"
    spec: str = ""  # the spec revision judging ("": the latest)

    @property
    def adapter_label(self) -> str:
        return self.adapter or self.adapter_cmd or ""

    def options(self) -> RunOptions:
        from .options import RunOptions

        return RunOptions(
            strict=self.strict,
            transport=self.transport,
            contract=self.contract,
            spec=self.spec_version,
        )

    @property
    def spec_version(self) -> str:
        from .spec import LATEST_SPEC

        return self.spec or LATEST_SPEC

    def replay(self, case: str) -> str:
        """The ``conformance run`` command that replays one case outside pytest."""
        words = ["conformance", "run"]
        if self.adapter:
            words += ["--adapter", self.adapter]
        else:
            words += ["--adapter-cmd", self.adapter_cmd or ""]
        for path in self.fixtures:
            words += ["--fixtures", str(path)]
        if self.strict:
            words.append("--strict")
        if self.transport != "loopback":
            words += ["--transport", self.transport]
        if self.contract != "harness":
            words += ["--contract", self.contract]
        if self.spec:
            words += ["--spec", self.spec]
        return shlex.join([*words, "-k", case])


# --- options -----------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streamconform", "streamconform conformance suite")
    group.addoption(
        "--conformance-adapter",
        metavar="MODULE:FACTORY",
        help="Run the conformance suite against this Python adapter.",
    )
    group.addoption(
        "--conformance-adapter-cmd",
        metavar="COMMAND",
        help="Run the conformance suite against this subprocess adapter (JSON Lines).",
    )
    group.addoption(
        "--conformance-fixtures",
        action="append",
        metavar="PATH",
        help="Fixture file or directory (repeatable); default: the bundled corpus.",
    )
    group.addoption(
        "--conformance-strict",
        action="store_true",
        default=None,
        help="Non-strict verdicts fail instead of xfail.",
    )
    group.addoption(
        "--conformance-contract",
        choices=CONTRACTS,
        help="harness (default): the notes' invariants and the harness's own rules; "
        "interop: fail only where the adapter loses, corrupts or invents what the provider "
        "sent, crashes or hangs.",
    )
    group.addoption(
        "--conformance-spec",
        metavar="VERSION",
        help="Judge by this revision of the spec (default: the latest): rules added after "
        'it are INFO, reported as "new since VERSION".',
    )
    group.addoption(
        "--conformance-transport",
        choices=TRANSPORTS,
        help="How the adapter reaches the fake provider (default: loopback).",
    )
    parser.addini("conformance_adapter", "Python adapter (module:factory).", default="")
    parser.addini("conformance_adapter_cmd", "Subprocess adapter command.", default="")
    parser.addini("conformance_fixtures", "Fixture files or directories.", type="paths")
    parser.addini("conformance_strict", "Non-strict verdicts fail.", type="bool", default=False)
    parser.addini("conformance_transport", "loopback or in-process.", default="")
    parser.addini("conformance_contract", "harness or interop.", default="")
    parser.addini("conformance_spec", "The spec revision judging, e.g. 1.1.", default="")


def read_settings(config: pytest.Config) -> Settings | None:
    """The session's settings; None when no adapter is named (the plugin stays inert).

    A command-line option wins over its ini key; the two adapter options go together.
    """
    adapter, command = _adapter_choice(config)
    if not adapter and not command:
        return None
    if adapter and command:
        raise pytest.UsageError("give --conformance-adapter or --conformance-adapter-cmd, not both")
    return Settings(
        adapter=adapter or None,
        adapter_cmd=command or None,
        fixtures=_fixture_paths(config),
        strict=bool(config.getoption("conformance_strict") or config.getini("conformance_strict")),
        transport=_transport(config),
        contract=(contract := _contract(config)),
        spec=_spec(config, contract),
    )


def _contract(config: pytest.Config) -> Contract:
    chosen = config.getoption("conformance_contract") or config.getini("conformance_contract")
    if chosen in ("", None):
        return "harness"
    if chosen not in CONTRACTS:
        raise pytest.UsageError(f"conformance_contract: {chosen!r}, not one of {CONTRACTS}")
    return cast(Contract, chosen)


def _spec(config: pytest.Config, contract: Contract) -> str:
    chosen = config.getoption("conformance_spec") or config.getini("conformance_spec")
    if not chosen:
        return ""
    from .spec import SPEC, UnknownSpecError

    try:
        SPEC.check_contract(SPEC.known(chosen), contract)
    except UnknownSpecError as error:
        raise pytest.UsageError(f"conformance_spec: {error}") from None
    return str(chosen)


def _adapter_choice(config: pytest.Config) -> tuple[str, str]:
    given = (
        config.getoption("conformance_adapter") or "",
        config.getoption("conformance_adapter_cmd") or "",
    )
    if any(given):
        return given
    return (
        str(config.getini("conformance_adapter")).strip(),
        str(config.getini("conformance_adapter_cmd")).strip(),
    )


def _fixture_paths(config: pytest.Config) -> tuple[Path, ...]:
    given: list[str] | None = config.getoption("conformance_fixtures")
    if given:
        return tuple(config.invocation_params.dir / path for path in given)
    return tuple(cast(list[Path], config.getini("conformance_fixtures")))


def _transport(config: pytest.Config) -> Transport:
    value = config.getoption("conformance_transport") or config.getini("conformance_transport")
    value = str(value).strip() or "loopback"
    if value not in TRANSPORTS:
        raise pytest.UsageError(f"conformance_transport: {value!r} is not one of {TRANSPORTS}")
    return value


# --- the session's run -------------------------------------------------------------------


class Suite:
    """The session's conformance run: scenarios loaded once, each case run at most once.

    The adapter session opens on first use and stays open until pytest unconfigures, on an
    event loop of its own (:class:`SuiteLoop`). A plain session runs every selected case in
    one batch before the first test; a pytest-xdist worker runs each case when the first of
    its items comes up, since the controller hands it items one group (one case) at a time.
    """

    def __init__(self, settings: Settings, *, per_case: bool = False) -> None:
        self.settings = settings
        self.per_case = per_case
        self._scenarios: list[Scenario] | None = None
        self._runs: list[RunResult] = []
        self._done: dict[str, CaseResult] = {}
        self._error: str | None = None
        self._loop: SuiteLoop | None = None
        self._session: AdapterSession | None = None

    def scenarios(self) -> list[Scenario]:
        if self._scenarios is None:
            self._scenarios = _load_scenarios(self.settings.fixtures)
        return self._scenarios

    @property
    def has_run(self) -> bool:
        return bool(self._runs) or self._error is not None

    def result(self, session: pytest.Session) -> RunResult:
        """The run over the selected cases (all cases when none is selected)."""
        chosen = {item.case for item in selected_items(session)}
        wanted = [s for s in self.scenarios() if not chosen or s.id in chosen]
        self._run(wanted)
        first, last = self._runs[0], self._runs[-1]
        cases = [self._done[s.id] for s in wanted]
        return first.model_copy(update={"finished_at": last.finished_at, "cases": cases})

    def case_result(self, session: pytest.Session, case: str) -> CaseResult:
        if self.per_case:
            self._run([s for s in self.scenarios() if s.id == case])
        else:
            self.result(session)
        found = self._done.get(case)
        if found is None:
            raise SuiteUnavailableError(f"case {case} was not part of this session's run")
        return found

    def _run(self, scenarios: list[Scenario]) -> None:
        """Run those of ``scenarios`` that have not run yet; an adapter that cannot start
        is remembered, so every later item reports the same error without retrying."""
        if self._error is not None:
            raise SuiteUnavailableError(self._error)
        missing = [s for s in scenarios if s.id not in self._done]
        if not missing:
            return
        if self._loop is None:
            self._loop = SuiteLoop()
        try:
            run = self._loop.run(self._drive(missing))
        except SuiteUnavailableError as error:
            self._error = str(error)
            raise
        self._runs.append(run)
        self._done.update((case.case, case) for case in run.cases)

    async def _drive(self, scenarios: list[Scenario]) -> RunResult:
        from .adapters.loading import adapter_invocation
        from .run.runner import run_suite

        if self._session is None:
            self._session = await _open(self.settings, self.settings.options())
        invocation = adapter_invocation(self.settings.adapter, self.settings.adapter_cmd)
        options = self.settings.options()
        return await run_suite(self._session, scenarios, options, invocation=invocation)

    def check_adapter(self) -> None:
        """Start the adapter and close it again: SuiteUnavailableError if it cannot start."""
        self._loop = SuiteLoop()
        try:
            self._session = self._loop.run(_open(self.settings, self.settings.options()))
        finally:
            self.close()

    def close(self) -> None:
        """Close the adapter session and stop the loop; a stuck adapter is left to die
        with the interpreter rather than hold pytest's exit."""
        if self._loop is None:
            return
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(Exception):
                self._loop.run(session.close(), timeout=CLOSE_TIMEOUT_S)
        self._loop.stop()
        self._loop = None


_SUITE: Final = pytest.StashKey[Suite]()


def _suite(config: pytest.Config) -> Suite:
    """The active session's suite (only active sessions have conformance nodes)."""
    return config.stash[_SUITE]


def _load_scenarios(paths: tuple[Path, ...]) -> list[Scenario]:
    from fakeprovider.fixtures import FixtureError, load_fixtures

    from .options import bundled_fixtures

    roots = paths or (bundled_fixtures(),)
    try:
        scenarios = load_fixtures(roots)
    except FixtureError as error:
        raise SuiteUnavailableError(f"fixtures could not be loaded:\n{error}") from None
    if not scenarios:
        raise SuiteUnavailableError(f"no fixtures under {', '.join(map(str, roots))}")
    return scenarios


async def _open(settings: Settings, options: RunOptions) -> AdapterSession:
    from .adapters.base import AdapterLoadError
    from .adapters.loading import open_session

    try:
        return await open_session(settings.adapter, settings.adapter_cmd, options)
    except AdapterLoadError as error:
        raise SuiteUnavailableError(str(error)) from None


class SuiteLoop:
    """An event loop on a daemon thread, where the adapter session lives.

    The calling thread may run a loop of its own (an async test framework), and a stuck
    adapter must not keep the interpreter alive after an interrupt.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="streamconform-suite", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    def run(self, work: Coroutine[Any, Any, _T], *, timeout: float | None = None) -> _T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(timeout)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(CLOSE_TIMEOUT_S)


def selected_items(session: pytest.Session) -> list[ConformanceItem]:
    """The conformance items left after deselection, in run order."""
    return [item for item in session.items if isinstance(item, ConformanceItem)]


# --- hooks -------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance: a streamconform case-and-invariant item")
    settings = read_settings(config)
    if settings is None:
        return
    from .invariants import CATALOGUE

    families = sorted({invariant.family for invariant in CATALOGUE.values()})
    judging = settings.contract, settings.spec_version
    levels = sorted({invariant.level_in(*judging) for invariant in CATALOGUE.values()})
    for family in families:
        config.addinivalue_line("markers", f"{family}: streamconform invariant family {family}")
    for level in levels:
        config.addinivalue_line("markers", f"{level}: streamconform invariants of level {level}")
    config.stash[_SUITE] = Suite(settings, per_case=hasattr(config, "workerinput"))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Under pytest-xdist the controller starts the adapter once, before any worker does: one
    that does not load is one usage error (exit 4), not an error of every item on every
    worker (exit 1). The workers run the cases, each with its own adapter, as before."""
    config = session.config
    if _SUITE not in config.stash or not config.pluginmanager.hasplugin("dsession"):
        return
    try:
        _suite(config).check_adapter()
    except SuiteUnavailableError as error:
        raise pytest.UsageError(f"streamconform: {error}") from None


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's default ``--dist load``, except that a case's items go to one worker.

    (``xdist_group`` marks would do, but pytest 9 ignores the node ids xdist rewrites.)
    """
    if _SUITE not in config.stash or config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class CaseScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist is untyped
        def _split_scope(self, nodeid: str) -> str:
            case, _, _ = nodeid.rpartition("::")
            return case if nodeid.startswith(f"{ROOT_NAME}::") else nodeid

    return CaseScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SUITE in config.stash:
        _suite(config).close()


def pytest_report_header(config: pytest.Config) -> str | None:
    if _SUITE not in config.stash:
        return None
    settings = _suite(config).settings
    fixtures = ", ".join(map(str, settings.fixtures)) or "bundled corpus"
    strict = ", strict" if settings.strict else ""
    return (
        f"streamconform: adapter {settings.adapter_label} "
        f"({settings.transport}, {settings.contract} contract, spec {settings.spec_version}"
        f"{strict}); "
        f"fixtures: {fixtures}"
    )


@pytest.hookimpl(hookwrapper=True)  # old style: works with every pluggy pytest 7+ brings
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Result[Any], None]:
    """Hang the ``conformance`` collector under the session, beside the user's tests."""
    outcome = yield
    if not isinstance(collector, pytest.Session) or _SUITE not in collector.config.stash:
        return
    report = outcome.get_result()
    if isinstance(report, pytest.CollectReport) and report.passed:
        suite = SuiteCollector.from_parent(collector, name=ROOT_NAME, nodeid=ROOT_NAME)
        report.result.append(suite)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Run the suite before the first test, so no single item carries its duration."""
    if _SUITE not in session.config.stash or not _will_run_tests(session):
        return
    suite = _suite(session.config)
    if suite.per_case or suite.has_run or not selected_items(session):
        return
    say = _announcer(session.config)
    result = _run_announced(session, suite, say)
    added = add_unpredicted_items(session, result)
    if added:
        say(f"streamconform: verdicts beyond the predicted items: {', '.join(added)}")


def _will_run_tests(session: pytest.Session) -> bool:
    option = session.config.option
    if option.collectonly:
        return False
    return not (session.testsfailed and not option.continue_on_collection_errors)


def _run_announced(session: pytest.Session, suite: Suite, say: Callable[[str], None]) -> RunResult:
    cases = len({item.case for item in selected_items(session)})
    say(f"streamconform: running {cases} case(s) against {suite.settings.adapter_label}")
    begun = time.monotonic()
    try:
        result = suite.result(session)
    except SuiteUnavailableError as error:
        raise pytest.UsageError(f"streamconform: {error}") from None
    totals = ", ".join(f"{n} {verdict}" for verdict, n in result.counts().items() if n)
    say(f"streamconform: {totals} in {time.monotonic() - begun:.1f}s")
    return result


def add_unpredicted_items(session: pytest.Session, result: RunResult) -> list[str]:
    """Give each verdict that has no item (the adapter took another path) an item of its own.

    It goes right after the last selected item of its case; returns the new node ids.
    """
    added: list[str] = []
    for case in result.cases:
        mine = [i for i, item in enumerate(session.items) if _is_item_of(item, case.case)]
        parent = session.items[mine[-1]].parent if mine else None
        if not isinstance(parent, CaseCollector):
            continue
        extra = [ConformanceItem.make(parent, name) for name in parent.unpredicted(case)]
        session.items[mine[-1] + 1 : mine[-1] + 1] = extra
        added += [item.nodeid for item in extra]
    session.testscollected += len(added)
    return added


def _is_item_of(item: pytest.Item, case: str) -> bool:
    return isinstance(item, ConformanceItem) and item.case == case


def _announcer(config: pytest.Config) -> Callable[[str], None]:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or config.option.verbose < 0:
        return lambda line: None
    return cast(pytest.TerminalReporter, reporter).write_line


@pytest.fixture(scope="session")
def conformance_result(request: pytest.FixtureRequest) -> RunResult:
    """The session's :class:`~conformance.results.RunResult`, for custom assertions.

    It covers the cases of the selected conformance items, or every case when none is
    selected. Skips when no adapter is configured.
    """
    if _SUITE not in request.config.stash:
        pytest.skip("streamconform: no --conformance-adapter or --conformance-adapter-cmd")
    try:
        return _suite(request.config).result(request.session)
    except SuiteUnavailableError as error:
        pytest.fail(f"streamconform: {error}", pytrace=False)


# --- collection --------------------------------------------------------------------------


class SuiteCollector(pytest.Collector):
    """``conformance``: one child per fixture case."""

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        try:
            scenarios = _suite(self.config).scenarios()
        except SuiteUnavailableError as error:
            raise self.CollectError(f"streamconform: {error}") from None
        return [CaseCollector.from_parent(self, name=s.id, scenario=s) for s in scenarios]


class CaseCollector(pytest.Collector):
    """``conformance::<case>``: one item per invariant the case exercises."""

    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.predicted: tuple[str, ...] = ()

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        options = _suite(self.config).settings.options()
        from .invariants.conforming import predicted_invariants

        self.predicted = tuple(predicted_invariants(self.scenario, options))
        return [ConformanceItem.make(self, name) for name in self.predicted]

    def unpredicted(self, case: CaseResult) -> list[str]:
        return [name for name in case.verdicts if name not in self.predicted]


class ConformanceItem(pytest.Item):
    """``conformance::<case>::<invariant>``: reports that case's verdict for that invariant."""

    def __init__(self, *, case: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.invariant = self.name
        self._case_result: CaseResult | None = None

    @classmethod
    def make(cls, parent: CaseCollector, invariant_id: str) -> ConformanceItem:
        from .invariants import CATALOGUE

        item = cls.from_parent(parent, name=invariant_id, case=parent.name)
        invariant = CATALOGUE.get(invariant_id)
        settings = _suite(parent.config).settings
        level = invariant.level_in(settings.contract, settings.spec_version) if invariant else ""
        markers = (invariant.family, level) if invariant else ()
        for marker in (ROOT_NAME, *markers):
            item.add_marker(marker)
        return item

    def setup(self) -> None:
        try:
            self._case_result = _suite(self.config).case_result(self.session, self.case)
        except SuiteUnavailableError as error:
            pytest.fail(f"streamconform: {error}", pytrace=False)

    def runtest(self) -> None:
        assert self._case_result is not None
        verdict = self._case_result.verdicts.get(self.invariant)
        if verdict is None:
            pytest.skip(NOT_EXERCISED)
        self.user_properties += [
            ("conformance_verdict", verdict.verdict),
            ("conformance_reason", verdict.reason),
        ]
        self._conclude(self._case_result, verdict)

    def _conclude(self, case: CaseResult, verdict: InvariantVerdict) -> None:
        if verdict.verdict == "fail":
            settings = _suite(self.config).settings
            pytest.fail(failure_text(settings, case, self.invariant, verdict), pytrace=False)
        if verdict.verdict == "non-strict":
            pytest.xfail(f"non-strict: {verdict.reason} (--conformance-strict fails it)")
        if verdict.verdict == "n/a":
            pytest.skip(f"n/a: {verdict.reason}")
        if verdict.verdict == "info":
            observation = f"{self.invariant} (INFO) on {self.case}: {verdict.reason}"
            self.add_report_section("call", "conformance", observation)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.case}::{self.invariant}"


# --- failure text ------------------------------------------------------------------------


def failure_text(
    settings: Settings, case: CaseResult, invariant_id: str, verdict: InvariantVerdict
) -> str:
    """Invariant, reason, expected vs observed and a replay command, for a failed item."""
    from .invariants import CATALOGUE

    invariant = CATALOGUE.get(invariant_id)
    level = invariant.level_in(settings.contract, settings.spec_version) if invariant else "?"
    lines = [f"{invariant_id} ({level}) failed on case {case.case}: {verdict.reason}"]
    if invariant is not None:
        lines.append(f"  invariant: {invariant.statement}")
        lines.append(f"  why it matters: {invariant.rationale}")
    status = f"{case.status}: {case.detail}" if case.detail else case.status
    lines += [f"  case status: {status}", "  expected:"]
    lines += [f"    {_compact(attempt)}" for attempt in case.expected.get("attempts", [])]
    lines.append(f"  observed ({len(case.events)} events):")
    for event in case.events[:MAX_EVENT_LINES]:
        lines.append(f"    {_compact({k: v for k, v in event.items() if k != 'case'})}")
    if len(case.events) > MAX_EVENT_LINES:
        lines.append(f"    … {len(case.events) - MAX_EVENT_LINES} more")
    if case.stderr.strip():
        lines.append("  adapter stderr or traceback (tail):")
        lines += [f"    {line}" for line in case.stderr.strip().splitlines()[-STDERR_LINES:]]
    lines.append(f"  replay: {settings.replay(case.case)}")
    return "\n".join(lines)


def _compact(value: object) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"
