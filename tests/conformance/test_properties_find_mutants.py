"""Each mutant is caught by the generated cases of its target's family alone (no fixture),
its failure shrunk to a small scenario that replays to the same verdict."""

from __future__ import annotations

from pathlib import Path

import hypothesis
import pytest
from click.testing import CliRunner

from conformance.adapters.mutants import MUTANTS
from conformance.cli import main
from conformance.invariants import CATALOGUE
from conformance.run.case_runner import CaseRunner
from conformance.run.properties import check_family, families, generated_family
from fakeprovider.dialects import DialectId

pytestmark = pytest.mark.slow

# One mutant per family at least (the full kill table runs in `conformance fuzz`, by hand):
# (mutant, the target invariant its family's property must name).
REPRESENTATIVES = [
    ("identity_any_defined", "T1"),
    ("unidentified_closed_empty", "T5"),
    ("empty_stop_succeeds", "E1"),
    ("whitespace_is_empty", "E3"),
    ("reasoning_as_text", "C2"),
    ("cached_in_input", "C4"),
    ("lf_only_lines", "S1"),
    ("eof_is_done", "S5"),
    ("malformed_payload_skipped", "S6"),
    ("rate_limit_as_server", "H1"),
    ("finish_twice", "G1"),
    ("one_based_indexes", "G4"),
    ("builtin_budget", "R2"),
]
# A budget that finds each representative under the ci profile, with room to spare.
SEARCH = hypothesis.settings(max_examples=400)
DIALECT: DialectId = "openai-responses"
# Fixed, so that which example a search shrinks from does not follow edits of unrelated code.
SEED = 2


@pytest.fixture
def seed_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis mixes the literals of every local module loaded so far into what it draws,
    so the example a seeded search meets first would depend on what the session happened to
    import (a whole run, one file, an xdist worker) and on unrelated edits of our code. With
    that pool empty, a search follows from its seed and the strategies alone."""
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    monkeypatch.setattr(providers, "_get_local_constants", Constants)
    monkeypatch.setattr(providers, "CONSTANTS_CACHE", {})


@pytest.mark.parametrize(("name", "target"), REPRESENTATIVES, ids=[n for n, _ in REPRESENTATIVES])
@pytest.mark.usefixtures("seed_alone")
def test_a_mutant_is_found_by_generated_cases_alone(name: str, target: str) -> None:
    mutant = MUTANTS[name]
    assert target in mutant.targets
    family = CATALOGUE[target].family
    with CaseRunner(mutant.target) as runner:
        run = check_family(runner, family, settings=SEARCH, seed=SEED, invariants=[target])
    assert run.failure is not None, f"{name} survived {run.examples} generated {family} cases"
    assert not run.flaky
    assert run.failure.invariants == (target,)
    assert all(breach.completed for breach in run.failure.breaches)
    assert run.failure.size.events <= 8, run.failure.scenario  # shrunk


# The Responses mutants a few examples find, each by its target's family on that wire.
RESPONSES_REPRESENTATIVES = [
    ("rs_trusts_terminal_snapshot", "RS-C6"),
    ("rs_item_id_as_call_id", "RS-T2"),
    ("rs_eof_as_complete", "RS-G5"),
    ("rs_encrypted_content_dropped", "RS-C2"),
    ("rs_incomplete_as_stop", "C5"),
]


@pytest.mark.parametrize(
    ("name", "target"), RESPONSES_REPRESENTATIVES, ids=[n for n, _ in RESPONSES_REPRESENTATIVES]
)
@pytest.mark.usefixtures("seed_alone")
def test_a_responses_mutant_is_found_by_generated_responses_cases(name: str, target: str) -> None:
    mutant = MUTANTS[name]
    assert target in mutant.targets
    family = generated_family(CATALOGUE[target].family)
    with CaseRunner(mutant.target) as runner:
        run = check_family(
            runner, family, settings=SEARCH, seed=SEED, invariants=[target], dialect=DIALECT
        )
    assert run.failure is not None, f"{name} survived {run.examples} generated {family} cases"
    assert run.failure.scenario.dialect == DIALECT
    assert run.failure.invariants == (target,)
    assert run.failure.size.events <= 8, run.failure.scenario  # shrunk


def test_every_mutant_has_a_family_with_generated_cases() -> None:
    generated = set(families())
    for mutant in MUTANTS.values():
        # Generated cases are one turn: a next request's rule is proven on two-turn fixtures
        # (test_two_turn.py, the kill table).
        targets = [t for t in mutant.targets if "follow_up" not in CATALOGUE[t].needs]
        wanted = {generated_family(CATALOGUE[target].family) for target in targets}
        assert wanted <= generated, mutant.name


def test_a_saved_failure_replays_to_the_same_verdict(tmp_path: Path) -> None:
    mutant = "--adapter=conformance.adapters.mutants:cached_in_input"
    fuzzed = CliRunner().invoke(
        main, ["fuzz", mutant, "--family", "C", "--save-failures", str(tmp_path)]
    )
    assert fuzzed.exit_code == 1, fuzzed.output
    assert "FAILED C:" in fuzzed.output and "fail C4:" in fuzzed.output
    (saved,) = tmp_path.glob("gen-c-*.yaml")
    text = saved.read_text()
    assert "--seed 0" in text and "C4 fail" in text  # the seed and the invariant: provenance
    found = next(line for line in fuzzed.output.splitlines() if "fail C4:" in line)
    reason = found.split("fail C4: ", 1)[1]
    replayed = CliRunner().invoke(main, ["replay", str(saved), mutant])
    assert replayed.exit_code == 1
    assert f"  fail C4 (MUST): {reason}" in replayed.output.splitlines()
    passed = CliRunner().invoke(main, ["replay", str(saved)])
    assert passed.exit_code == 0, passed.output
