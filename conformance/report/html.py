"""The HTML reports: one self-contained page per run, and a matrix of several runs.

Everything in a result may come from a hostile stream or a hand-edited results file, so
the templates never mark anything safe: jinja2 escapes every expression, a ``finalize``
hook makes invisible characters (controls, bidi overrides, BOM) visible first, only
http(s) URLs become links, and a Content-Security-Policy admits nothing but the page's
own style and filter script (by hash), so even an escaping bug could not run a script
or fetch a resource.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from typing import Any

import jinja2
import markupsafe

from fakeprovider.dialects import DEFAULT_DIALECT

from ..events import DEFAULT_PROTOCOL_DIALECTS
from ..kept import cut_summary
from ..results import CaseResult, RunResult
from ..verdicts import (
    ATTENTION,
    BY_SEVERITY,
    FAMILY_TITLES,
    VERDICTS,
    CatalogueEntry,
    Verdict,
    family_of,
    family_order,
    reading_order,
    worst,
)
from .gateway import GatewayView, gateway_view
from .transcript import (
    AttemptTranscript,
    DiffRow,
    ReplayError,
    Reproducer,
    case_scenario,
    outcome_diff,
    reproducer,
    transcript,
)

VERDICT_CLASS: dict[str, str] = {
    "fail": "fail",
    "non-strict": "nonstrict",
    "pass": "pass",
    "info": "info",
    "n/a": "na",
}
_INVISIBLE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Zl", "Zp"}
_HTTP_URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&()*+,;=%]+", re.IGNORECASE)
_RELATIVE_URL = re.compile(r"(?![A-Za-z][A-Za-z0-9+.\-]*:)(?!//)[A-Za-z0-9\-._~/?#@!$&()*+,;=%]+")
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")
_CHART_WIDTH = 520.0
_NONE = "'none'"


# --- text safety ------------------------------------------------------------------------


@cache
def _visible_char(char: str) -> str:
    if char in "\n\t" or unicodedata.category(char) not in _INVISIBLE_CATEGORIES:
        return char
    code = ord(char)
    if char == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """Control, format (bidi overrides, BOM, zero-width) and surrogate characters escaped."""
    if text.isprintable():
        return text
    return "".join(_visible_char(char) for char in text)


def _finalize(value: object) -> object:
    # Markup here is only ever a macro's output, whose own expressions were finalized.
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return visible(value)
    return value


def _milliseconds(value: float) -> str:
    return f"{value:g} ms"


def safe_href(url: str, *, relative: bool = False) -> str | None:
    """``url`` if it is a plain http(s) URL (or, if allowed, a relative one); else None."""
    if _HTTP_URL.fullmatch(url):
        return url
    if relative and _RELATIVE_URL.fullmatch(url):
        return url
    return None


def slug(text: str) -> str:
    return _SLUG.sub("-", text).strip("-") or "x"


def _anchors(ids: Iterable[str], prefix: str) -> dict[str, str]:
    """Unique, URL-fragment-safe element ids for arbitrary (possibly hostile) ids."""
    anchors: dict[str, str] = {}
    taken: set[str] = set()
    for ident in ids:
        if ident in anchors:
            continue
        anchor, n = f"{prefix}-{slug(ident)}", 1
        while anchor in taken:
            n += 1
            anchor = f"{prefix}-{slug(ident)}-{n}"
        anchors[ident] = anchor
        taken.add(anchor)
    return anchors


# --- jinja ------------------------------------------------------------------------------


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("conformance.report", "templates"),
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["ms"] = _milliseconds
    env.globals["verdict_class"] = VERDICT_CLASS
    env.globals["verdict_order"] = BY_SEVERITY  # tiles, table columns, chart segments
    env.globals["attention_verdicts"] = ATTENTION
    return env


def _csp_hash(template: str) -> str:
    """The CSP source for an inline ``<style>``/``<script>`` holding ``template`` verbatim."""
    text = _environment().get_template(template).render()
    digest = hashlib.sha256(text.encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


def _render(template: str, *, script: bool, **context: Any) -> str:
    policy = [
        "default-src 'none'",
        f"style-src {_csp_hash('style.css.jinja')}",
        f"script-src {_csp_hash('filters.js.jinja') if script else _NONE}",
        "img-src data:",
        "base-uri 'none'",
        "form-action 'none'",
    ]
    return _environment().get_template(template).render(csp="; ".join(policy), **context)


# --- shared view pieces -----------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    text: str
    href: str | None


@dataclass(frozen=True)
class Segment:
    verdict: str
    count: int
    x: float
    width: float


@dataclass(frozen=True)
class FamilyBar:
    family: str
    title: str
    total: int
    segments: tuple[Segment, ...]
    y: int


def _family_title(family: str) -> str:
    return FAMILY_TITLES.get(family, "")


def _catalogue(result: RunResult) -> dict[str, CatalogueEntry]:
    """Catalogue entries by id, plus bare entries for ids only the cases mention, in
    reading order (family as in INVARIANTS.md, then number)."""
    entries = {entry["id"]: entry for entry in result.catalogue}
    for case in result.cases:
        for invariant_id in case.verdicts:
            entries.setdefault(invariant_id, _bare_entry(invariant_id))
    return {
        key: {**entries[key], "family": entries[key]["family"] or family_of(key)}
        for key in sorted(entries, key=reading_order)
    }


def _bare_entry(invariant_id: str) -> CatalogueEntry:
    return {
        "id": invariant_id,
        "family": family_of(invariant_id),
        "family_title": "",
        "level": "",
        "statement": "",
        "source": "",
        "needs": [],
    }


def _match(pairs: Iterable[tuple[str, str]]) -> str:
    """The ``data-match`` tokens the filter script reads: ``family:verdict``."""
    return " ".join(sorted({f"{slug(family)}:{verdict}" for family, verdict in pairs}))


def headline(counts: Mapping[Verdict, int]) -> Verdict:
    """The run's headline verdict: fail, else non-strict, else pass."""
    return worst(verdict for verdict in ATTENTION if counts[verdict]) or "pass"


