"""`conformance matrix render` and the compatibility summary, from saved columns.

The saved columns here are runs of mutants of the reference adapter, saved under library
names and judged under both contracts from one run: one doubles repeated names (meaning
lost), one hands back an empty stop as a success (a contract gap only). Their retry columns
are the reference running a policy of its own and declaring it, once truthfully, once with
one retry fewer. The constructed cases further down pin what the page says each interop
failure cost the caller.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conformance.adapters.base import PythonAdapterSession, load_python_adapter
from conformance.adapters.mutants import MUTANTS
from conformance.adapters.thirdparty.common import hello as hello_of
from conformance.cli import main
from conformance.cli.matrix import _run as run_column_cases
from conformance.cli.options import ExitCode
from conformance.events import Finish, ProtocolDialect, RunCase
from conformance.options import RunOptions, bundled_fixtures
from conformance.report.compatibility import (
    FINDINGS,
    JS_FINDINGS,
    Column,
    _md,
    check_findings,
    contract_gaps,
    meaning_lost,
    render_compatibility,
)
from conformance.report.upstream import known_causes
from conformance.results import CaseResult, InvariantVerdict, RunResult
from conformance.run.runner import run_judged
from conformance.verdicts import CONTRACTS, Contract, Cost
from fakeprovider.fixtures import load_fixtures

CASES = ("tool-name-repeated", "empty-stop-no-usage", "retry-field-only-event")
RETRY_CASES = ("http-429-forever", "reset-mid-stream-then-ok")
OPTIONS = RunOptions(transport="in-process")
# Column → the mutant saved under its name, and the adapter of its retry column.
SAVED = {"openai": "identity_concatenated", "litellm-hosted-vllm": "empty_stop_succeeds"}
RETRIES = {
    "openai": "conformance.adapters.reference:own_policy",
    "litellm-hosted-vllm": MUTANTS["declares_fewer_retries"].target,
}


def _judged(mutant: str, case_ids: tuple[str, ...]) -> dict[Contract, RunResult]:
    target = MUTANTS[mutant].target if mutant in MUTANTS else mutant
    corpus = {s.id: s for s in load_fixtures([bundled_fixtures()])}

    async def run() -> dict[Contract, RunResult]:
        session = load_python_adapter(target, OPTIONS)
        try:
            return await run_judged(session, [corpus[i] for i in case_ids], OPTIONS, CONTRACTS)
        finally:
            await session.close()

    return asyncio.run(run())


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("matrix")
    for name, mutant in SAVED.items():
        judged = _judged(mutant, CASES)
        results = {f".{contract}.json": judged[contract] for contract in CONTRACTS}
        retries = _judged(RETRIES[name], RETRY_CASES)
        results |= {f".retry.{contract}.json": retries[contract] for contract in CONTRACTS}
        for suffix, result in results.items():
            result.options["matrix"] = {"column": name, "title": "t", "versions": {"x": "1"}}
            (directory / f"{name}{suffix}").write_text(result.to_json())
    return directory


def test_render_refuses_a_malformed_causes_file_with_its_problem(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "causes").mkdir()
    entry = 'libraries = ["openai"]\ncases = ["x"]\ncause = "y"\nupstream = "https://a.b/c"\n'
    (tmp_path / "causes" / "openai.toml").write_text(f"[[causes]]\n{entry}")
    monkeypatch.setattr("conformance.report.upstream.bundled_fixtures", lambda: tmp_path)
    known_causes.cache_clear()
    try:
        args = ["matrix", "render", str(saved), "--summary", str(saved / "refused.md")]
        done = CliRunner().invoke(main, args)
    finally:
        known_causes.cache_clear()  # the bundled causes again, for the next test
    assert done.exit_code == 2, done.output
    assert f"{tmp_path / 'causes' / 'openai.toml'}: causes[0].upstream: not a GitHub" in done.output


def test_one_run_is_judged_under_each_contract() -> None:
    judged = _judged("empty_stop_succeeds", ("empty-stop-no-usage",))
    assert [result.contract for result in judged.values()] == list(CONTRACTS)
    harness, interop = (judged[contract].cases[0] for contract in CONTRACTS)
    assert harness.events == interop.events  # the same observed behaviour
    assert harness.verdicts["E1"].verdict == "fail"
    assert interop.verdicts["E1"].verdict == "info"


def test_render_writes_the_matrix_page_and_the_summary(saved: Path) -> None:
    summary = saved / "compatibility.md"
    done = CliRunner().invoke(main, ["matrix", "render", str(saved), "--summary", str(summary)])
    assert done.exit_code == 0, done.output
    page = (saved / "index.html").read_text()
    for section in ("Meaning lost (interop contract)", "Contract gaps (harness contract only)"):
        assert section in page
    # The maintainer's to-do comes first, as in the summary: openai's one lost case.
    todo = page.split("Maintainer&#39;s to-do (interop contract)")[1].split("Meaning lost")[0]
    assert "tool-name-repeated" in todo and "litellm-hosted-vllm" not in todo
    assert "Retry layers (R judged): R verdicts" in page and "http-429-forever" in page
    assert "interop contract" in page and "harness contract" in page  # the column headers
    assert "interop INFO" in page  # E1's level under the other contract, beside MUST
    assert (saved / "openai" / "index.html").exists()
    assert (saved / "openai" / "interop" / "index.html").exists()
    text = summary.read_text()
    assert text.startswith("# Compatibility of real libraries")
    assert "| openai | t | x 1 | 3 | 1 | 0 | 0 |" in text  # one case lost, no gap
    assert "| litellm-hosted-vllm | t | x 1 | 3 | 0 | 0 | 1 |" in text  # one gap, nothing lost
    lost = text.split("## Meaning lost")[1].split("## Contract gaps")[0]
    assert "| `tool-name-repeated` | T2 | corrupted: call 0 name 'get_weatherget_weather" in lost
    assert "### litellm-hosted-vllm\n\nNo interop failure." in lost
    gaps = text.split("## Contract gaps")[1].split("## Verdicts")[0]
    assert "| litellm-hosted-vllm | E1 | 1 | `empty-stop-no-usage` | stop — " in gaps
    assert "E1" not in lost  # an E1-style failure is a contract gap only
    assert "| openai | interop |" in text and "### Per family, interop contract" in text
    # The empty-stop mutant does not double names: a difference from the study.
    closing = text.split("## Closing note")[1]
    assert "- litellm-hosted-vllm (x 1): §0.4 an event with only a retry: field" not in closing
    assert "- openai (x 1): §0.1 an empty stop completion is handed back as a success" in closing
    assert "(`empty-stop-no-usage`: error EMPTY_RESPONSE)" in closing


def test_the_summary_judges_each_retry_layer_against_its_declared_policy(saved: Path) -> None:
    from conformance.cli.matrix import load_columns

    summary = saved / "retries.md"
    done = CliRunner().invoke(main, ["matrix", "render", str(saved), "--summary", str(summary)])
    assert done.exit_code == 0, done.output
    retries = summary.read_text().split("## Retry layers (R judged)")[1].split("## Closing")[0]
    policies = retries.split("### Declared policies")[1].split("### R verdicts")[0]
    assert "| openai | up to 2 retries; retried: codes EMPTY_RESPONSE" in policies
    assert "in a streamed body too; backoff 0.001-2 s; waits retry-after up to 2 s" in policies
    assert "| litellm-hosted-vllm | up to 1 retry;" in policies  # one fewer than it makes
    verdicts = retries.split("### R verdicts")[1].split("### R failures")[0]
    header = "| invariant | openai harness | openai interop | litellm-hosted-vllm harness |"
    assert header in verdicts
    assert "| R2 | 2 / 0 | 2 / 0 | 1 / 1 | 1 / 1 |" in verdicts
    failures = retries.split("### R failures")[1].split("### Requests")[0]
    # Three requests: the declared budget of 1 retry is broken in both contracts.
    for contract in CONTRACTS:
        row = f"| litellm-hosted-vllm | {contract} | R2 | fail | `http-429-forever` |"
        assert row in failures
        assert "the declared max_retries 1 allows 2" in failures
    assert "| openai |" not in failures
    assert "| `http-429-forever` | 3 req;" in retries.split("### Requests and waits")[1]
    columns = load_columns(saved)
    assert [sorted(column.retries) for column in columns] == [list(CONTRACTS)] * 2


def test_a_column_without_its_interop_judgement_is_refused(saved: Path, tmp_path: Path) -> None:
    (tmp_path / "openai.harness.json").write_text((saved / "openai.harness.json").read_text())
    done = CliRunner().invoke(main, ["matrix", "render", str(tmp_path)])
    assert done.exit_code == ExitCode.USAGE_ERROR
    assert "openai.interop.json" in done.output
    (tmp_path / "openai.interop.json").write_text((saved / "openai.interop.json").read_text())
    retry = "openai.retry.harness.json"
    (tmp_path / retry).write_text((saved / retry).read_text())
    done = CliRunner().invoke(main, ["matrix", "render", str(tmp_path)])
    assert done.exit_code == ExitCode.USAGE_ERROR
    assert "openai.retry.interop.json" in done.output


def test_findings_compare_per_column(saved: Path) -> None:
    from conformance.cli.matrix import load_columns

    columns = load_columns(saved)
    assert [c.name for c in columns] == ["openai", "litellm-hosted-vllm"]
    rows = {row.finding.case: row for row in check_findings(columns)}
    doubled = rows["tool-name-repeated"]
    assert doubled.observed == {"openai": "yes", "litellm-hosted-vllm": "no"}
    assert doubled.differs == {}  # as the study saw it
    assert rows["empty-stop-no-usage"].observed == {"openai": "no", "litellm-hosted-vllm": "yes"}
    assert rows["http-429-forever"].observed["openai"] == "3"  # the reference's own policy
    assert rows["no-done-clean-close"].observed["openai"] == "not run"
    assert "openai" not in rows["no-done-clean-close"].differs


def test_every_finding_names_a_fixture_of_the_corpus() -> None:
    ids = {s.id for s in load_fixtures([bundled_fixtures()])}
    assert {finding.case for finding in FINDINGS} <= ids


def test_a_finding_reads_the_fixture_it_names() -> None:
    finding = next(f for f in FINDINGS if f.case == "empty-stop-no-usage")
    success = _case("empty-stop-no-usage", _ok("stop"))
    other = _case("something-else", _ok("stop"))
    assert finding.observed(_column([success])) == "yes"
    assert finding.observed(_column([other])) == "not run"


def test_a_finding_the_study_saw_only_in_some_libraries_expects_no_from_the_others() -> None:
    """A studied column the claim does not name expects "no"; a column the study never
    measured (other languages, columns added later) is shown, not compared."""
    only_litellm = next(f for f in FINDINGS if f.case == "truncated-no-finish-no-done")
    assert only_litellm.expected_for("litellm-openai") == "yes"
    assert only_litellm.expected_for("openai") == "no"
    assert only_litellm.expected_for("a-column-added-later") is None
    doubled = next(f for f in FINDINGS if f.case == "tool-name-repeated")
    assert doubled.expected_for("autogen-ext") == "yes"  # §0.2 names it
    assert doubled.expected_for("smolagents") == "no"


def test_a_finding_about_native_retries_reads_and_quotes_the_retry_run() -> None:
    """The content run (retries off) made one request and raised; the retry run made four
    and timed out: the finding counts the retry run's requests and quotes its outcome."""
    forever = "http-429-forever"
    content = _case(forever, _raised("RateLimitError: 429", "RATE_LIMIT"))
    retried = _case(forever, [], status="timeout").model_copy(
        update={"requests": [{"received_at": str(t)} for t in range(4)]}
    )
    column = Column(
        "openai",
        "t",
        {},
        _result([content]),
        _result([], "interop"),
        {"harness": _result([retried])},
    )
    finding = next(f for f in FINDINGS if f.case == forever)
    assert finding.observed(column) == "4"
    closing = render_compatibility([column], fixtures="f").split("## Closing note")[1]
    assert "observed 4 (study: 3) (`http-429-forever`: timeout)" in closing


