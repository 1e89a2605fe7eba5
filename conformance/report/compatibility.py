"""The compatibility summary of real libraries, computed from their saved results.

Pure functions over :class:`~conformance.results.RunResult` columns. Each library's corpus
run is judged under both contracts (INVARIANTS.md "Contracts"): its failures under
``interop`` are meaning lost, each with what it cost the caller as the checker that failed
it states it (the results' ``cost``: the page keeps no rules of its own); its failures
under ``harness`` alone are contract gaps. Then verdict counts per invariant family, the
tables of each library's own retry layer (:mod:`.retry_layers` builds them: R judged
against the policy its shim declares, requests measured at the fake provider), and a check
of the findings of real-adapters.md §0 against what was observed this time.
``conformance matrix`` writes the Markdown to ``reports/compatibility.md``; nothing here runs
an adapter.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..codes import is_canonical
from ..results import CaseResult, RunResult
from ..verdicts import CONTRACTS, VERDICTS, Contract, Verdict, family_of, family_order
from .gateway_findings import GatewayRun, gateway_section
from .markdown import markdown_text as _md
from .upstream import ToDo, not_reproduced, to_do

RETRY_PROFILE_TAG = "retry-profile"
"""Fixtures the matrix's retry column runs with each library's own retry layer (Matrix D of
the study)."""


Table = tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]
"""A header and its rows, every cell plain text: the Markdown and the HTML render the same."""


@dataclass(frozen=True)
class Section:
    """A titled table of the page; ``code``: the column of fixture ids (shown as code)."""

    title: str
    note: str
    table: Table
    code: int | None = None


@dataclass(frozen=True)
class Column:
    """One library configuration: its content run judged under each contract (the same
    observed behaviour) and, if measured, its retry column (its own retry layer on), judged
    under each contract too."""

    name: str
    title: str
    versions: Mapping[str, str]
    result: RunResult  # judged under the harness contract
    interop: RunResult  # the same cases judged under the interop contract
    retries: Mapping[Contract, RunResult] = field(default_factory=dict)

    def judged(self, contract: Contract) -> RunResult:
        return self.interop if contract == "interop" else self.result

    def case(self, case_id: str) -> CaseResult | None:
        return _find(self.result, case_id)

    def retry_case(self, case_id: str) -> CaseResult | None:
        """The case in the retry column (its events and requests are the same under either
        contract)."""
        run = self.retries.get("harness")
        return None if run is None else _find(run, case_id)


def _find(result: RunResult, case_id: str) -> CaseResult | None:
    return next((case for case in result.cases if case.case == case_id), None)


# --- what a case showed, in a few words --------------------------------------------------


def outcome(case: CaseResult | None) -> str:
    """The caller-visible outcome of the case's last attempt, short."""
    if case is None:
        return "not run"
    if case.status != "completed":
        return f"{case.status}"
    events = _final_attempt(case.events)
    thrown = _thrown(events)
    if thrown is not None:
        name = str(thrown.get("message", "")).split(":", 1)[0]
        return f"raised {name}" + (f" ({thrown['code']})" if thrown.get("code") else "")
    finish = _finish(events)
    ending = "no finish" if finish is None else str(finish["reason"])
    if finish is not None and finish.get("code"):
        ending += f" {finish['code']}"
    return "; ".join([*map(_block, _blocks(events)), ending])


def _block(block: Mapping[str, Any]) -> str:
    if block["type"] in ("tool-call", "server-tool"):
        kind = "call" if block["type"] == "tool-call" else "server tool"
        return f"{kind} {block['id']!r}/{block['name']!r} {_clip(block['arguments'])}"
    return f"{block['type']} {_clip(block['text'])}"