def count_summary(counts: Mapping[Verdict, int]) -> str:
    return " · ".join(f"{counts[v]} {v}" for v in BY_SEVERITY if counts.get(v))


def _bars(
    counts_by_family: dict[str, dict[Verdict, int]], titles: Mapping[str, str]
) -> tuple[FamilyBar, ...]:
    bars = []
    for row, (family, counts) in enumerate(counts_by_family.items()):
        total = sum(counts.values())
        x, segments = 0.0, []
        for verdict in BY_SEVERITY:
            if counts.get(verdict):
                width = _CHART_WIDTH * counts[verdict] / total
                segments.append(Segment(verdict, counts[verdict], round(x, 2), round(width, 2)))
                x += width
        title = titles.get(family, "")
        bars.append(FamilyBar(family, title, total, tuple(segments), row * 28))
    return tuple(bars)


# --- the run report ---------------------------------------------------------------------


@dataclass(frozen=True)
class Header:
    adapter: str
    version: str
    protocol: str
    capabilities: tuple[tuple[str, bool], ...]
    # The dialects of the run's cases: each with its number of cases, and whether the
    # adapter declares it (the cases of one it does not are n/a).
    dialects: tuple[tuple[str, int, bool], ...]
    suite_version: str
    contract: str
    spec: str
    schema: str
    started: str
    finished: str
    duration: str
    options: tuple[tuple[str, str], ...]
    status: str
    counts: dict[Verdict, int]
    cases: int
    attention: int
    interrupted: str  # "interrupted by SIGTERM after 37 of 307 cases", or ""


@dataclass(frozen=True)
class InvariantRow:
    id: str
    anchor: str
    family: str
    level: str
    statement: str
    rationale: str  # why it matters; "" for a rule or results file without one
    source: str
    needs: str
    counts: dict[Verdict, int]
    attention: tuple[tuple[str, str, str], ...]  # (case id, anchor, verdict)
    match: str


@dataclass(frozen=True)
class VerdictLine:
    invariant: str
    anchor: str
    verdict: str
    reason: str
    statement: str


@dataclass(frozen=True)
class RequestLine:
    attempt: str
    method: str
    path: str
    received: str
    ended: str
    how: str
    waited: str
    same_body: str
    headers: tuple[str, ...]
    body: str


