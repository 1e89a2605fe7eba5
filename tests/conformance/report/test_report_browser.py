"""The hostile report in a real browser: Debian's Chromium driven by Playwright.

No script of the payloads runs, nothing is fetched, the console stays clean, the failing
case is visible and the filters work (and without JavaScript, everything is shown).
Chromium comes from ``scripts/install-chromium`` (Debian's package), never from
``playwright install``. Where that script cannot install it (no apt-get, no root), these
tests skip with its warning; the last tests here check that path with a PATH of shims.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import report_builders as build
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Request, sync_playwright

from conformance.report import render_matrix, write_reports
from conformance.report.compatibility import Column
from conformance.report.site import site_files

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
CHROMIUM = Path(os.environ.get("STREAMCONFORM_CHROMIUM", "/usr/bin/chromium"))
INSTALLER = REPO / "scripts" / "install-chromium"
SCREENSHOTS = REPO / "reports" / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def ensure_chromium() -> None:
    if os.access(CHROMIUM, os.X_OK):
        return
    installer = subprocess.run(
        [str(INSTALLER)], capture_output=True, text=True, timeout=600, check=False
    )
    if installer.returncode != 0 or not os.access(CHROMIUM, os.X_OK):
        pytest.skip(
            f"SKIPPED, NOT PASSED: {CHROMIUM} is missing and {INSTALLER.name} could not "
            f"install it (exit {installer.returncode}). {installer.stderr.strip()}"
        )


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ensure_chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def report_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    paths = write_reports(build.hostile_result(), tmp_path_factory.mktemp("report"))
    return paths["html"].as_uri()


@dataclass
class Watch:
    """Everything the page did that it should not have."""

    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        page.on("dialog", self._dialog)
        page.on("request", self._request)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _request(self, request: Request) -> None:
        self.requests.append(request.url)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)


def open_report(browser: Browser, url: str, *, javascript: bool = True) -> tuple[Page, Watch]:
    context = browser.new_context(
        java_script_enabled=javascript, viewport={"width": 1360, "height": 900}
    )
    page = context.new_page()
    watch = Watch()
    watch.attach(page)
    page.goto(url, wait_until="load")
    return page, watch


def test_hostile_report_runs_no_script_and_fetches_nothing(
    browser: Browser, report_url: str
) -> None:
    page, watch = open_report(browser, report_url)
    page.wait_for_timeout(300)  # let any (wrongly) scheduled handler or load fire
    assert page.evaluate("window.__pwned") is None
    assert watch.dialogs == []
    assert watch.requests == [report_url]
    assert watch.console_errors == []
    assert watch.page_errors == []
    assert page.locator("img, iframe, object, embed").count() == 0
    assert page.locator("script").count() == 1
    page.context.close()


def test_failing_case_is_visible(browser: Browser, report_url: str) -> None:
    page, _ = open_report(browser, report_url)
    case = page.locator("#case-hostile-content")
    assert case.is_visible()
    for heading in ("Wire transcript", "Expected vs observed", "Reproduce"):
        assert case.get_by_text(heading, exact=True).is_visible()
    assert "<script>window.__pwned=1;alert(1)</script>" in case.inner_text()
    page.context.close()


def test_filters_hide_what_does_not_match(browser: Browser, report_url: str) -> None:
    page, watch = open_report(browser, report_url)
    content, other = page.locator("#case-hostile-content"), page.locator(".case").nth(1)
    assert page.locator("#filters").is_visible()
    assert content.is_visible() and other.is_visible()

    page.get_by_text("T · Tool-call identity", exact=True).click()
    assert content.is_visible() and other.is_hidden()
    assert page.locator("#inv-T6").is_visible() and page.locator("#inv-C1").is_hidden()
    assert page.locator("#filter-count").inner_text() == "1 failing or non-strict case(s) shown"

    page.get_by_text("E · Empty completions", exact=True).click()
    assert content.is_hidden() and other.is_hidden()

    page.locator("label[for=family-all]").click()
    page.locator("label[for=verdict-na]").click()
    assert content.is_visible() and other.is_hidden()
    assert page.locator("#case-plain-pass").is_hidden()

    page.locator("label[for=verdict-all]").click()
    assert content.is_visible() and other.is_visible()
    assert watch.console_errors == [] and watch.page_errors == []
    page.context.close()


def test_without_javascript_everything_is_shown(browser: Browser, report_url: str) -> None:
    page, _ = open_report(browser, report_url, javascript=False)
    assert page.locator("#filters").is_hidden()
    assert page.locator(".case").count() == 2
    assert all(section.is_visible() for section in page.locator(".case").all())
    page.context.close()


def test_screenshot(browser: Browser, report_url: str) -> None:
    page, _ = open_report(browser, report_url)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "report-top.png")
    page.screenshot(path=SCREENSHOTS / "report-full.png", full_page=True)
    assert (SCREENSHOTS / "report-full.png").stat().st_size > 10_000
    page.context.close()


@pytest.fixture(scope="module")
def mutant_report_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real run: the mutant that lets a null continuation erase a call's identity."""
    out = tmp_path_factory.mktemp("mutant")
    # A subprocess: Playwright's sync API owns this thread's event loop.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance",
            "run",
            "--adapter",
            "conformance.adapters.mutants:identity_any_defined",
            "-k",
            "tool-cont-null-id-name",
            "--report",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr  # the mutant fails: the point
    return (out / "index.html").as_uri()