def _blocks(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [e["block"] for e in events if e.get("type") == "block-end"]


def _thrown(events: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    return next((e for e in events if e.get("type") == "thrown"), None)


def _finish(events: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    return next((e for e in events if e.get("type") == "finish"), None)


def _final_attempt(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    last_retry = max((i for i, e in enumerate(events) if e.get("type") == "retry"), default=-1)
    return list(events[last_retry + 1 :])


def _clip(text: str, limit: int = 48) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def tool_calls(case: CaseResult | None) -> list[dict[str, Any]]:
    if case is None:
        return []
    return _calls(_blocks(_final_attempt(case.events)))


def _calls(blocks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [dict(block) for block in blocks if block["type"] == "tool-call"]


def threw(case: CaseResult | None) -> bool:
    return case is not None and _thrown(_final_attempt(case.events)) is not None


def crashed(case: CaseResult | None) -> bool:
    """Raised an exception with no canonical code (INVARIANTS.md: a crash)."""
    thrown = None if case is None else _thrown(_final_attempt(case.events))
    return thrown is not None and not is_canonical(thrown.get("code"))


SUCCESS_REASONS = ("stop", "tool-calls", "max-tokens")


def succeeded(case: CaseResult | None) -> bool:
    """Handed the caller a success (a success finish, nothing raised)."""
    if case is None:
        return False
    events = _final_attempt(case.events)
    finish = _finish(events)
    ended_well = finish is not None and finish["reason"] in SUCCESS_REASONS
    return ended_well and _thrown(events) is None


def text_of(case: CaseResult | None) -> str:
    return "" if case is None else _joined(_blocks(_final_attempt(case.events)), "text")


def _joined(blocks: Sequence[Mapping[str, Any]], kind: str) -> str:
    return "".join(block["text"] for block in blocks if block["type"] == kind)


# --- the two contracts: meaning lost, contract gaps --------------------------------------


@dataclass(frozen=True)
class LostMeaning:
    """A case that fails under the interop contract, and what that cost the caller."""

    case: str
    invariants: tuple[str, ...]  # those that failed in it: one cause, however many saw it
    damage: tuple[str, ...]  # each a loss, corruption, invention, crash or hang, quoted
    got: str  # the caller-visible outcome

    @property
    def cause(self) -> str:
        if self.damage:
            return "; ".join(self.damage)
        return f"no loss shown: the caller got {self.got}, as the stream carried it"


def meaning_lost(column: Column) -> list[LostMeaning]:
    """The column's cases with a failure under the interop contract, in run order."""
    rows = []
    for case in column.interop.cases:
        failing = tuple(id for id, verdict in case.verdicts.items() if verdict.verdict == "fail")
        if failing:
            rows.append(LostMeaning(case.case, failing, tuple(damage(case)), outcome(case)))
    return rows


def damage(case: CaseResult) -> list[str]:
    """What the caller of ``case`` lost, got corrupted or got invented, or the crash or hang,
    as the checkers that failed it under the interop contract state it (each cost once, in
    the documented order of its invariants). Empty when none of them states one."""
    costs = (verdict.cost for verdict in case.verdicts.values() if verdict.verdict == "fail")
    return list(dict.fromkeys(str(cost) for cost in costs if cost is not None))


def contract_gaps(column: Column) -> list[tuple[str, int, str, str]]:
    """(invariant, cases, first case, its reason) for each failure under the harness contract
    that the interop contract does not share: the harness's own rules, not lost meaning."""
    shared = {
        (case.case, id)
        for case in column.interop.cases
        for id, verdict in case.verdicts.items()
        if verdict.verdict == "fail"
    }
    found: dict[str, list[tuple[str, str]]] = {}
    for case in column.result.cases:
        for id, verdict in case.verdicts.items():
            if verdict.verdict == "fail" and (case.case, id) not in shared:
                found.setdefault(id, []).append((case.case, verdict.reason))
    order = [entry["id"] for entry in column.result.catalogue]
    return [
        (id, len(cases), cases[0][0], cases[0][1])
        for id, cases in sorted(found.items(), key=lambda item: _position(order, item[0]))
    ]


def gaps_table(columns: Sequence[Column]) -> Table:
    """Every library's contract gaps, one row per invariant."""
    header = ("library", "invariant", "cases", "e.g.", "what happened")
    rows = tuple(
        (column.name, id, str(count), case_id, f"{outcome(column.case(case_id))} — {reason}")
        for column in columns
        for id, count, case_id, reason in contract_gaps(column)
    )
    return header, rows


# --- the native retry profile ----------------------------------------------------------


@dataclass(frozen=True)
class RetryCell:
    requests: int
    waits_s: tuple[float, ...]  # between consecutive requests, at the provider
    outcome: str

    def __str__(self) -> str:
        waits = ", ".join(f"{w:.2f}" for w in self.waits_s)
        gap = f"; waits {waits} s" if waits else ""
        return f"{self.requests} req{gap}; {self.outcome}"


def retry_cell(case: CaseResult | None) -> RetryCell | None:
    if case is None:
        return None
    arrivals = sorted(float(r["received_at"]) for r in case.requests)
    waits = tuple(round(later - earlier, 2) for earlier, later in itertools.pairwise(arrivals))
    return RetryCell(len(arrivals), waits, outcome(case))


# --- findings of real-adapters.md §0 --------------------------------------------------------

Observe = Callable[[CaseResult], str]
"""What a column shows in the finding's case."""


NOT_RUN = "not run"  # the column has no such case: nothing to compare


def _in_case(test: Callable[[CaseResult], bool]) -> Observe:
    return lambda case: "yes" if test(case) else "no"


def _requests(case: CaseResult) -> str:
    return str(len(case.requests))


# The columns that read the wire through openai-python's SSE decoder (the study's §0.4).
_SDK_COLUMNS = (
    *("openai", "langchain", "litellm-openai", "pydantic-ai", "llama-index"),
    *("openai-agents", "autogen-ext", "haystack", "smolagents", "mirascope"),
)
_LITELLM = ("litellm-openai", "litellm-hosted-vllm")
_STUDIED = frozenset({*_SDK_COLUMNS, "litellm-hosted-vllm"})  # the columns of real-adapters.md


@dataclass(frozen=True)
class Finding:
    """A claim about real libraries, the case that shows it, and per column the value the
    claim's source observed: ``expected`` by name, else ``otherwise``, for the columns in
    ``measured``; a column the source never measured is shown, not compared. What is
    observed is always read from ``case``, the fixture the page names."""

    claim: str
    case: str
    observe: Observe
    expected: Mapping[str, str] = field(default_factory=dict)
    otherwise: str = "yes"
    native_retries: bool = False
    measured: frozenset[str] = _STUDIED

    def expected_for(self, column: str) -> str | None:
        if column not in self.measured:
            return None
        return self.expected.get(column, self.otherwise)

    def shown_in(self, column: Column) -> CaseResult | None:
        """The run of ``case`` this finding reads."""
        return column.retry_case(self.case) if self.native_retries else column.case(self.case)

    def observed(self, column: Column) -> str:
        case = self.shown_in(column)
        return NOT_RUN if case is None else self.observe(case)


def _only(claim: str, case: str, observe: Observe, columns: Sequence[str]) -> Finding:
    """A finding the study observed in ``columns`` and in no other it measured."""
    return Finding(claim, case, observe, dict.fromkeys(columns, "yes"), otherwise="no")


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "§0.1 an empty stop completion is handed back as a success (no EMPTY_RESPONSE)",
        "empty-stop-no-usage",
        _in_case(succeeded),
    ),
    Finding(
        "§0.1 a call whose id is never sent is not refused with MALFORMED_TOOL_CALL",
        "lmstudio-id-empty",
        _in_case(lambda c: not threw(c) and "MALFORMED" not in outcome(c)),
        {"mirascope": "no"},  # raises "Missing id for tool call"
    ),
    _only(
        "§0.2 a name repeated on every delta is doubled (quirk A7)",
        "tool-name-repeated",
        _in_case(lambda c: any("get_weatherget_weather" in x["name"] for x in tool_calls(c))),
        ("openai", "langchain", "pydantic-ai", "llama-index", "haystack", "autogen-ext"),
    ),
    _only(
        "§0.2 an id repeated on every delta is concatenated",
        "continuation-id-repeated",
        _in_case(lambda c: any("call_1call_1" in call["id"] for call in tool_calls(c))),
        ("openai", "llama-index", "autogen-ext"),
    ),
    _only(
        "§0.3 a continuation with type: null crashes openai-python's accumulator",
        "continuation-type-null",
        _in_case(crashed),
        ("openai",),
    ),
    Finding(
        '§0.3 "" and null continuations keep the identity',
        "tool-cont-empty-id-name",
        _in_case(
            lambda c: (
                [(x["id"], x["name"]) for x in tool_calls(c)]
                == [("call_8f2c1d0b6e3a4c57a1b2c3d4", "get_weather")]
            )
        ),
        {"haystack": "no"},  # an id of "" overwrites the real one
    ),
    _only(
        "§0.4 an event with only a retry: field kills the stream (openai-python #2722)",
        "retry-field-only-event",
        _in_case(threw),
        _SDK_COLUMNS,
    ),
    _only(
        "§0.4 litellm's own parser loses an event split over two data: lines",
        "event-over-two-data-lines",
        _in_case(lambda c: succeeded(c) and text_of(c) != "Hello"),
        ("litellm-hosted-vllm",),
    ),
    _only(
        "§0.5 a clean EOF without finish and [DONE] raises only in litellm",
        "truncated-no-finish-no-done",
        _in_case(threw),
        _LITELLM,
    ),
    Finding(
        "§0.5 no library requires [DONE] (a finish, then EOF, is a success)",
        "no-done-clean-close",
        _in_case(succeeded),
    ),
    Finding(
        "§0.6 a stream reset after the body started is not retried (native retries on)",
        "reset-mid-stream-then-ok",
        _requests,
        otherwise="1",
        native_retries=True,
    ),
    Finding(
        "§0.6 requests made for a 429 that never lifts (native retries on)",
        "http-429-forever",
        _requests,
        # smolagents: 3 SDK requests per attempt, 3 attempts 60 s apart.
        {"litellm-hosted-vllm": "1", "llama-index": "4", "haystack": "6", "smolagents": "9"},
        otherwise="3",
        native_retries=True,
    ),
    _only(
        "§3.3 litellm drops a call whose id never arrives",
        "tool-never-identified",
        _in_case(lambda c: succeeded(c) and not tool_calls(c)),
        _LITELLM,
    ),
    _only(
        "§3.5 llama-index drops the second of two calls sent in one delta",
        "tool-parallel-oneshot",
        _in_case(lambda c: succeeded(c) and len(tool_calls(c)) < 2),
        ("llama-index",),
    ),
)


def _raised(words: str) -> Callable[[CaseResult], bool]:
    """The case ended with an exception whose message contains ``words``."""

    def test(case: CaseResult) -> bool:
        thrown = _thrown(_final_attempt(case.events))
        return thrown is not None and words in str(thrown.get("message", ""))

    return test


def _hung(case: CaseResult) -> bool:
    return case.status == "timeout"


def _wire_calls(case: CaseResult) -> list[dict[str, Any]]:
    return _calls(case.expected["attempts"][-1].get("blocks", []))


_OPENAI_NODE = frozenset({"openai-node"})
_AI_SDK = frozenset({"vercel-ai"})

JS_FINDINGS: tuple[Finding, ...] = (
    Finding(
        'openai-node throws "chunk.choices is not iterable" on a usage chunk with '
        "choices: null, losing the finished answer and its usage",
        "usage-choices-null",
        _in_case(_raised("chunk.choices is not iterable")),
        measured=_OPENAI_NODE,
    ),
    Finding(
        'openai-node throws "chunk.choices is not iterable" on a chunk without choices',
        "chunk-without-choices-mid-stream",
        _in_case(_raised("chunk.choices is not iterable")),
        measured=_OPENAI_NODE,
    ),
    Finding(
        'openai-node throws "missing role for choice 0" on a stream that never sends a role',
        "gateway-no-role",
        _in_case(_raised("missing role for choice 0")),
        measured=_OPENAI_NODE,
    ),
    Finding(
        "openai-node's timeout does not cover the body: a stream that stalls mid-body hangs "
        "(openai/openai-node#1825)",
        "stall-mid-reasoning",
        _in_case(_hung),
        measured=_OPENAI_NODE,
    ),
    Finding(
        "the AI SDK reports a complete turn whose usage chunk has choices: null as an error "
        "(vercel/ai#7417)",
        "usage-choices-null",
        _in_case(lambda c: not succeeded(c)),
        measured=_AI_SDK,
    ),
    Finding(
        "the AI SDK replaces a provider id that arrives on a later delta with a generated one",
        "tool-late-id",
        _in_case(lambda c: [x["id"] for x in tool_calls(c)] != [x["id"] for x in _wire_calls(c)]),
        measured=_AI_SDK,
    ),
    Finding(
        "the AI SDK reads past [DONE]",
        "data-after-done",
        _in_case(lambda c: text_of(c) != _joined(c.expected["attempts"][-1]["blocks"], "text")),
        measured=_AI_SDK,
    ),
    Finding(
        "the AI SDK reports a stream with a dropped non-JSON payload as a success",
        "invalid-json-payload",
        _in_case(succeeded),
        measured=_AI_SDK,
    ),
    Finding(
        "the AI SDK stops enforcing its chunk timeout after an error part: a stall after a "
        "non-JSON payload hangs",
        "non-json-text-then-stall",
        _in_case(_hung),
        measured=_AI_SDK,
    ),
)
"""The JS libraries' behaviour as first seen driving them by hand through protocol v1."""


@dataclass(frozen=True)
class FindingSource:
    """Where a group of findings comes from, and how the page presents it."""

    title: str
    note: str
    source: str  # who observed the claimed values, in a cell's brackets
    findings: tuple[Finding, ...]


FINDING_SOURCES: tuple[FindingSource, ...] = (
    FindingSource(
        "Findings of real-adapters.md §0, re-measured",
        "Each row: the claim, the fixture that shows it, and per library what was observed "
        "now in that fixture (yes/no, or a count); a value in brackets is what the study "
        "observed where it differs.",
        "study",
        FINDINGS,
    ),
    FindingSource(
        "Findings on the JS libraries, re-measured",
        "What driving openai-node and the AI SDK by hand through protocol v1 showed, each "
        "with the fixture that shows it; every column's value is shown, compared only in the "
        "library the claim is about (a value in brackets is the claim, where it differs).",
        "claimed",
        JS_FINDINGS,
    ),
)


@dataclass(frozen=True)
class FindingRow:
    finding: Finding
    observed: dict[str, str]
    differs: dict[str, str]  # column → expected value, where observed differs


def check_findings(
    columns: Sequence[Column], findings: Sequence[Finding] = FINDINGS
) -> list[FindingRow]:
    rows = []
    for finding in findings:
        observed = {column.name: finding.observed(column) for column in columns}
        differs = {
            name: expected
            for name, value in observed.items()
            if (expected := finding.expected_for(name)) is not None
            and value not in (expected, NOT_RUN)
        }
        rows.append(FindingRow(finding, observed, differs))
    return rows


# --- the Markdown page -------------------------------------------------------------------

LOST_TITLE = "Meaning lost (interop contract)"
LOST_NOTE = (
    "Failures under the interop contract: the library lost, corrupted or invented what the "
    "provider sent, crashed, hung, or reported a failed stream as a success. One row per case: "
    "the invariants that failed in it, and what the caller got wrong, as the checker that "
    "failed it states it. A row that says “no loss shown” is a failure these results "
    "do not show to be a loss: a suspected false positive of the suite, listed, not hidden."
)
GAPS_TITLE = "Contract gaps (harness contract only)"
GAPS_NOTE = (
    "Failures under the harness contract that the interop contract records as info: what the "
    "harness asks beyond keeping the provider's meaning (INVARIANTS.md, “Contracts”). Per "
    "library and invariant: how many cases fail, one of them, and what happened there."
)
_LOST_HEADER = ("fixture", "failed", "what the caller lost")
_LIBRARY_HEADER = (
    *("column", "drives", "versions", "cases"),
    *("meaning lost", "no loss shown", "contract gaps"),
)


def family_counts(result: RunResult) -> dict[str, dict[Verdict, int]]:
    families: dict[str, dict[Verdict, int]] = {}
    for invariant_id, counts in result.per_invariant().items():
        total = families.setdefault(family_of(invariant_id), dict.fromkeys(VERDICTS, 0))
        for verdict, count in counts.items():
            total[verdict] += count
    return families


def _position(order: list[str], item: str) -> int:
    return order.index(item) if item in order else len(order)


def render_compatibility(
    columns: Sequence[Column],
    *,
    fixtures: str,
    retry_sections: Sequence[Section] = (),
    gateways: Sequence[GatewayRun] = (),
) -> str:
    """``reports/compatibility.md``: regenerated by ``conformance matrix``, never by hand.
    ``retry_sections``: the retry column's tables (:func:`.retry_layers.retry_sections`);
    ``gateways``: the real gateways' runs (:func:`.gateway_findings.gateway_runs`)."""
    lines = [
        "# Compatibility of real libraries",
        "",
        "<!-- Generated by `conformance matrix` (or `tox -m matrix`); do not edit by hand. -->",
        "",
        "Each library is driven through its shim (`conformance/adapters/thirdparty/`, the "
        f"JavaScript ones `shims/js/`) over {fixtures}, with its own retries off. Each case "
        "runs once and is judged under both contracts of INVARIANTS.md: `interop` (what the "
        "caller loses) and `harness` (the default of `conformance run`). The retry column "
        "runs the `retry-profile` fixtures with the library's default retry layer, whose policy "
        "the shim declares, and judges R under both contracts, requests and waits measured at "
        "the fake provider.",
        "",
        "## Libraries",
        "",
        "Meaning lost: cases that fail under the interop contract (of which no loss shown: "
        "those whose results show no concrete loss); contract gaps: failures under the harness "
        "contract alone.",
        "",
        *_md_table((_LIBRARY_HEADER, tuple(map(_library_row, columns)))),
    ]
    lines += _todo_section(columns)
    lines += _lost_section(columns)
    lines += ["", f"## {GAPS_TITLE}", "", GAPS_NOTE, "", *_md_table(gaps_table(columns), code=3)]
    lines += _verdicts_section(columns)
    for source in FINDING_SOURCES:
        if any(f.measured & {column.name for column in columns} for f in source.findings):
            lines += _findings_section(columns, source)
    lines += _retry_section(retry_sections)
    lines += gateway_section(gateways)
    lines += _closing_note(columns)
    return "\n".join(lines) + "\n"


def _library_row(column: Column) -> tuple[str, ...]:
    lost = meaning_lost(column)
    return (
        column.name,
        column.title,
        ", ".join(f"{k} {v}" for k, v in column.versions.items()),
        str(len(column.result.cases)),
        str(len(lost)),
        str(sum(not row.damage for row in lost)),
        str(sum(count for _, count, _, _ in contract_gaps(column))),
    )


def _lost_rows(column: Column) -> tuple[tuple[str, ...], ...]:
    return tuple((row.case, ", ".join(row.invariants), row.cause) for row in meaning_lost(column))


def lost_table(columns: Sequence[Column]) -> Table:
    """Every library's meaning-lost rows, the library first (the HTML matrix has one table)."""
    rows = tuple((column.name, *row) for column in columns for row in _lost_rows(column))
    return ("library", *_LOST_HEADER), rows


def _lost_section(columns: Sequence[Column]) -> list[str]:
    lines = ["", f"## {LOST_TITLE}", "", LOST_NOTE]
    for column in columns:
        rows = _lost_rows(column)
        lines += ["", f"### {_md(column.name)}", ""]
        lines += _md_table((_LOST_HEADER, rows), code=0) if rows else ["No interop failure."]
    return lines


TODO_TITLE = "Maintainer's to-do (interop contract)"
TODO_NOTE = (
    "Per library, what to fix: its interop failures grouped by cause, each with the cases "
    "that show it and the upstream issue or pull request that tracks it where one was found "
    "in the project's tracker. The causes are written by hand in "
    "`fixtures/causes/`; a failure without one is listed with what the caller "
    "lost, as “cause not yet written”. Each library's contract gaps follow its list, apart: "
    "they are the harness's own rules, not bugs under the interop contract."
)
_TODO_HEADER = ("cause", "shown by", "upstream")
_TODO_COUNTS_HEADER = (
    *("library", "interop failures", "causes written"),
    *("failures with an upstream link", "cause not yet written"),
)


def _todo_section(columns: Sequence[Column]) -> list[str]:
    lists = {column.name: _to_do(column) for column in columns}
    lines = ["", f"## {TODO_TITLE}", "", TODO_NOTE, ""]
    counts = tuple(_todo_counts(name, items) for name, items in lists.items())
    lines += _md_table((_TODO_COUNTS_HEADER, counts))
    for column in columns:
        rows = tuple(map(_todo_row, lists[column.name]))
        lines += ["", f"### {_md(column.name)}", ""]
        lines += _md_table((_TODO_HEADER, rows)) if rows else ["No interop failure."]
        failing = {case for item in lists[column.name] for case in item.cases}
        ran = {case.case for case in column.interop.cases}
        for known in not_reproduced(column.name, failing, ran):
            shown = ", ".join(f"`{case}`" for case in known.cases)
            lines += ["", f"Not reproduced in this run: {_md(known.cause)} ({shown})."]
        gaps = contract_gaps(column)
        if gaps:
            counted = ", ".join(f"{id} {count} (e.g. `{case}`)" for id, count, case, _ in gaps)
            lines += ["", f"Contract gaps (harness contract only), cases per invariant: {counted}."]
    return lines


def _to_do(column: Column) -> list[ToDo]:
    return to_do(column.name, [(row.case, row.cause) for row in meaning_lost(column)])


def _todo_counts(name: str, items: Sequence[ToDo]) -> tuple[str, ...]:
    written = sum(item.cause is not None for item in items)
    return (
        name,
        str(sum(len(item.cases) for item in items)),
        str(written),
        str(sum(len(item.cases) for item in items if item.upstream)),
        str(len(items) - written),
    )


def _todo_row(item: ToDo) -> tuple[str, ...]:
    shown = ", ".join(f"`{case}`" for case in item.cases)
    if item.cause is None:
        return (_todo_cause(item, emphasis="*"), shown, "")
    link = f"[{item.cause.upstream_label}]({item.upstream})" if item.upstream else ""
    return (item.cause.cause, shown, link)


def _todo_cause(item: ToDo, emphasis: str = "") -> str:
    if item.cause is None:
        return f"{emphasis}cause not yet written{emphasis}: {_shortened(item.lost)}"
    return item.cause.cause


def todo_table(columns: Sequence[Column]) -> Table:
    """Every library's to-do lines, the library first (the HTML matrix has one table)."""
    rows = tuple(
        (column.name, _todo_cause(item), ", ".join(item.cases), item.upstream)
        for column in columns
        for item in _to_do(column)
    )
    return ("library", *_TODO_HEADER), rows


def _shortened(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _verdicts_section(columns: Sequence[Column]) -> list[str]:
    counts = tuple(_counts_row(column, contract) for column in columns for contract in CONTRACTS)
    lines = ["", "## Verdicts", "", *_md_table((("column", "contract", *VERDICTS), counts))]
    for contract in CONTRACTS:
        lines += _family_table(columns, contract)
    return lines


def _counts_row(column: Column, contract: Contract) -> tuple[str, ...]:
    counts = column.judged(contract).counts()
    return (column.name, contract, *(str(counts[verdict]) for verdict in VERDICTS))


def _family_table(columns: Sequence[Column], contract: Contract) -> list[str]:
    tables = {column.name: family_counts(column.judged(contract)) for column in columns}
    families = sorted({f for table in tables.values() for f in table}, key=family_order)
    rows = tuple(
        (family, *(counts_cell(tables[column.name].get(family)) for column in columns))
        for family in families
    )
    return [
        "",
        f"### Per family, {contract} contract",
        "",
        "Each cell: pass / fail (non-strict, info and n/a in brackets when present).",
        "",
        *_md_table((("family", *(column.name for column in columns)), rows)),
    ]


def counts_cell(counts: Mapping[Verdict, int] | None) -> str:
    """Verdict counts in a cell: pass / fail, the others in brackets when present."""
    if not counts:
        return "·"
    extra = [f"{counts[v]} {v}" for v in ("non-strict", "info", "n/a") if counts[v]]
    suffix = f" ({', '.join(extra)})" if extra else ""
    return f"{counts['pass']} / {counts['fail']}{suffix}"


def _findings_section(columns: Sequence[Column], source: FindingSource) -> list[str]:
    rows = tuple(
        (
            row.finding.claim,
            row.finding.case,
            *(
                row.observed[column.name]
                + (
                    f" ({source.source}: {row.differs[column.name]})"
                    if column.name in row.differs
                    else ""
                )
                for column in columns
            ),
        )
        for row in check_findings(columns, source.findings)
    )
    header = ("claim", "fixture", *(column.name for column in columns))
    return ["", f"## {source.title}", "", source.note, "", *_md_table((header, rows), code=1)]


RETRY_TITLE = "Retry layers (R judged)"
RETRY_NOTE = (
    "Each library with its default retry settings; requests and the waits between them as "
    "the fake provider saw them, then what the caller got."
)


def _retry_section(sections: Sequence[Section]) -> list[str]:
    if not sections:
        return []
    lines = ["", f"## {RETRY_TITLE}"]
    for section in sections:
        table = section.table
        body = _md_table(table, code=section.code) if table[1] else ["None."]
        lines += ["", f"### {section.title}", "", section.note, "", *body]
    return lines


def retry_table(columns: Sequence[Column]) -> Table:
    """Requests and waits per fixture of the retry column, per library."""
    measured = [column for column in columns if "harness" in column.retries]
    if not measured:
        return (), ()
    header = ("fixture", *(column.name for column in measured))
    rows = tuple(
        (case.case, *(str(retry_cell(c.retry_case(case.case)) or "·") for c in measured))
        for case in measured[0].retries["harness"].cases
    )
    return header, rows


def _closing_note(columns: Sequence[Column]) -> list[str]:
    lines = ["", "## Closing note: where this run differs from the findings", ""]
    rows = [
        (source, row)
        for source in FINDING_SOURCES
        for row in check_findings(columns, source.findings)
    ]
    differences = [
        (source, row, name, expected)
        for source, row in rows
        for name, expected in row.differs.items()
    ]
    unmeasured = sum(
        value == NOT_RUN
        for _, row in rows
        for name, value in row.observed.items()
        if row.finding.expected_for(name) is not None
    )
    if not differences:
        lines.append(
            "Every finding above was reproduced wherever it was claimed and its fixture ran "
            f"({', '.join(_md(column.name) for column in columns)})"
            + (f"; {unmeasured} finding cell(s) not measured here." if unmeasured else ".")
        )
    for source, row, name, expected in differences:
        column = next(c for c in columns if c.name == name)
        versions = ", ".join(f"{k} {v}" for k, v in column.versions.items())
        lines.append(
            f"- {_md(name)} ({_md(versions)}): {_md(row.finding.claim)} — observed "
            f"{row.observed[name]} ({source.source}: {expected}) "
            f"(`{row.finding.case}`: {_md(outcome(row.finding.shown_in(column)))})."
        )
    return [*lines, ""]


def _md_table(table: Table, *, code: int | None = None) -> list[str]:
    """A Markdown table; the cells of column ``code`` (fixture ids) in code spans."""
    header, rows = table
    lines = ["| " + " | ".join(map(_md, header)) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [f"`{_md(cell)}`" if i == code else _md(cell) for i, cell in enumerate(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines
