"""`conformance matrix render` and the compatibility summary, from saved columns.

The columns here are reference-adapter runs saved under library names: the summary must
then report every §0 finding that the reference does *not* share as a difference.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.adapters.base import PythonAdapterSession
from conformance.adapters.reference import ReferenceAdapter
from conformance.cli import main
from conformance.options import RunOptions
from conformance.report.compatibility import (
    FINDINGS,
    Column,
    _md,
    check_findings,
    render_compatibility,
)
from conformance.results import RunResult
from conformance.run.runner import run_suite
from fakeprovider.fixtures import load_fixtures

REPO = Path(__file__).resolve().parents[2]
CASES = ("tool-name-repeated", "empty-stop-no-usage", "retry-field-only-event")
RETRY_CASES = ("http-429-forever", "reset-mid-stream-then-ok")


def _reference_run(case_ids: tuple[str, ...]) -> RunResult:
    corpus = {s.id: s for s in load_fixtures([REPO / "fixtures"])}
    session = PythonAdapterSession(ReferenceAdapter())
    options = RunOptions(transport="in-process")
    return asyncio.run(run_suite(session, [corpus[i] for i in case_ids], options))


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("matrix")
    content, retry = _reference_run(CASES), _reference_run(RETRY_CASES)
    for name in ("openai", "litellm-hosted-vllm"):
        for result, suffix in ((content, ".json"), (retry, ".retry.json")):
            result.options["matrix"] = {"column": name, "title": "t", "versions": {"x": "1"}}
            (directory / f"{name}{suffix}").write_text(result.to_json())
    return directory


def test_render_writes_the_matrix_page_and_the_summary(saved: Path) -> None:
    summary = saved / "compatibility.md"
    done = CliRunner().invoke(main, ["matrix", "render", str(saved), "--summary", str(summary)])
    assert done.exit_code == 0, done.output
    page = (saved / "index.html").read_text()
    assert "Native retry profile" in page and "http-429-forever" in page
    assert (saved / "openai" / "index.html").exists()
    text = summary.read_text()
    assert text.startswith("# Compatibility of real libraries")
    assert "| openai | t | x 1 | 3 |" in text
    assert "## Verdicts per family" in text and "## Native retry profile (INFO)" in text
    # The reference refuses the empty stop and does not double names: both differ.
    assert "- openai (x 1): §0.2 a name repeated on every delta is doubled" in text
    assert "(`empty-stop-no-usage`: error EMPTY_RESPONSE)" in text
    assert "no-done-clean-close" not in text.split("## Closing note")[1]  # not run here


def test_findings_compare_per_column(saved: Path) -> None:
    from conformance.cli.matrix import load_columns

    columns = load_columns(saved)
    assert [c.name for c in columns] == ["openai", "litellm-hosted-vllm"]
    rows = {row.finding.case: row for row in check_findings(columns)}
    doubled = rows["tool-name-repeated"]
    assert doubled.observed == {"openai": "no", "litellm-hosted-vllm": "no"}
    assert doubled.differs == {"openai": "yes"}  # litellm never doubled: no difference
    assert rows["http-429-forever"].observed["openai"] == "3"  # the reference's own policy
    assert rows["no-done-clean-close"].observed["openai"] == "not run"
    assert "openai" not in rows["no-done-clean-close"].differs


def test_every_finding_names_a_fixture_of_the_corpus() -> None:
    ids = {s.id for s in load_fixtures([REPO / "fixtures"])}
    assert {finding.case for finding in FINDINGS} <= ids


def test_markdown_cells_are_escaped() -> None:
    assert _md("a|b\n<script>") == "a\\|b &lt;script&gt;"
    column = Column("x|y", "<b>", {}, _reference_run(("empty-stop-no-usage",)))
    text = render_compatibility([column], fixtures="f")
    assert "<b>" not in text and "&lt;b&gt;" in text


def test_matrix_without_any_installed_shim_says_how_to_get_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from conformance.adapters import thirdparty

    monkeypatch.setattr(thirdparty.Shim, "installed", property(lambda self: False))
    done = CliRunner().invoke(main, ["matrix"])
    assert done.exit_code == 1
    assert "tox -m matrix" in done.output