def test_markdown_cells_are_escaped() -> None:
    assert _md("a|b\n<script>") == "a\\|b &lt;script&gt;"
    column = Column("x|y", "<b>", {}, _result([]), _result([], "interop"))
    text = render_compatibility([column], fixtures="f")
    assert "<b>" not in text and "&lt;b&gt;" in text
    assert "x\\|y" in text and "| x|y |" not in text


def test_the_to_do_groups_interop_failures_by_written_cause_and_keeps_gaps_apart() -> None:
    """A written cause with its cases and link, a failure nobody explained yet, a written
    cause whose case passes now, and a contract gap — each where a maintainer looks."""
    sse = _raised("JSONDecodeError: x", "MALFORMED_RESPONSE")
    interop = [
        _case("tool-name-repeated", _ok("tool-calls", CALL), failed=("T2",)),
        _case("retry-field-only-event", sse, blocks=(_text("Hi"),), failed=("S3",)),
        _case("mystery-case", _raised("X: boom"), cost=Cost("crash", "raised 'X: boom'")),
        _case("continuation-type-null", _ok("tool-calls", CALL), failed=()),
    ]
    harness = [*interop, _case("empty-stop-no-usage", _ok("stop"), failed=("E1",))]
    column = Column("openai", "t", {}, _result(harness), _result(interop, "interop"))
    text = render_compatibility([column], fixtures="f")
    todo = text.split("## Maintainer's to-do (interop contract)")[1].split("## Meaning lost")[0]
    assert "| openai | 3 | 2 | 1 | 1 |" in todo  # failures, causes, linked, unwritten
    assert "| accumulate_delta concatenates every string field: " in todo
    assert "| `tool-name-repeated` |  |" in todo  # no upstream issue found for this one
    assert (
        "| `retry-field-only-event` | "
        "[openai/openai-python#2722](https://github.com/openai/openai-python/issues/2722) |"
    ) in todo
    assert "| *cause not yet written*: crash: raised 'X: boom' | `mystery-case` |  |" in todo
    assert "Not reproduced in this run: accumulate_delta assigns `type`" in todo
    assert "(`continuation-type-null`, `kimi-nulls-everywhere`, " in todo
    assert "cases per invariant: E1 1 (e.g. `empty-stop-no-usage`)." in todo


