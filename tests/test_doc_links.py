"""Every relative link in the Markdown docs opens a file of the repository (and a heading of
it, for an anchor), and so does every path an invariant's source cites; external links are
only checked to be well-formed https URLs (no network)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conformance.invariants import CATALOGUE

ROOT = Path(__file__).resolve().parents[1]
DOCS = (
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "examples" / "README.md",
    ROOT / "fixtures" / "README.md",
    ROOT / "reports" / "README.md",
)
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<(https?://[^>\s]+)>")
# What a source cites: a repository path to a Markdown file (with its anchor) or a URL.
_CITED = re.compile(r"https://\S+|(?<![\w/.:-])(?:[\w.-]+/)*[\w.-]+\.md(?:#[\w-]+)?")


def _cited(source: str) -> list[str]:
    return _CITED.findall(source)


def _prose(path: Path) -> list[str]:
    """The lines of ``path`` outside fenced code blocks."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def _anchors(path: Path) -> frozenset[str]:
    return frozenset(_slug(line.lstrip("#")) for line in _prose(path) if re.match(r"#{1,6} ", line))


def _problem(target: str, doc: Path) -> str | None:
    """What is wrong with a link ``target`` written in the file ``doc``."""
    parts = urlsplit(target)
    if parts.scheme:
        if parts.scheme == "mailto":
            return None
        if parts.scheme != "https" or not parts.netloc:
            return f"{target}: not a well-formed https URL"
        return None
    path = (doc.parent / parts.path).resolve() if parts.path else doc
    if not path.exists():
        return f"{target}: no such file"
    if parts.fragment and path.suffix == ".md" and parts.fragment not in _anchors(path):
        return f"{target}: no heading #{parts.fragment}"
    return None


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_of_a_doc_resolves(doc: Path) -> None:
    problems = []
    for line in _prose(doc):
        for match in _LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            target = match.group(1) or match.group(2)
            problem = _problem(target, doc) if match.group(1) else None
            if match.group(2) and not target.startswith("https://"):
                problem = f"{target}: not an https URL"
            if problem is not None:
                problems.append(problem)
    assert problems == []


def test_every_file_an_invariant_source_cites_exists() -> None:
    problems = [
        f"{invariant.id}: {problem}"
        for invariant in CATALOGUE.values()
        for target in _cited(invariant.source)
        if (problem := _problem(target, ROOT / "README.md")) is not None
    ]
    assert problems == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# Title\n\n## A `code` section\n", encoding="utf-8")
    assert _problem("a.md#a-code-section", doc) is None
    assert _problem("#title", doc) is None
    assert _problem("a.md#nowhere", doc) == "a.md#nowhere: no heading #nowhere"
    assert _problem("b.md", doc) == "b.md: no such file"
    assert _problem("http://example.com", doc) is not None
    assert _cited("see docs/x.md#y; https://a.example/b#c") == [
        "docs/x.md#y",
        "https://a.example/b#c",
    ]


def test_every_docs_page_is_checked_and_listed_in_the_index() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    pages = sorted((ROOT / "docs").glob("*.md"))
    assert ROOT / "docs" / "adapter-protocol.md" in pages
    for page in pages:
        assert page in DOCS
        assert page.name == "README.md" or f"]({page.name})" in index, page.name


def test_the_readmes_point_to_the_adapter_protocol() -> None:
    assert "](docs/adapter-protocol.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    examples = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")
    assert "](../docs/adapter-protocol.md)" in examples
