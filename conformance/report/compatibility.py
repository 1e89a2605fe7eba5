"""The compatibility summary of real libraries, computed from their saved results.

Pure functions over :class:`~conformance.results.RunResult` columns: verdict counts per
invariant family, notable failures with the case that shows each, how each library's own
retry layer behaved (measured at the fake provider), and a check of the findings of
real-adapters.md §0 against what was observed this time. ``conformance matrix`` writes
the Markdown to ``reports/compatibility.md``; nothing here runs an adapter.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..results import CaseResult, RunResult
from ..verdicts import VERDICTS, Verdict

RETRY_PROFILE_TAG = "retry-profile"
"""Fixtures whose case measures a library's own retry layer (Matrix D of the study)."""


@dataclass(frozen=True)
class Column:
    """One library configuration: its content run and, if measured, its native retry run."""

    name: str
    title: str
    versions: Mapping[str, str]
    result: RunResult
    retry: RunResult | None = None
    report: str | None = None  # link to the column's own HTML report

    def case(self, case_id: str) -> CaseResult | None:
        return next((case for case in self.result.cases if case.case == case_id), None)

    def retry_case(self, case_id: str) -> CaseResult | None:
        if self.retry is None:
            return None
        return next((case for case in self.retry.cases if case.case == case_id), None)


# --- what a case showed, in a few words --------------------------------------------------


def outcome(case: CaseResult | None) -> str:
    """The caller-visible outcome of the case's last attempt, short."""
    if case is None:
        return "not run"
    if case.status != "completed":
        return f"{case.status}"
    events = _final_attempt(case.events)
    thrown = next((e for e in events if e.get("type") == "thrown"), None)
    if thrown is not None:
        name = str(thrown.get("message", "")).split(":", 1)[0]
        return f"raised {name}" + (f" ({thrown['code']})" if thrown.get("code") else "")
    parts = []
    for event in events:
        if event.get("type") != "block-end":
            continue
        block = event["block"]
        if block["type"] == "tool-call":
            parts.append(f"call {block['id']!r}/{block['name']!r} {_clip(block['arguments'])}")
        else:
            parts.append(f"{block['type']} {_clip(block['text'])}")
    finish = next((e for e in events if e.get("type") == "finish"), None)
    ending = "no finish" if finish is None else str(finish["reason"])
    if finish is not None and finish.get("code"):
        ending += f" {finish['code']}"
    return "; ".join([*parts, ending])