def test_mutant_report_shows_summary_table_and_the_failing_case(
    browser: Browser, mutant_report_url: str
) -> None:
    page, watch = open_report(browser, mutant_report_url)
    assert page.get_by_text("NOT CONFORMANT").is_visible()
    assert page.locator("#inv-T1").is_visible()
    case = page.locator("#case-tool-cont-null-id-name")
    assert case.is_visible()
    for heading in ("Wire transcript", "Expected vs observed", "Reproduce"):
        assert case.get_by_text(heading, exact=True).is_visible()
    text = case.inner_text()
    assert "T1" in text and '"id":null' in text
    assert "conformance run --fixtures repro/tool-cont-null-id-name.yaml" in text
    assert watch.console_errors == [] and watch.page_errors == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    case.screenshot(path=SCREENSHOTS / "mutant-case.png")
    page.context.close()


# --- Where Chromium cannot be installed: a warning, exit 0, and a loud skip. ---


def shim_path(directory: Path, *, uid: int, commands: dict[str, str]) -> str:
    """A PATH of only bash, an `id` that answers ``uid`` and the given shell scripts."""
    bash = shutil.which("bash")
    assert bash is not None
    directory.mkdir()
    (directory / "bash").symlink_to(bash)
    for name, body in {"id": f"echo {uid}", **commands}.items():
        shim = directory / name
        shim.write_text(f"#!{bash}\n{body}\n")
        shim.chmod(0o755)
    return str(directory)


def without_chromium(tmp_path: Path, *, uid: int, commands: dict[str, str]) -> dict[str, str]:
    path = shim_path(tmp_path / "bin", uid=uid, commands=commands)
    return {"PATH": path, "STREAMCONFORM_CHROMIUM": str(tmp_path / "no-chromium")}


def no_apt_get(tmp_path: Path) -> dict[str, str]:
    return without_chromium(tmp_path, uid=0, commands={})


def sudo_wants_a_password(tmp_path: Path) -> dict[str, str]:
    marker = tmp_path / "apt-get-ran"
    return without_chromium(
        tmp_path, uid=1000, commands={"apt-get": f"echo > {marker}", "sudo": "exit 1"}
    )


@pytest.mark.parametrize(
    ("environment", "reason"),
    [(no_apt_get, "no apt-get on PATH"), (sudo_wants_a_password, "not root")],
)
def test_installer_without_apt_or_root_warns_and_exits_0(
    tmp_path: Path, environment: Callable[[Path], dict[str, str]], reason: str
) -> None:
    result = subprocess.run(
        [str(INSTALLER)], env=environment(tmp_path), capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("!!! WARNING: Chromium is not installed")
    assert reason in result.stderr
    assert "test_report_browser.py) will be\nSKIPPED" in result.stderr
    assert "apt-get install chromium" in result.stderr
    assert not (tmp_path / "apt-get-ran").exists()


def test_browser_tests_skip_with_the_installers_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in no_apt_get(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", tmp_path / "no-chromium")
    with pytest.raises(pytest.skip.Exception) as skipped:
        ensure_chromium()
    message = str(skipped.value)
    assert message.startswith("SKIPPED, NOT PASSED: ")
    assert "!!! WARNING: Chromium is not installed" in message
    assert "(no apt-get on PATH)" in message


def test_a_matrix_of_many_columns_keeps_its_statements_readable(
    browser: Browser, tmp_path: Path
) -> None:
    """14 libraries under two contracts: the table scrolls sideways, the statements do not
    shrink to a letter per line."""
    columns = [(build.hostile_result(), f"column-{n}/index.html") for n in range(28)]
    page_file = tmp_path / "index.html"
    page_file.write_text(render_matrix(columns), encoding="utf-8")
    page, watch = open_report(browser, page_file.as_uri())
    statement = page.locator("td.statement").first.bounding_box()
    assert statement is not None and statement["width"] >= 250, statement
    wrap = "document.querySelector('.table-wrap')"
    assert page.evaluate(f"{wrap}.scrollWidth > {wrap}.clientWidth")  # it scrolls instead
    assert watch.console_errors == [] and watch.page_errors == []
    page.context.close()


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The results site of two columns, a clean one and the hostile report's."""
    out = tmp_path_factory.mktemp("site")
    hostile = build.hostile_result()
    columns = [
        Column("hostile", "<b>hostile</b>", {"lib": "1.0"}, hostile, hostile),
        Column("clean", "clean", {"lib": "2.0"}, build.result([]), build.result([])),
    ]
    for name, text in site_files(columns).items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    return (out / "index.html").as_uri()


def test_the_results_site_shows_its_table_and_pages_and_fetches_nothing(
    browser: Browser, site_url: str
) -> None:
    page, watch = open_report(browser, site_url)
    table = page.locator("table.matrix").first
    assert table.is_visible() and table.get_by_text("hostile", exact=True).is_visible()
    page.get_by_role("link", name="hostile", exact=True).click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/libraries/hostile.html")
    assert page.get_by_text("To look at under the harness contract", exact=False).first.is_visible()
    assert page.evaluate("window.__pwned") is None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "site-library.png", full_page=True)
    assert (SCREENSHOTS / "site-library.png").stat().st_size > 10_000
    assert all(url.startswith("file://") for url in watch.requests), watch.requests
    assert watch.console_errors == [] and watch.page_errors == [] and watch.dialogs == []
    page.context.close()