def test_matrix_without_any_installed_shim_says_how_to_get_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from conformance.adapters import thirdparty

    for kind in (thirdparty.Shim, thirdparty.NodeShim):
        monkeypatch.setattr(kind, "installed", property(lambda self: False))
    done = CliRunner().invoke(main, ["matrix"])
    assert done.exit_code == ExitCode.SETUP_ERROR
    assert "tox -m matrix" in done.output


# --- saved cases, constructed ------------------------------------------------------------

CALL = {"type": "tool-call", "id": "call_1", "name": "get_weather", "arguments": '{"a": 1}'}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _ok(reason: str, *blocks: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of an attempt that hands back ``blocks`` and ends with ``reason``."""
    events: list[dict[str, Any]] = [{"type": "block-end", "block": b} for b in blocks]
    return [*events, {"type": "finish", "reason": reason}]


def _raised(message: str, code: str | None = None) -> list[dict[str, Any]]:
    thrown = {"type": "thrown", "message": message}
    return [thrown | ({"code": code} if code else {})]


def _case(
    case_id: str,
    events: list[dict[str, Any]],
    *,
    finish: str = "stop",
    code: str | None = None,
    blocks: tuple[dict[str, Any], ...] = (),
    failed: tuple[str, ...] = ("G1",),
    status: Any = "completed",
    cost: Cost | None = None,
) -> CaseResult:
    """A saved case; ``cost``: what each of its ``failed`` verdicts states it cost."""
    wanted: dict[str, Any] = {"attempt": 1, "finish": finish, "features": []}
    wanted |= {"code": code} if code else {}
    wanted |= {"blocks": list(blocks)} if blocks else {}
    return CaseResult(
        case=case_id,
        status=status,
        detail={"timeout": "no end within 16 s", "crash": "exited 1"}.get(status, ""),
        duration_s=0.0,
        verdicts={id: InvariantVerdict(verdict="fail", reason="r", cost=cost) for id in failed},
        events=[*events, {"type": "end"}],
        expected={"attempts": [wanted]},
        requests=[],
    )


def _result(cases: list[CaseResult], contract: Contract = "harness") -> RunResult:
    return RunResult(
        suite_version="0",
        adapter={"name": "lib"},
        options={},
        started_at="",
        finished_at="",
        contract=contract,
        catalogue=[],
        cases=cases,
    )


def _column(harness: list[CaseResult], interop: list[CaseResult] | None = None) -> Column:
    return Column("lib", "t", {}, _result(harness), _result(interop or [], "interop"))


def test_meaning_lost_is_one_row_per_case_and_says_when_no_loss_is_shown() -> None:
    doubled = _ok("tool-calls", CALL | {"name": "get_weatherget_weather"})
    unidentified = CALL | {"id": ""}
    interop = [
        _case(
            "doubled",
            doubled,
            finish="tool-calls",
            blocks=(CALL,),
            failed=("T2", "C5"),
            cost=Cost("corrupted", "call 0 name 'get_weatherget_weather' for 'get_weather'"),
        ),
        _case(
            "as-sent",
            _ok("tool-calls", unidentified),
            finish="error",
            code="MALFORMED_TOOL_CALL",
            blocks=(unidentified,),
            failed=("T6",),
        ),
        _case("fine", _ok("stop"), failed=()),
    ]
    rows = meaning_lost(_column([], interop))
    assert [(row.case, row.invariants) for row in rows] == [
        ("doubled", ("T2", "C5")),
        ("as-sent", ("T6",)),
    ]
    assert rows[0].cause == "corrupted: call 0 name 'get_weatherget_weather' for 'get_weather'"
    assert rows[1].damage == ()
    assert rows[1].cause.startswith("no loss shown: the caller got call ''/'get_weather'")


def test_contract_gaps_are_the_failures_only_the_harness_contract_has() -> None:
    harness = [
        _case("empty", _ok("stop"), failed=("E1",)),
        _case("empty-2", _ok("stop"), failed=("E1",)),
        _case("both", _ok("stop"), failed=("S5", "G1")),
    ]
    interop = [
        _case("empty", _ok("stop"), failed=()),
        _case("empty-2", _ok("stop"), failed=()),
        _case("both", _ok("stop"), failed=("G1",)),
    ]
    gaps = contract_gaps(_column(harness, interop))
    assert [(id, count, first) for id, count, first, _ in gaps] == [
        ("E1", 2, "empty"),
        ("S5", 1, "both"),
    ]


# --- findings compared only where their source measured them --------------------------


def _named(name: str, cases: list[CaseResult]) -> Column:
    return Column(name, "t", {"x": "1"}, _result(cases), _result(cases, "interop"))


def test_a_study_finding_is_not_compared_in_a_column_the_study_never_ran() -> None:
    refused = _case("empty-stop-no-usage", _raised("EmptyError: x", "EMPTY_RESPONSE"))
    columns = [_named("openai", [refused]), _named("vercel-ai", [refused])]
    (row,) = [r for r in check_findings(columns) if r.finding.case == "empty-stop-no-usage"]
    assert row.observed == {"openai": "no", "vercel-ai": "no"}
    assert row.differs == {"openai": "yes"}  # the study ran openai only


def test_js_findings_read_their_fixture_and_compare_in_their_library() -> None:
    late_id = _case(
        "tool-late-id",
        _ok("tool-calls", CALL | {"id": "generated"}),
        finish="tool-calls",
        blocks=(CALL,),
    )
    after_done = _case(
        "data-after-done", _ok("stop", _text("Hello again")), blocks=(_text("Hello"),)
    )
    no_role = _case("gateway-no-role", _raised("OpenAIError: missing role for choice 0"))
    stalled = _case("stall-mid-reasoning", [], status="timeout")
    cases = [late_id, after_done, no_role, stalled]
    columns = [_named("openai-node", cases), _named("vercel-ai", cases)]
    rows = {row.finding.case: row for row in check_findings(columns, JS_FINDINGS)}
    assert rows["tool-late-id"].observed == {"openai-node": "yes", "vercel-ai": "yes"}
    assert rows["data-after-done"].observed["vercel-ai"] == "yes"
    assert rows["gateway-no-role"].observed["openai-node"] == "yes"
    assert rows["stall-mid-reasoning"].observed["openai-node"] == "yes"
    assert all(not row.differs for row in rows.values())  # each as claimed, where claimed
    text = render_compatibility(columns, fixtures="f")
    assert "## Findings on the JS libraries, re-measured" in text
    assert "## Findings of real-adapters.md" not in text  # no column of the study here
    assert "(claimed:" not in text
    assert "openai-node, vercel-ai" in text.split("## Closing note")[1]


def test_a_js_finding_no_longer_seen_is_listed_in_the_closing_note() -> None:
    fixed = _case("data-after-done", _ok("stop", _text("Hello")), blocks=(_text("Hello"),))
    text = render_compatibility([_named("vercel-ai", [fixed])], fixtures="f")
    assert "| the AI SDK reads past [DONE] | `data-after-done` | no (claimed: yes) |" in text
    closing = text.split("## Closing note")[1]
    assert "- vercel-ai (x 1): the AI SDK reads past [DONE] — observed no (claimed: yes)" in closing


def test_every_js_finding_names_a_fixture_of_the_corpus() -> None:
    ids = {s.id for s in load_fixtures([bundled_fixtures()])}
    assert {finding.case for finding in JS_FINDINGS} <= ids


# --- which cases a column runs ---------------------------------------------------------


class _OneDialect:
    """An adapter that speaks one dialect and ends every case it is handed with a stop."""

    def __init__(self, dialect: ProtocolDialect) -> None:
        self.hello = hello_of(dialect, "1", reasoning=False, dialects=[dialect])

    def run(self, case: RunCase) -> list[Finish]:
        return [Finish(reason="stop")]


class _ColumnShim:
    """A matrix column over a ready adapter session."""

    def __init__(self, open_session: Any) -> None:
        self.name, self._open = "x", open_session

    async def open(self, options: RunOptions) -> Any:
        return self._open(options)

    def invocation(self, options: RunOptions) -> str:
        return "--adapter x"


def test_a_column_runs_only_the_cases_of_the_dialects_its_shim_speaks() -> None:
    corpus = {s.id: s for s in load_fixtures([bundled_fixtures()])}
    mixed = [corpus["tool-name-repeated"], corpus["an-basic-text"]]
    for dialect, case_id in (
        ("chat-completions", "tool-name-repeated"),
        ("anthropic-messages", "an-basic-text"),
    ):
        shim = _ColumnShim(lambda _, d=dialect: PythonAdapterSession(_OneDialect(d)))
        judged = asyncio.run(run_column_cases(shim, mixed, OPTIONS, CONTRACTS, 1))
        assert [case.case for case in judged["harness"].cases] == [case_id]


def _gateway_run(upstream: str | None, cases: list[CaseResult]) -> str:
    result = _result(cases)
    if upstream is not None:
        result.options |= {"upstream_dialect": upstream, "downstream_dialect": "chat-completions"}
    return result.to_json()


def test_render_adds_each_gateways_findings_per_direction(saved: Path, tmp_path: Path) -> None:
    for path in saved.glob("*.json"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    gateway = tmp_path / "gateways" / "litellm-proxy"
    (gateway / "an--chat").mkdir(parents=True)
    (gateway / "results.json").write_text(_gateway_run(None, [_case("clean", [], failed=())]))
    lost = _case("gw-x", [], failed=("GW-3",))
    lost.verdicts["GW-3"] = InvariantVerdict(verdict="fail", reason="<img src=x> | end_turn")
    undercounted = [_case(f"c{n}", [], failed=("GW-4",)) for n in range(9)]
    undercounted.append(_case("an-usage-two-message-deltas", [], failed=("GW-4",)))
    cases = [lost, *undercounted]
    (gateway / "an--chat" / "results.json").write_text(_gateway_run("anthropic-messages", cases))
    summary = tmp_path / "summary.md"

    done = CliRunner().invoke(main, ["matrix", "render", str(tmp_path), "--summary", str(summary)])

    assert done.exit_code == 0, done.output
    section = summary.read_text(encoding="utf-8").split("## Gateways")[1].split("\n## ")[0]
    assert "| litellm-proxy | chat-completions → chat-completions | 1 | 0 | 0 | 0 |" in section
    assert "### litellm-proxy: chat-completions → chat-completions\n\nNo failure." in section
    row = "| GW-3 | fail | 1: ` gw-x ` | &lt;img src=x&gt; \\| end_turn | *not yet written* |"
    assert "### litellm-proxy: anthropic-messages → chat-completions\n\n" in section
    assert row in section
    # Grouped by rule: the most cases first, eight named, the written cause with them.
    (grouped,) = (line for line in section.splitlines() if line.startswith("| GW-4 |"))
    assert "| 10: ` c0 `, ` c1 `," in grouped and "` c7 ` and 2 more |" in grouped
    assert "takes `output_tokens` from the first of two message_delta events" in grouped


def test_a_malformed_gateway_run_is_refused_with_its_file(saved: Path, tmp_path: Path) -> None:
    for path in saved.glob("*.json"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "gateways" / "litellm-proxy").mkdir(parents=True)
    (tmp_path / "gateways" / "litellm-proxy" / "results.json").write_text("{not json")
    summary = tmp_path / "summary.md"

    done = CliRunner().invoke(main, ["matrix", "render", str(tmp_path), "--summary", str(summary)])

    assert done.exit_code == ExitCode.USAGE_ERROR, done.output
    assert "gateways/litellm-proxy/results.json" in done.output
    assert not summary.exists()
