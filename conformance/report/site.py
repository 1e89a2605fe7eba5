"""The results site (``conformance matrix site``): the matrix's columns as static pages.

A pure function of the saved columns: the same files give the same site byte for byte,
whichever processes or machines wrote them. The pages load nothing (their CSP allows no
source but inline styles and ``data:`` images); the badges are SVG files of their own, for a
library's README to embed. Every string from a results file is escaped (HTML by Jinja's
autoescape, SVG by :func:`xml.sax.saxutils.escape`), and a column's name becomes a path only
if it is a plain slug.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

from ..codes import ConformanceError
from ..results import CaseResult, RunResult
from ..verdicts import ATTENTION, CONTRACTS, Contract, Verdict
from .compatibility import Column
from .html import count_summary, headline, render_html, render_matrix, render_page
from .upstream import cause_of

# Where a failure's invariant is explained: the catalogue page of the documentation.
DOCS_URL = "https://github.com/OWNER/streamconform/blob/main/docs/"
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# shields.io's colours, by a cell's headline verdict.
_BADGE_COLOURS = {"fail": "#e05d44", "non-strict": "#dfb317", "pass": "#4c1"}


class SiteInputError(ConformanceError, ValueError):
    """A column the site cannot be built from (a name that is no plain slug)."""


@dataclass(frozen=True)
class SiteCell:
    """One library's cases of one dialect judged under one contract."""

    dialect: str
    contract: Contract
    status: Verdict
    counts: str
    href: str


@dataclass(frozen=True)
class SiteLibrary:
    name: str
    title: str
    versions: str
    cells: tuple[SiteCell, ...]


@dataclass(frozen=True)
class SiteFailure:
    dialect: str
    case: str
    invariant: str
    verdict: Verdict
    reason: str
    cause: str
    upstream: str
    docs: str


@dataclass(frozen=True)
class HistoryRow:
    versions: str
    counts: tuple[str, ...]  # per contract


def site_files(
    columns: Sequence[Column], history: Sequence[Sequence[Column]] = (), docs_url: str = DOCS_URL
) -> dict[str, str]:
    """Every file of the site by its path, relative to the site's folder. ``history``: the
    columns of earlier runs, oldest first, shown per library beside today's."""
    files: dict[str, str] = {}
    libraries = []
    runs: list[tuple[RunResult, str]] = []
    for column in columns:
        name = slug(column.name)
        cells = []
        for contract in CONTRACTS:
            result = column.judged(contract)
            report = f"reports/{name}/{contract}/index.html"
            files[report] = render_html(result)
            runs.append((result, report))
            files[f"badges/{name}.{contract}.svg"] = badge_svg(
                f"{name} {contract}", result.counts()
            )
            cells += [
                SiteCell(dialect, contract, headline(counts), count_summary(counts), report)
                for dialect, counts in _per_dialect(result).items()
            ]
        library = SiteLibrary(name, column.title, _versions(column), tuple(cells))
        libraries.append(library)
        files[f"libraries/{name}.html"] = render_page(
            "site_library.html.jinja",
            library=library,
            failures={c: _failures(column, c, docs_url) for c in CONTRACTS},
            history=_history(column, history),
            contracts=CONTRACTS,
        )
    dialects = sorted({cell.dialect for library in libraries for cell in library.cells})
    files["index.html"] = render_page(
        "site_index.html.jinja",
        libraries=libraries,
        columns=[(d, c) for d in dialects for c in CONTRACTS],
    )
    files["matrix.html"] = render_matrix([(r, link) for r, link in runs])
    return dict(sorted(files.items()))


def badge_svg(label: str, counts: Mapping[Verdict, int]) -> str:
    """A shields-style badge: ``label`` beside the run's headline and its failure count."""
    status = headline(counts)
    failing = sum(counts.get(verdict, 0) for verdict in ATTENTION)
    message = f"{status} ({failing} to look at)" if failing else f"{status} ({counts['pass']})"
    left, right = 6 * len(label) + 10, 6 * len(message) + 10
    width = left + right
    text = f"{label}: {message}"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{escape(text, {chr(34): "&quot;"})}">'
        f"<title>{escape(text)}</title>"
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{_BADGE_COLOURS[status]}"/>'
        '<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="5" y="14">{escape(label)}</text>'
        f'<text x="{left + 5}" y="14">{escape(message)}</text>'
        "</g></svg>\n"
    )


def slug(name: str) -> str:
    """``name`` if it can be a path component of the site: a plain slug."""
    if not _SLUG.fullmatch(name):
        raise SiteInputError(f"column name {name!r} is no plain slug (letters, digits, . _ -)")
    return name


def _dialect(case: CaseResult) -> str:
    return str(case.scenario.get("dialect", "chat-completions"))


def _per_dialect(result: RunResult) -> dict[str, Counter[Verdict]]:
    tallies: dict[str, Counter[Verdict]] = {}
    for case in result.cases:
        tally = tallies.setdefault(_dialect(case), Counter())
        tally.update(verdict.verdict for verdict in case.verdicts.values())
    return dict(sorted(tallies.items()))


def _versions(column: Column) -> str:
    return ", ".join(f"{name} {version}" for name, version in sorted(column.versions.items()))


def _failures(column: Column, contract: Contract, docs_url: str) -> list[SiteFailure]:
    failures = []
    for case in sorted(column.judged(contract).cases, key=lambda case: case.case):
        for invariant, verdict in sorted(case.verdicts.items()):
            if verdict.verdict not in ATTENTION:
                continue
            known = cause_of(column.name, case.case)
            failures.append(
                SiteFailure(
                    dialect=_dialect(case),
                    case=case.case,
                    invariant=invariant,
                    verdict=verdict.verdict,
                    reason=verdict.reason,
                    cause=known.cause if known else "",
                    upstream=known.upstream if known else "",
                    docs=f"{docs_url}invariants.md#{invariant.lower()}",
                )
            )
    return failures


def _history(column: Column, history: Sequence[Sequence[Column]]) -> list[HistoryRow]:
    """The library's earlier columns (same name), oldest first, then today's."""
    earlier = [c for columns in history for c in columns if c.name == column.name]
    if not earlier:
        return []
    return [
        HistoryRow(_versions(c), tuple(count_summary(c.judged(k).counts()) for k in CONTRACTS))
        for c in (*earlier, column)
    ]
