"""The generators: every case is a valid scenario whose intended outcome (``expect``, written
from M) is the outcome the oracle reads from the wire, and shrinking goes to plain, small
cases. Two independent readings again: the generator's and the oracle's."""

from __future__ import annotations

import hypothesis
import pytest
import yaml
from hypothesis import given

from conformance.options import DEFAULT_POLICY, case_policy
from conformance.oracle import ExpectedOutcome, expect_disagreements, expected_outcome
from conformance.run.properties import families, sample_cases, scenario_size
from conformance.strategies import family_cases
from fakeprovider.dialects import DIALECT_IDS, DialectId
from fakeprovider.fixtures import fixture_yaml
from fakeprovider.scenario import Framing, Scenario, StreamAttempt

pytestmark = pytest.mark.slow


def oracle_of(scenario: Scenario) -> ExpectedOutcome:
    return expected_outcome(scenario, case_policy(DEFAULT_POLICY, scenario))


@pytest.mark.parametrize(
    ("dialect", "family"),
    [(dialect, family) for dialect in DIALECT_IDS for family in families(dialect)],
)
def test_the_oracle_reads_the_intended_outcome_from_the_wire(
    dialect: DialectId, family: str
) -> None:
    @given(family_cases(family, dialect))
    def agrees(scenario: Scenario) -> None:
        assert scenario.expect is not None
        assert expect_disagreements(scenario, exhaustive=True) == []

    agrees()


@pytest.mark.parametrize("family", families())
def test_a_generated_case_is_a_fixture(family: str) -> None:
    @given(family_cases(family))
    def round_trips(scenario: Scenario) -> None:
        assert Scenario.model_validate(yaml.safe_load(fixture_yaml(scenario))) == scenario
        assert scenario.id.startswith(f"gen-{family.lower()}-")

    round_trips()


def features(scenario: Scenario) -> frozenset[str]:
    return oracle_of(scenario).features


def test_shrinking_ends_at_a_plain_small_case() -> None:
    # (The mutant searches check the size of shrunk failures too: test_properties_find_mutants.py.)
    found = hypothesis.find(
        family_cases("E"),
        lambda scenario: "empty-stop" in features(scenario),
        settings=hypothesis.settings(max_examples=1000, database=None),
    )
    assert scenario_size(found).events <= 2, found
    last = found.attempts[-1]
    assert isinstance(last, StreamAttempt) and last.stream.framing == Framing()


def test_sampled_cases_depend_on_the_seed_only() -> None:
    first = [s.id for s in sample_cases(16, seed=5)]
    assert first == [s.id for s in sample_cases(16, seed=5)]
    assert first != [s.id for s in sample_cases(16, seed=6)]
    assert len(first) == len(set(first)) > 8
    assert {identifier.split("-")[1] for identifier in first} == {f.lower() for f in families()}
