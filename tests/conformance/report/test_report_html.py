"""The HTML report: hostile content stays text, links are http(s) only, the page is whole."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import report_builders as build

from conformance.invariants import CATALOGUE
from conformance.report import render_html, render_matrix, write_reports
from conformance.report.html import safe_href, visible
from conformance.results import RunResult

ALLOWED_TAGS = {
    "html", "head", "meta", "title", "link", "style", "body", "main", "header", "footer",
    "section", "div", "span", "p", "h1", "h2", "h3", "h4", "dl", "dt", "dd", "a", "br",
    "strong", "code", "pre", "details", "summary", "table", "thead", "tbody", "tr", "th",
    "td", "colgroup", "col", "form", "fieldset", "legend", "input", "label", "script", "svg",
    "g", "rect", "text", "tspan",
}  # fmt: skip


class Collector(HTMLParser):
    """Every start tag with its attributes, and the text of every <script>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def parse(page: str) -> Collector:
    collector = Collector()
    collector.feed(page)
    collector.close()
    return collector


@pytest.fixture(scope="module")
def hostile() -> RunResult:
    return build.hostile_result()


@pytest.fixture(scope="module")
def page(hostile: RunResult) -> str:
    return render_html(hostile)


def test_no_payload_appears_as_markup(page: str) -> None:
    for payload in build.PAYLOADS:
        assert payload not in page
    assert "<img" not in page.lower()
    assert "</textarea" not in page.lower()
    assert page.lower().count("<script") == 1  # the report's own filter script


def test_payloads_are_shown_as_text(page: str) -> None:
    assert "&lt;script&gt;window.__pwned=1;alert(1)&lt;/script&gt;" in page
    assert "&lt;/textarea&gt;" in page
    assert "&#34;&gt;&lt;img src=x onerror=&#34;window.__pwned=3;alert(1)&#34;&gt;" in page


def test_only_expected_elements_and_no_event_handlers(page: str) -> None:
    collector = parse(page)
    assert {tag for tag, _ in collector.tags} <= ALLOWED_TAGS
    for tag, attributes in collector.tags:
        assert not [name for name in attributes if name.startswith("on")], tag


def test_only_http_urls_become_links(page: str) -> None:
    hrefs = [attrs.get("href") or "" for tag, attrs in parse(page).tags if tag == "a"]
    external = [href for href in hrefs if not href.startswith("#")]
    assert external == [build.GOOD_URL]
    for tag, attributes in parse(page).tags:
        for value in attributes.values():
            assert "javascript:" not in (value or "").lower(), (tag, attributes)


def test_hostile_urls_are_listed_as_text(page: str) -> None:
    assert "javascript:window.__pwned=4;alert(1)" in page
    assert page.count("not an http(s) URL; not linked") == len(build.HOSTILE_URLS)


def test_invisible_characters_are_made_visible(page: str) -> None:
    for char in ("\u202e", "\u202c", "\ufeff", "\x00", "\r"):
        assert char not in page, repr(char)
    assert "a\\r\nb\\ufeffc\\x00d\\u202eevil\\u202cf" in page


def test_visible_keeps_ordinary_text() -> None:
    assert visible("Météo à Paris : 晴天 🌞\n\tok") == "Météo à Paris : 晴天 🌞\n\tok"
    assert visible("\u200b\u2028\ud800") == "\\u200b\\u2028\\ud800"


@pytest.mark.parametrize(
    ("url", "relative", "expected"),
    [
        ("https://github.com/a/b/issues/1", False, "https://github.com/a/b/issues/1"),
        ("HTTP://example.com/x?y=1#z", False, "HTTP://example.com/x?y=1#z"),
        ("javascript:alert(1)", True, None),
        (" javascript:alert(1)", True, None),
        ("java\tscript:alert(1)", True, None),
        ("data:text/html,x", True, None),
        ("vbscript:x", True, None),
        ("//evil.example/x", True, None),
        ('https://example.com/"><script>', False, None),
        ("https://example.com/\u202e", False, None),
        ("adapter-a/index.html", False, None),
        ("adapter-a/index.html", True, "adapter-a/index.html"),
        ("../runs/b/index.html#inv-C1", True, "../runs/b/index.html#inv-C1"),
    ],
)
def test_safe_href(url: str, relative: bool, expected: str | None) -> None:
    assert safe_href(url, relative=relative) == expected


