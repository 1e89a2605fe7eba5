"""docs/invariants.md is the generated reference, never a hand-kept copy that goes stale."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from conformance.cli import main
from conformance.gateway.reference import crossing_reference
from conformance.invariants import CATALOGUE
from conformance.quirks import QUIRKS
from conformance.report.reference import render_invariant_reference

REFERENCE = Path(__file__).resolve().parents[3] / "docs" / "invariants.md"


def test_the_committed_reference_is_the_generated_one() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render_invariant_reference(
        crossing_reference
    ), "docs/invariants.md is stale: run `conformance list --markdown > docs/invariants.md`"


def test_every_invariant_and_quirk_has_its_entry() -> None:
    text = render_invariant_reference()
    for invariant_id in CATALOGUE:
        assert f"\n### {invariant_id}\n" in text
    for quirk_id in QUIRKS:
        assert f"\n| {quirk_id} | " in text


def test_every_invariant_says_why_it_matters() -> None:
    text = render_invariant_reference()
    for invariant in CATALOGUE.values():
        rationale = invariant.rationale
        assert rationale.strip() and rationale != invariant.statement, invariant.id
        assert len(rationale) <= 300 and rationale.endswith("."), invariant.id
        section = text.split(f"\n### {invariant.id}\n", 1)[1].split("\n### ", 1)[0]
        assert f"- **Why it matters:** {rationale}\n" in section
        assert invariant.describe().get("rationale") == rationale


def test_a_fixture_tagged_with_an_id_is_listed_under_it() -> None:
    text = render_invariant_reference()
    g2 = text.split("\n### G2\n", 1)[1].split("\n### ", 1)[0]
    assert "`usage-on-finish-chunk`" in g2
    (a5,) = (line for line in text.splitlines() if line.startswith("| A5 | "))
    assert "`dashscope-cont-id-empty-only`" in a5
    assert "<https://github.com/" in a5


def test_every_invariant_names_the_fixtures_that_exercise_it() -> None:
    text = render_invariant_reference()
    invariants = text.split("\n## Provider quirks\n", 1)[0]
    assert "none bundled" not in invariants
    g1 = invariants.split("\n### G1\n", 1)[1].split("\n### ", 1)[0]
    assert "- **Fixtures:** every case (" in g1
    assert "tagged as provoking it: `double-finish-tool-calls-then-stop`" in g1
    q2 = invariants.split("\n### Q2\n", 1)[1].split("\n### ", 1)[0]
    assert "every fixture tagged `level:info`" in q2


def test_list_markdown_prints_the_reference() -> None:
    result = CliRunner().invoke(main, ["list", "--markdown"])
    assert result.exit_code == 0, result.output
    assert result.output == render_invariant_reference(crossing_reference)
