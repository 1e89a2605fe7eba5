"""The generators: every case is a valid scenario whose intended outcome (``expect``, written
from M) is the outcome the oracle reads from the wire, and shrinking goes to plain, small
cases. Two independent readings again: the generator's and the oracle's."""

from __future__ import annotations

from typing import Any

import hypothesis
import pytest
import yaml
from hypothesis import given

from conformance.events import ReasoningBlock, TextBlock, ToolCallBlock
from conformance.options import DEFAULT_POLICY, case_policy
from conformance.oracle import ExpectedOutcome, expected_outcome
from conformance.run.properties import families, sample_cases, scenario_size
from conformance.strategies import family_cases
from fakeprovider.fixtures import fixture_yaml
from fakeprovider.scenario import Framing, Scenario, StreamAttempt


def oracle_expect(outcome: ExpectedOutcome) -> dict[str, Any]:
    """The oracle's outcome in the ``expect`` format (fixtures/README.md)."""
    final = outcome.final
    out: dict[str, Any] = {"finish": final.reason}
    if final.code:
        out["code"] = final.code
    if final.success:
        for kind, key in ((TextBlock, "text"), (ReasoningBlock, "reasoning")):
            for block in final.blocks:
                if isinstance(block, kind):
                    out[key] = block.text
        calls = [
            b.model_dump(exclude={"type"}) for b in final.blocks if isinstance(b, ToolCallBlock)
        ]
        out |= {"tool_calls": calls} if calls else {}
    if final.usage is not None:
        out["usage"] = final.usage.model_dump(exclude_none=True, exclude={"case", "type"})
    return out | ({"attempts": len(outcome.attempts)} if len(outcome.attempts) > 1 else {})


def comparable(expect: dict[str, Any]) -> dict[str, Any]:
    """Usage without a cache read is reported with zero cache reads."""
    if "usage" not in expect:
        return expect
    return expect | {"usage": {"cache_read_tokens": 0} | expect["usage"]}


def oracle_of(scenario: Scenario) -> ExpectedOutcome:
    return expected_outcome(scenario, case_policy(DEFAULT_POLICY, scenario))


@pytest.mark.parametrize("family", families())
def test_the_oracle_reads_the_intended_outcome_from_the_wire(family: str) -> None:
    @given(family_cases(family))
    def agrees(scenario: Scenario) -> None:
        assert scenario.expect is not None
        assert comparable(oracle_expect(oracle_of(scenario))) == comparable(scenario.expect)

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
    # (The mutant tests check the size of shrunk failures too: test_properties.py.)
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