def _final_attempt(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    last_retry = max((i for i, e in enumerate(events) if e.get("type") == "retry"), default=-1)
    return list(events[last_retry + 1 :])


def _clip(text: str, limit: int = 48) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def tool_calls(case: CaseResult | None) -> list[dict[str, Any]]:
    if case is None:
        return []
    return [
        e["block"]
        for e in _final_attempt(case.events)
        if e.get("type") == "block-end" and e["block"]["type"] == "tool-call"
    ]


def threw(case: CaseResult | None) -> bool:
    return case is not None and any(e.get("type") == "thrown" for e in _final_attempt(case.events))


def succeeded(case: CaseResult | None) -> bool:
    """Handed the caller a success (a success finish, nothing raised)."""
    if case is None or threw(case):
        return False
    finishes = [e for e in _final_attempt(case.events) if e.get("type") == "finish"]
    return bool(finishes) and finishes[0]["reason"] in ("stop", "tool-calls", "max-tokens")


def text_of(case: CaseResult | None) -> str:
    if case is None:
        return ""
    return "".join(
        e["block"]["text"]
        for e in _final_attempt(case.events)
        if e.get("type") == "block-end" and e["block"]["type"] == "text"
    )


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

Observe = Callable[[Column], str]


NOT_RUN = "not run"  # the column has no such case: nothing to compare


def _in_case(case_id: str, test: Callable[[CaseResult], bool]) -> Observe:
    def observe(column: Column) -> str:
        case = column.case(case_id)
        return NOT_RUN if case is None else ("yes" if test(case) else "no")

    return observe


def _requests(case_id: str) -> Observe:
    def observe(column: Column) -> str:
        cell = retry_cell(column.retry_case(case_id))
        return NOT_RUN if cell is None else str(cell.requests)

    return observe


@dataclass(frozen=True)
class Finding:
    """A claim of real-adapters.md §0, the case that shows it, and per column the value
    the study observed (columns it did not name are compared against ``otherwise``)."""

    claim: str
    case: str
    observe: Observe
    expected: Mapping[str, str] = field(default_factory=dict)
    otherwise: str = "yes"

    def expected_for(self, column: str) -> str:
        return self.expected.get(column, self.otherwise)


_SDK_COLUMNS = ("openai", "langchain", "litellm-openai", "pydantic-ai", "llama-index")
_LITELLM = ("litellm-openai", "litellm-hosted-vllm")


def _only(columns: Sequence[str]) -> dict[str, str]:
    every = (*_SDK_COLUMNS, "litellm-hosted-vllm")
    return {name: ("yes" if name in columns else "no") for name in every}


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "§0.1 an empty stop completion is handed back as a success (no EMPTY_RESPONSE)",
        "empty-stop-no-usage",
        _in_case("empty-stop-no-usage", succeeded),
    ),
    Finding(
        "§0.1 a call whose id is never sent is not refused with MALFORMED_TOOL_CALL",
        "lmstudio-id-empty",
        _in_case("lmstudio-id-empty", lambda c: not threw(c) and "MALFORMED" not in outcome(c)),
    ),
    Finding(
        "§0.2 a name repeated on every delta is doubled (quirk A7)",
        "tool-name-repeated",
        _in_case(
            "tool-name-repeated",
            lambda c: any("get_weatherget_weather" in call["name"] for call in tool_calls(c)),
        ),
        _only(("openai", "langchain", "pydantic-ai", "llama-index")),
    ),
    Finding(
        "§0.2 an id repeated on every delta is concatenated",
        "continuation-id-repeated",
        _in_case(
            "continuation-id-repeated",
            lambda c: any("call_1call_1" in call["id"] for call in tool_calls(c)),
        ),
        _only(("openai", "llama-index")),
    ),
    Finding(
        "§0.3 a continuation with type: null crashes openai-python's accumulator",
        "continuation-type-null",
        _in_case("continuation-type-null", threw),
        _only(("openai",)),
    ),
    Finding(
        '§0.3 "" and null continuations keep the identity',
        "tool-cont-empty-id-name",
        _in_case(
            "tool-cont-empty-id-name",
            lambda c: (
                [(x["id"], x["name"]) for x in tool_calls(c)]
                == [("call_8f2c1d0b6e3a4c57a1b2c3d4", "get_weather")]
            ),
        ),
    ),
    Finding(
        "§0.4 an event with only a retry: field kills the stream (openai-python #2722)",
        "retry-field-only-event",
        _in_case("retry-field-only-event", threw),
        _only(_SDK_COLUMNS),
    ),
    Finding(
        "§0.4 litellm's own parser loses an event split over two data: lines",
        "event-over-two-data-lines",
        _in_case("event-over-two-data-lines", lambda c: succeeded(c) and text_of(c) != "Hello"),
        _only(("litellm-hosted-vllm",)),
    ),
    Finding(
        "§0.5 a clean EOF without finish and [DONE] raises only in litellm",
        "truncated-no-finish-no-done",
        _in_case("truncated-no-finish-no-done", threw),
        _only(_LITELLM),
    ),
    Finding(
        "§0.5 no library requires [DONE] (a finish, then EOF, is a success)",
        "no-done-clean-close",
        _in_case("no-done-clean-close", succeeded),
    ),
    Finding(
        "§0.6 a stream reset after the body started is not retried (native retries on)",
        "reset-mid-stream-then-ok",
        _requests("reset-mid-stream-then-ok"),
        otherwise="1",
    ),
    Finding(
        "§0.6 requests made for a 429 that never lifts (native retries on)",
        "http-429-forever",
        _requests("http-429-forever"),
        {"litellm-hosted-vllm": "1", "llama-index": "4"},
        otherwise="3",
    ),
    Finding(
        "§3.3 litellm drops a call whose id never arrives",
        "tool-never-identified",
        _in_case("tool-never-identified", lambda c: succeeded(c) and not tool_calls(c)),
        _only(_LITELLM),
    ),
    Finding(
        "§3.5 llama-index drops the second of two calls sent in one delta",
        "tool-parallel-oneshot",
        _in_case("tool-parallel-oneshot", lambda c: succeeded(c) and len(tool_calls(c)) < 2),
        _only(("llama-index",)),
    ),
)