def test_content_security_policy_admits_only_the_pages_own_script(page: str) -> None:
    collector = parse(page)
    policy = next(
        attrs["content"] or ""
        for tag, attrs in collector.tags
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in policy
    (script,) = collector.scripts
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy


def test_page_is_self_contained(page: str) -> None:
    collector = parse(page)
    for tag, attributes in collector.tags:
        assert "src" not in attributes, tag
        if tag == "link":
            assert attributes.get("href") == "data:,"
    assert "@import" not in page
    assert "url(" not in page


def test_failing_case_shows_transcript_diff_requests_and_reproducer(page: str) -> None:
    section = page[page.index('id="case-hostile-content"') :]
    for heading in (
        "Wire transcript",
        "Expected vs observed",
        "Provider request log",
        "Adapter stderr",
        "Reproduce",
    ):
        assert heading in section
    bom = "".join(f'<span class="esc">\\x{byte:02x}</span>' for byte in b"\xef\xbb\xbf")
    assert bom in section  # the BOM, escaped in the transcript
    assert '<span class="esc nl">\\n</span>' in section
    assert "after 250 ms" in section  # the pause before a write
    assert 'class="changed first"' in section  # the first divergence
    assert "conformance run --fixtures repro/hostile-content.yaml --adapter ADAPTER" in section
    assert "curl -N -X POST http://127.0.0.1:8765/hostile-content/v1/chat/completions" in section
    assert "fakeprovider serve --fixtures repro" in section


def test_unreplayable_scenario_is_explained(page: str) -> None:
    section = page[page.index('id="case-id--script-window') :]
    assert "Not available: the recorded scenario does not validate" in section


def test_filters_are_hidden_until_the_script_runs(page: str) -> None:
    form = next(attrs for tag, attrs in parse(page).tags if tag == "form")
    assert "hidden" in form
    assert 'data-match="C:fail' in page


def test_each_invariant_says_why_it_matters(page: str) -> None:
    assert f"Why it matters: {CATALOGUE['T6'].rationale}" in page


def test_passing_cases_are_listed_compactly() -> None:
    run = build.result([build.case("all-good", {"G1": "pass", "T7": ("info", "assembled x")})])
    page = render_html(run)
    assert 'Passing cases <span class="muted">(1)</span>' in page
    assert "assembled x" in page
    assert "Wire transcript" not in page
    assert "Conformant" in page


def test_write_reports(tmp_path: Path, hostile: RunResult) -> None:
    paths = write_reports(hostile, tmp_path / "out")
    assert {path.name for path in paths.values()} == {"index.html", "results.json", "junit.xml"}
    assert RunResult.from_json(paths["json"].read_text(encoding="utf-8")) == hostile
    assert paths["html"].read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_matrix_escapes_and_links(hostile: RunResult) -> None:
    plain = build.result(
        [build.case("one", {"C1": ("fail", "x"), "G1": "pass"})], name="plain-adapter"
    )
    page = render_matrix([(plain, "plain/index.html"), (hostile, "javascript:alert(1)")])
    for payload in build.PAYLOADS:
        assert payload not in page
    assert "<script" not in page.lower()
    hrefs = [attrs.get("href") or "" for tag, attrs in parse(page).tags if tag == "a"]
    assert hrefs and all(href.startswith("plain/index.html") for href in hrefs)
    assert "plain/index.html#inv-C1" in hrefs
    assert re.search(r'href="plain/index.html#inv-C1" class="badge v-fail">fail</a>', page)
    assert "not run" in page  # plain never judged the hostile catalogue's extra invariant


def test_request_log_shows_waits_and_body_identity() -> None:
    def request(attempt: int, at: float, body: str) -> dict[str, object]:
        return {
            "attempt": attempt,
            "method": "POST",
            "path": "/retry/v1/chat/completions",
            "headers": [["content-type", "application/json"]],
            "body": body,
            "body_base64": body,
            "received_at": at,
            "ended_at": at + 0.01,
            "ended": "complete",
        }

    requests = [request(1, 100.0, "a"), request(2, 101.01, "a"), request(3, 103.02, "b")]
    run = build.result([build.case("retry", {"R4": ("fail", "body differs")}, requests=requests)])
    page = render_html(run)
    assert page.count("<td>identical</td>") == 1 and page.count("<td>differs</td>") == 1
    assert "+1010 ms" in page and "+3020 ms" in page
    assert "1000 ms" in page and "2000 ms" in page  # the waits between attempts
    assert "Not available: the results hold no scenario for this case" in page