@dataclass(frozen=True)
class CaseView:
    id: str
    anchor: str
    title: str
    description: str
    status: str
    detail: str
    duration: str
    worst: str
    counts: str
    tags: tuple[str, ...]
    match: str
    verdicts: tuple[VerdictLine, ...]
    dialect: str = ""  # shown for a case of another dialect than chat-completions
    emitted_by: str = ""
    notes: str = ""
    urls: tuple[Link, ...] = ()
    attempts: tuple[AttemptTranscript, ...] = ()
    replay_problem: str = ""
    diff: tuple[DiffRow, ...] = ()
    events: tuple[str, ...] = ()
    requests: tuple[RequestLine, ...] = ()
    stderr: str = ""
    cut: str = ""  # what the results left out to keep the case within its bytes
    repro: Reproducer | None = None
    gateway: GatewayView | None = None  # gateway mode: upstream beside gateway, and the lint


@dataclass(frozen=True)
class _Index:
    """What every part of the report looks up: the catalogue and the element ids."""

    result: RunResult
    catalogue: dict[str, CatalogueEntry]
    cases: dict[str, str]  # case id -> element id
    invariants: dict[str, str]  # invariant id -> element id

    @classmethod
    def of(cls, result: RunResult) -> _Index:
        catalogue = _catalogue(result)
        return cls(
            result,
            catalogue,
            _anchors((case.case for case in result.cases), "case"),
            _anchors(catalogue, "inv"),
        )


def render_html(result: RunResult) -> str:
    """The run's report: one self-contained, offline HTML page."""
    index = _Index.of(result)
    attention = [case for case in result.cases if _needs_attention(case)]
    attention.sort(key=lambda case: BY_SEVERITY.index(case.worst or "n/a"))
    families = sorted({e["family"] for e in index.catalogue.values()}, key=family_order)
    # Families outside the invariant catalogue (gateway mode's M and W) title themselves.
    titles = {e["family"]: e["family_title"] for e in index.catalogue.values()}
    titles |= {family: _family_title(family) for family in families if _family_title(family)}
    return _render(
        "report.html.jinja",
        script=True,
        header=_header(result, len(attention)),
        bars=_bars(_family_counts(index, families), titles),
        families=[(slug(family), family, titles.get(family, "")) for family in families],
        invariants=_invariant_rows(index),
        attention=[_with_details(_case_view(index, case), index, case) for case in attention],
        passing=[_case_view(index, case) for case in result.cases if not _needs_attention(case)],
    )


def _needs_attention(case: CaseResult) -> bool:
    return any(v.verdict in ATTENTION for v in case.verdicts.values())


def _header(result: RunResult, attention: int) -> Header:
    adapter = result.adapter
    capabilities = adapter.get("capabilities")
    declared = capabilities if isinstance(capabilities, dict) else {}
    counts = result.counts()
    return Header(
        adapter=str(adapter.get("name", "(unnamed adapter)")),
        version=str(adapter.get("version", "")),
        protocol=str(adapter.get("protocol", "")),
        capabilities=tuple((str(name), bool(on)) for name, on in declared.items()),
        dialects=_dialects(result),
        suite_version=result.suite_version,
        contract=result.contract,
        spec=result.spec,
        schema=f"{result.schema_id} v{result.schema_version}",
        started=_when(result.started_at),
        finished=_when(result.finished_at),
        duration=_duration(result.started_at, result.finished_at),
        options=tuple(_flat_options(result.options)),
        status=headline(counts),
        counts=counts,
        cases=len(result.cases),
        attention=attention,
        interrupted=(
            "" if result.interrupted is None else result.interrupted.describe(len(result.cases))
        ),
    )


def _dialects(result: RunResult) -> tuple[tuple[str, int, bool], ...]:
    spoken = result.adapter.get("dialects") or DEFAULT_PROTOCOL_DIALECTS
    cases = Counter(case.dialect or DEFAULT_DIALECT for case in result.cases)
    return tuple((dialect, count, dialect in spoken) for dialect, count in sorted(cases.items()))


def _when(stamp: str) -> str:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    zone = moment.tzname() or ""
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (f" {zone}" if zone else "")


def _duration(start: str, end: str) -> str:
    try:
        seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except (ValueError, TypeError):
        return ""
    return f"{seconds:g} s"


def _flat_options(options: dict[str, Any], prefix: str = "") -> Iterable[tuple[str, str]]:
    for key, value in options.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flat_options(value, f"{name}.")
        elif isinstance(value, list):
            yield name, ", ".join(str(item) for item in value) or "(none)"
        elif isinstance(value, bool):
            yield name, "yes" if value else "no"
        else:
            yield name, str(value)