@dataclass(frozen=True)
class FindingRow:
    finding: Finding
    observed: dict[str, str]
    differs: dict[str, str]  # column → expected value, where observed differs


def check_findings(columns: Sequence[Column]) -> list[FindingRow]:
    rows = []
    for finding in FINDINGS:
        observed = {column.name: finding.observe(column) for column in columns}
        differs = {
            name: finding.expected_for(name)
            for name, value in observed.items()
            if value not in (finding.expected_for(name), NOT_RUN)
        }
        rows.append(FindingRow(finding, observed, differs))
    return rows


# --- the Markdown page -------------------------------------------------------------------


def family_counts(result: RunResult) -> dict[str, dict[Verdict, int]]:
    families: dict[str, dict[Verdict, int]] = {}
    for invariant_id, counts in result.per_invariant().items():
        family = invariant_id.rstrip("0123456789")
        total = families.setdefault(family, dict.fromkeys(VERDICTS, 0))
        for verdict, count in counts.items():
            total[verdict] += count
    return families


def notable_failures(result: RunResult) -> list[tuple[str, int, str, str]]:
    """(invariant, failing cases, first case, its reason) per invariant with a fail."""
    found: dict[str, list[tuple[str, str]]] = {}
    for case in result.cases:
        for invariant_id, verdict in case.verdicts.items():
            if verdict.verdict == "fail":
                found.setdefault(invariant_id, []).append((case.case, verdict.reason))
    order = [entry["id"] for entry in result.catalogue]
    return [
        (inv, len(cases), cases[0][0], cases[0][1])
        for inv, cases in sorted(found.items(), key=lambda kv: _position(order, kv[0]))
    ]


def _position(order: list[str], item: str) -> int:
    return order.index(item) if item in order else len(order)


