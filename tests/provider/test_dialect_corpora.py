"""The cited corpus of each named-event dialect: every fixture validates, speaks its dialect,
cites where its shape was seen, states its outcome and tags the invariants its notes name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main as conformance_main
from conformance.options import bundled_fixtures
from fakeprovider.cli import main
from fakeprovider.fixtures import load_fixtures

INVARIANT_ID = re.compile(r"\b(?:AN-|RS-)?[A-Z][0-9]+\b")


@dataclass(frozen=True)
class Corpus:
    folder: str
    dialect: str
    id_prefix: str
    at_least: int  # the floor


CORPORA = (
    Corpus("anthropic", "anthropic-messages", "an-", 50),  # issue 24, Build 7
    Corpus("responses", "openai-responses", "resp-", 35),  # issue 25, Build
)

# Reference dialects.md §9.2, rows 54-85: every fixture it proposes is in the corpus.
PROPOSED_RESPONSES = (
    "basic-text",
    "function-call",
    "parallel-calls",
    "name-only-in-added",
    "fc-id-vs-call-id",
    "delta-item-id-is-call-id",
    "item-id-rotation",
    "completed-empty-output",
    "completed-output-missing",
    "done-events-empty",
    "deltas-without-lifecycle",
    "item-per-token",
    "arguments-done-mismatch",
    "incomplete-max-output-tokens",
    "incomplete-reasoning-only",
    "incomplete-content-filter",
    "failed-after-text",
    "failed-before-output",
    "error-event-nested",
    "error-event-flat",
    "error-http-shape-midstream",
    "no-terminal-event",
    "multiple-completed",
    "unknown-event",
    "unknown-output-item",
    "created-minimal",
    "keepalive-and-done",
    "sequence-anomalies",
    "reasoning-encrypted",
    "refusal",
    "usage-cached-reasoning",
    "truncated-after-function-call",
)


@pytest.mark.parametrize("corpus", CORPORA, ids=[c.folder for c in CORPORA])
def test_each_fixture_validates_speaks_its_dialect_and_is_cited(corpus: Corpus) -> None:
    root = bundled_fixtures() / corpus.folder
    result = CliRunner().invoke(main, ["validate", str(root)])
    assert result.exit_code == 0, result.output
    scenarios = load_fixtures([root])
    assert len(scenarios) >= corpus.at_least
    for scenario in scenarios:
        assert scenario.dialect == corpus.dialect, scenario.id
        assert scenario.id.startswith(corpus.id_prefix), scenario.id
        assert scenario.provenance.urls, scenario.id
        assert scenario.expect is not None, scenario.id
        # The notes say which invariant the stream exercises, and the tags list it.
        named = set(INVARIANT_ID.findall(scenario.provenance.notes or ""))
        assert named & set(scenario.tags), scenario.id


def test_the_responses_corpus_holds_every_fixture_the_reference_proposes() -> None:
    ids = {path.stem for path in (bundled_fixtures() / "responses").rglob("*.yaml")}
    assert {f"resp-{name}" for name in PROPOSED_RESPONSES} - ids == set()
    assert len(PROPOSED_RESPONSES) == 32  # rows 54-85


def test_conformance_validate_holds_each_responses_expect_against_its_oracle(
    tmp_path: Path,
) -> None:
    root = bundled_fixtures() / "responses"
    result = CliRunner().invoke(conformance_main, ["validate", str(root)])
    assert result.exit_code == 0, result.output
    assert f"{len(load_fixtures([root]))} fixture(s) valid, expect agrees" in result.output
    # An empty terminal snapshot never erases the streamed text (RS-C6): an expect that
    # says it does is a problem, named by field.
    original = root / "snapshot" / "resp-completed-empty-output.yaml"
    wrong = tmp_path / original.name
    text = original.read_text(encoding="utf-8")
    wrong.write_text(text.replace('  text: "The capital is Paris."\n', ""), encoding="utf-8")
    result = CliRunner().invoke(conformance_main, ["validate", str(wrong)])
    assert result.exit_code == 2
    assert f"{wrong}:" in result.output and "expect.text: left out" in result.output