def _family_counts(index: _Index, families: list[str]) -> dict[str, dict[Verdict, int]]:
    counts = {family: dict.fromkeys(VERDICTS, 0) for family in families}
    for case in index.result.cases:
        for invariant_id, verdict in case.verdicts.items():
            counts[index.catalogue[invariant_id]["family"]][verdict.verdict] += 1
    return {family: tally for family, tally in counts.items() if sum(tally.values())}


def _invariant_rows(index: _Index) -> list[InvariantRow]:
    table = index.result.per_invariant()
    rows = []
    for invariant_id, entry in index.catalogue.items():
        family = entry["family"]
        counts = dict(table.get(invariant_id, {}))
        flagged = tuple(
            (case.case, index.cases[case.case], case.verdicts[invariant_id].verdict)
            for case in index.result.cases
            if invariant_id in case.verdicts and case.verdicts[invariant_id].verdict in ATTENTION
        )
        rows.append(
            InvariantRow(
                id=invariant_id,
                anchor=index.invariants[invariant_id],
                family=family,
                level=entry["level"],
                statement=entry["statement"],
                rationale=entry.get("rationale", ""),
                source=entry["source"],
                needs=", ".join(entry["needs"]),
                counts=counts,
                attention=flagged,
                match=_match((family, v) for v, n in counts.items() if n),
            )
        )
    return rows


def _case_view(index: _Index, case: CaseResult) -> CaseView:
    """The case's summary and verdicts (every one; the template decides which to show)."""
    ordered = sorted(case.verdicts.items(), key=lambda item: BY_SEVERITY.index(item[1].verdict))
    verdicts = tuple(
        VerdictLine(
            invariant=invariant_id,
            anchor=index.invariants[invariant_id],
            verdict=verdict.verdict,
            reason=verdict.reason,
            statement=index.catalogue[invariant_id]["statement"],
        )
        for invariant_id, verdict in ordered
    )
    tally = dict.fromkeys(BY_SEVERITY, 0)
    for verdict in case.verdicts.values():
        tally[verdict.verdict] += 1
    return CaseView(
        id=case.case,
        anchor=index.cases[case.case],
        title=case.title,
        description=str(case.scenario.get("description", "")),
        status=case.status,
        detail=case.detail,
        duration=f"{case.duration_s:g} s",
        worst=case.worst or "n/a",
        counts=count_summary(tally),
        tags=tuple(case.tags),
        match=_match((index.catalogue[i]["family"], v.verdict) for i, v in case.verdicts.items()),
        verdicts=verdicts,
        dialect=case.dialect or "",
    )


def _with_details(view: CaseView, index: _Index, case: CaseResult) -> CaseView:
    """Add what a failing case shows: provenance, transcript, diff, requests, reproducer."""
    provenance = case.provenance
    urls = provenance.get("urls") or []
    capabilities = index.result.adapter.get("capabilities")
    details: dict[str, Any] = {
        "emitted_by": str(provenance.get("emitted_by") or ""),
        "notes": str(provenance.get("notes") or ""),
        "urls": tuple(Link(str(url), safe_href(str(url))) for url in urls),
        "diff": outcome_diff(case, capabilities if isinstance(capabilities, dict) else {}),
        "events": tuple(json.dumps(event, ensure_ascii=True) for event in case.events),
        "requests": _request_lines(case.requests),
        "stderr": case.stderr,
        "cut": cut_summary(case.cut),
    }
    try:
        scenario = case_scenario(case)
    except ReplayError as error:
        details["replay_problem"] = str(error)
        details["gateway"] = gateway_view(case, None)
    else:
        details["attempts"] = transcript(scenario)
        invocation = str(index.result.options.get("adapter") or "")
        details["repro"] = reproducer(case, scenario, invocation)
        details["gateway"] = gateway_view(case, scenario)
    return replace(view, **details)