def render_compatibility(columns: Sequence[Column], *, fixtures: str) -> str:
    """``reports/compatibility.md``: regenerated by ``conformance matrix``, never by hand."""
    lines = [
        "# Compatibility of real libraries",
        "",
        "<!-- Generated by `conformance matrix` (or `tox -m matrix`); do not edit by hand. -->",
        "",
        f"Each library is driven through its shim (`conformance/adapters/thirdparty/`) over "
        f"{fixtures}, with its own retries off; verdicts as in `conformance run`. The "
        "native retry profile runs the `retry-profile` fixtures with the library's "
        "default retry settings and counts requests at the fake provider.",
        "",
        "## Libraries",
        "",
        "| column | drives | versions | cases | pass | non-strict | info | n/a | fail |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for column in columns:
        counts = column.result.counts()
        versions = ", ".join(f"{k} {v}" for k, v in column.versions.items())
        cells = " | ".join(str(counts[v]) for v in VERDICTS)
        lines.append(
            f"| {column.name} | {_md(column.title)} | {_md(versions)} | "
            f"{len(column.result.cases)} | {cells} |"
        )
    lines += _family_table(columns)
    lines += _findings_section(columns)
    lines += _retry_section(columns)
    lines += _failures_section(columns)
    lines += _closing_note(columns)
    return "\n".join(lines) + "\n"


def _family_table(columns: Sequence[Column]) -> list[str]:
    tables = {column.name: family_counts(column.result) for column in columns}
    families = sorted({f for table in tables.values() for f in table}, key=_family_order)
    lines = [
        "",
        "## Verdicts per family",
        "",
        "Each cell: pass / fail (non-strict, info and n/a in brackets when present).",
        "",
        "| family | " + " | ".join(column.name for column in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for family in families:
        cells = [_family_cell(tables[column.name].get(family)) for column in columns]
        lines.append(f"| {family} | " + " | ".join(cells) + " |")
    return lines


def _family_order(family: str) -> int:
    order = "GCTESHRQ"
    return order.index(family) if family in order else len(order)


def _family_cell(counts: Mapping[Verdict, int] | None) -> str:
    if not counts:
        return "·"
    extra = [f"{counts[v]} {v}" for v in ("non-strict", "info", "n/a") if counts[v]]
    suffix = f" ({', '.join(extra)})" if extra else ""
    return f"{counts['pass']} / {counts['fail']}{suffix}"


def _findings_section(columns: Sequence[Column]) -> list[str]:
    lines = [
        "",
        "## Findings of real-adapters.md §0, re-measured",
        "",
        "Each row: the claim, the fixture that shows it, and per library what was observed "
        "now (yes/no, or a count); a value in brackets is what the study observed where it "
        "differs.",
        "",
        "| claim | fixture | " + " | ".join(column.name for column in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for row in check_findings(columns):
        cells = [
            row.observed[column.name]
            + (f" (study: {row.differs[column.name]})" if column.name in row.differs else "")
            for column in columns
        ]
        claim = _md(row.finding.claim)
        lines.append(f"| {claim} | `{row.finding.case}` | " + " | ".join(cells) + " |")
    return lines


def _retry_section(columns: Sequence[Column]) -> list[str]:
    measured = [column for column in columns if column.retry is not None]
    if not measured:
        return []
    cases = [case.case for case in measured[0].retry.cases] if measured[0].retry else []
    lines = [
        "",
        "## Native retry profile (INFO)",
        "",
        "Each library with its default retry settings; requests and the waits between "
        "them as the fake provider saw them, then what the caller got.",
        "",
        "| fixture | " + " | ".join(column.name for column in measured) + " |",
        "|---|" + "---|" * len(measured),
    ]
    for case_id in cases:
        cells = [str(retry_cell(column.retry_case(case_id)) or "·") for column in measured]
        lines.append(f"| `{case_id}` | " + " | ".join(_md(cell) for cell in cells) + " |")
    return lines


def retry_table(columns: Sequence[Column]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The native retry profile as a header and rows (for the HTML matrix)."""
    measured = [column for column in columns if column.retry is not None]
    if not measured or measured[0].retry is None:
        return (), []
    header = ("fixture", *(column.name for column in measured))
    rows = [
        (case.case, *(str(retry_cell(c.retry_case(case.case)) or "·") for c in measured))
        for case in measured[0].retry.cases
    ]
    return header, rows


def _failures_section(columns: Sequence[Column]) -> list[str]:
    lines = ["", "## Notable failures", ""]
    for column in columns:
        failures = notable_failures(column.result)
        lines += [f"### {column.name}", ""]
        if not failures:
            lines += ["No failing verdict.", ""]
            continue
        lines += ["| invariant | failing cases | e.g. | what happened |", "|---|---|---|---|"]
        for invariant_id, count, case_id, reason in failures:
            lines.append(
                f"| {invariant_id} | {count} | `{case_id}` | {_md(outcome(column.case(case_id)))}"
                f" — {_md(reason)} |"
            )
        lines.append("")
    return lines


def _closing_note(columns: Sequence[Column]) -> list[str]:
    lines = ["## Closing note: where this run differs from the study", ""]
    differences = [
        (row, name, expected)
        for row in check_findings(columns)
        for name, expected in row.differs.items()
    ]
    if not differences:
        lines.append(
            "Every §0 finding above was reproduced for every library that ran "
            f"({', '.join(column.name for column in columns)})."
        )
    for row, name, expected in differences:
        column = next(c for c in columns if c.name == name)
        versions = ", ".join(f"{k} {v}" for k, v in column.versions.items())
        lines.append(
            f"- {name} ({_md(versions)}): {_md(row.finding.claim)} — observed "
            f"{row.observed[name]}, the study observed {expected} "
            f"(`{row.finding.case}`: {_md(outcome(column.case(row.finding.case)))})."
        )
    return [*lines, ""]


def _md(text: str) -> str:
    """A table-safe Markdown cell: no pipes, no line breaks, no raw HTML."""
    return (
        text.replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\r", " ")
        .replace("\n", " ")
    )