def _request_lines(requests: list[dict[str, Any]]) -> tuple[RequestLine, ...]:
    origin = _seconds(requests[0].get("received_at")) if requests else None
    first_body = requests[0].get("body_base64") if requests else None
    lines = []
    previous_end: float | None = None
    for position, request in enumerate(requests):
        received = _seconds(request.get("received_at"))
        ended = _seconds(request.get("ended_at"))
        waited = "" if previous_end is None or received is None else _ms(received - previous_end)
        lines.append(
            RequestLine(
                attempt=str(request.get("attempt", position + 1)),
                method=str(request.get("method", "")),
                path=str(request.get("path", "")),
                received=_offset(received, origin),
                ended=_offset(ended, origin),
                how=str(request.get("ended", "")),
                waited=waited,
                same_body="" if position == 0 else _same(request.get("body_base64"), first_body),
                headers=tuple(_header_line(pair) for pair in request.get("headers") or []),
                body=str(request.get("body", "")),
            )
        )
        previous_end = ended
    return tuple(lines)


def _seconds(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _offset(moment: float | None, origin: float | None) -> str:
    return "" if moment is None or origin is None else "+" + _ms(moment - origin)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _same(body: object, first: object) -> str:
    return "identical" if body == first else "differs"


def _header_line(pair: object) -> str:
    if isinstance(pair, list | tuple) and len(pair) == 2:
        return f"{pair[0]}: {pair[1]}"
    return str(pair)


# --- the matrix -------------------------------------------------------------------------


@dataclass(frozen=True)
class MatrixColumn:
    adapter: str
    version: str
    contract: str
    href: str | None
    status: str
    counts: str


@dataclass(frozen=True)
class MatrixCell:
    verdict: str
    summary: str
    href: str | None


@dataclass(frozen=True)
class MatrixRow:
    id: str
    family: str
    level: str
    statement: str
    cells: tuple[MatrixCell, ...]
    elsewhere: str = ""  # the level under the other contracts, where it differs


@dataclass(frozen=True)
class MatrixTable:
    """A section under the matrix (e.g. what each library lost, its native retries)."""

    title: str
    note: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    level: str | None = None  # a level badge beside the title: "INFO" for observed-only


def render_matrix(
    results: Sequence[tuple[RunResult, str]], *, sections: Sequence[MatrixTable] = ()
) -> str:
    """Adapters by invariants; each cell links to that invariant in the adapter's report.
    A column names the contract its run was judged under.

    ``sections`` are shown after the matrix, every cell escaped."""
    catalogue: dict[str, CatalogueEntry] = {}
    for result, _ in results:
        for invariant_id, entry in _catalogue(result).items():
            catalogue.setdefault(invariant_id, entry)
    anchors = _anchors(catalogue, "inv")
    ids = sorted(catalogue, key=reading_order)
    tables = [(result.per_invariant(), safe_href(link, relative=True)) for result, link in results]
    rows = [
        MatrixRow(
            id=invariant_id,
            family=catalogue[invariant_id]["family"],
            level=catalogue[invariant_id]["level"],
            statement=catalogue[invariant_id]["statement"],
            cells=tuple(
                _matrix_cell(table.get(invariant_id), href, anchors[invariant_id])
                for table, href in tables
            ),
            elsewhere=_other_levels(catalogue[invariant_id]),
        )
        for invariant_id in ids
    ]
    return _render(
        "matrix.html.jinja",
        script=False,
        columns=[_matrix_column(result, link) for result, link in results],
        rows=rows,
        families=FAMILY_TITLES,
        sections=sections,
    )


def _other_levels(entry: CatalogueEntry) -> str:
    """``interop INFO`` for an invariant whose level under another contract differs."""
    levels = entry.get("levels", {})
    return ", ".join(f"{c} {level}" for c, level in levels.items() if level != entry["level"])


def _matrix_column(result: RunResult, link: str) -> MatrixColumn:
    counts = result.counts()
    return MatrixColumn(
        adapter=str(result.adapter.get("name", "(unnamed adapter)")),
        version=str(result.adapter.get("version", "")),
        contract=result.contract,
        href=safe_href(link, relative=True),
        status=headline(counts),
        counts=count_summary(counts),
    )


def _matrix_cell(counts: dict[Verdict, int] | None, href: str | None, anchor: str) -> MatrixCell:
    status = worst(verdict for verdict, count in (counts or {}).items() if count)
    if counts is None or status is None:
        return MatrixCell("none", "", None)
    target = f"{href.split('#')[0]}#{anchor}" if href else None
    return MatrixCell(status, count_summary(counts), target)


def render_page(template: str, **context: Any) -> str:
    """A page of another report built on the same base, styles and policy (no script):
    the results site's pages."""
    return _render(template, script=False, **context)
