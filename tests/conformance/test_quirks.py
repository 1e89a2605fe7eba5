"""The quirk catalogue: transforms keep the wire's meaning, and fixtures carry honest levels."""

from __future__ import annotations

import time
from typing import get_args

import pytest

from conformance.events import BlockEnd, Capabilities, Finish, RetryPolicy
from conformance.invariants.evidence import ObservedAttempt, outcome_differences
from conformance.options import bundled_fixtures
from conformance.oracle import ExpectedAttempt, expected_attempt, expected_outcome
from conformance.quirks import (
    ASPECTS,
    CONTESTS_TAG_PREFIX,
    INFO_TAG,
    QUIRKS,
    TRANSFORMS,
    admitted_readings,
    contested_aspects,
    quirk_ids,
    unbounded_reading,
    with_quirks,
)
from conformance.verdicts import AltReading
from fakeprovider.build import ScenarioBuilder, StreamBuilder, stream, tool_call_entry
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.wire import encode_stream

EVERY = Capabilities(deltas=True, reasoning=True, usage=True, retry=True, error_codes=True)
POLICY = RetryPolicy(max_retries=2, initial_delay_ms=1, max_delay_ms=2000, jitter_ratio=0)


def _text() -> StreamBuilder:
    return (
        stream()
        .role(content="")
        .text("Hé")
        .text("l")
        .delta(content="lo", finish_reason="stop")
        .usage(11, 2, cached_tokens=3)
        .done()
    )


def _tool_call() -> StreamBuilder:
    return (
        stream()
        .role()
        .tool_call(0, id="call_1", type="function", name="get_weather", arguments="")
        .tool_call(0, arguments='{"ci')
        .tool_call(0, arguments='ty": "Pa')
        .tool_call(0, arguments='ris"}')
        .finish("tool_calls")
        .usage(11, 7)
        .done()
    )


def _parallel() -> StreamBuilder:
    return (
        stream()
        .role()
        .tool_call(0, id="call_a", type="function", name="get_weather", arguments="")
        .tool_call(0, arguments='{"city": ')
        .tool_call(0, arguments='"Paris"}')
        .tool_call(1, id="call_b", type="function", name="get_time", arguments='{"tz": ')
        .tool_call(1, arguments='"UTC"}')
        .finish("tool_calls", usage={"prompt_tokens": 20, "completion_tokens": 9})
        .done()
    )


def _reasoning_then_text() -> StreamBuilder:
    return (
        stream()
        .role(reasoning_content="")
        .reasoning("Let me")
        .reasoning(" think.")
        .delta(content="Answer", reasoning_content=None)
        .tool_calls(
            tool_call_entry(0, id="call_1", type="function", name="get_time", arguments="{}")
        )
        .finish("tool_calls")
        .usage(11, 7, reasoning_tokens=3)
        .done()
    )


CANONICAL = {
    "text": _text,
    "tool-call": _tool_call,
    "parallel": _parallel,
    "reasoning": _reasoning_then_text,
}


def _scenario(name: str) -> Scenario:
    return ScenarioBuilder(name).attempt(CANONICAL[name]()).build()


def _meaning(attempt: ExpectedAttempt) -> tuple[object, ...]:
    return (attempt.reason, attempt.code, attempt.blocks, attempt.usage)


def _writes(scenario: Scenario) -> list[list[bytes]]:
    """Every stream attempt's network writes (framing quirks change the cuts, not the body)."""
    return [
        [write.data for write in encode_stream(attempt.stream).writes]
        for attempt in scenario.attempts
        if isinstance(attempt, StreamAttempt)
    ]


@pytest.mark.parametrize("quirk_id", sorted(TRANSFORMS))
@pytest.mark.parametrize("canonical", sorted(CANONICAL))
def test_transform_keeps_the_outcome(quirk_id: str, canonical: str) -> None:
    scenario = _scenario(canonical)
    quirky = with_quirks(scenario, quirk_id)
    assert _meaning(expected_outcome(quirky, POLICY).final) == _meaning(
        expected_outcome(scenario, POLICY).final
    )
    assert f"quirk-{quirk_id}" in quirky.tags


@pytest.mark.parametrize("quirk_id", sorted(TRANSFORMS))
def test_transform_changes_the_wire(quirk_id: str) -> None:
    changed = [
        name
        for name in CANONICAL
        if _writes(with_quirks(_scenario(name), quirk_id)) != _writes(_scenario(name))
    ]
    assert changed, f"{quirk_id} left every canonical stream byte-identical"


def test_transforms_compose() -> None:
    quirky = with_quirks(_scenario("parallel"), "A5", "A7", "E1", "D2", "I3", "I7", "H6")
    assert quirk_ids(quirky) == ("A5", "A7", "E1", "D2", "I3", "I7", "H6")
    assert _meaning(expected_outcome(quirky, POLICY).final) == _meaning(
        expected_outcome(_scenario("parallel"), POLICY).final
    )


def test_only_unambiguous_quirks_have_transforms() -> None:
    assert all(QUIRKS[quirk_id].level != "INFO" for quirk_id in TRANSFORMS)


def test_interleaving_opens_every_call_first() -> None:
    attempt = with_quirks(_scenario("parallel"), "E1").model_dump(mode="json")["attempts"][0]
    indexes = [
        entry["index"]
        for step in attempt["stream"]["steps"]
        for choice in step.get("chunk", {}).get("choices", [])
        for entry in choice["delta"].get("tool_calls", [])
    ]
    assert indexes == [0, 1, 0, 1, 0]


QUIRK_FIXTURES = load_fixtures([bundled_fixtures() / "quirks"])


@pytest.mark.parametrize("scenario", QUIRK_FIXTURES, ids=[s.id for s in QUIRK_FIXTURES])
def test_quirk_fixture_is_traceable_and_levelled(scenario: Scenario) -> None:
    assert scenario.provenance.urls, "a quirk fixture names at least one report"
    assert all(url.startswith("https://") for url in scenario.provenance.urls)
    ambiguous = any(
        QUIRKS[quirk_id].level == "INFO" for quirk_id in quirk_ids(scenario) if quirk_id in QUIRKS
    )
    assert all(quirk_id in QUIRKS for quirk_id in quirk_ids(scenario)), quirk_ids(scenario)
    if ambiguous:
        assert INFO_TAG in scenario.tags, "an ambiguous quirk is recorded, not judged"


def test_only_ambiguous_quirks_contest_an_aspect_and_only_with_another_reading() -> None:
    for quirk in QUIRKS.values():
        assert not quirk.contests or quirk.level == "INFO", quirk.id
        # An aspect is open where another reading of the wire gives another outcome.
        assert bool(quirk.contests) == bool(quirk.readings or quirk.unbounded), quirk.id


AMBIGUOUS_FIXTURES = [s for s in load_fixtures([bundled_fixtures()]) if INFO_TAG in s.tags]


@pytest.mark.parametrize("scenario", AMBIGUOUS_FIXTURES, ids=[s.id for s in AMBIGUOUS_FIXTURES])
def test_each_admitted_reading_differs_only_in_what_is_contested(scenario: Scenario) -> None:
    """The audit as data: each reading a fixture admits is one the oracle makes, gives
    another outcome than the oracle's own, and differs from it only in contested aspects."""
    contested = contested_aspects(scenario)
    readings = admitted_readings(scenario)
    assert set(readings) <= set(get_args(AltReading)), readings
    open_ended = unbounded_reading(scenario)
    assert bool(readings or open_ended) == bool(contested), "an open aspect has another reading"
    now = time.time()
    default = expected_attempt(scenario, 1, now=now)
    for alt in readings:
        other = expected_attempt(scenario, 1, now=now, alt=alt)
        found = {d.aspect for d in outcome_differences(_as_reported(other), default, EVERY)}
        assert found, f"{alt} reads {scenario.id} as the oracle does"
        assert found <= set(contested), (alt, found)


def _as_reported(attempt: ExpectedAttempt) -> ObservedAttempt:
    blocks = attempt.blocks if attempt.success else ()
    ends = [BlockEnd(index=index, block=block) for index, block in enumerate(blocks)]
    return ObservedAttempt(1, (*ends, Finish(reason=attempt.reason, code=attempt.code)))


@pytest.mark.parametrize("scenario", QUIRK_FIXTURES, ids=[s.id for s in QUIRK_FIXTURES])
def test_an_ambiguous_fixture_names_what_it_contests(scenario: Scenario) -> None:
    named = [
        t.removeprefix(CONTESTS_TAG_PREFIX) for t in scenario.tags if t.startswith("contests:")
    ]
    assert set(named) <= set(ASPECTS), named
    ambiguous = [q for q in quirk_ids(scenario) if QUIRKS[q].level == "INFO"]
    if INFO_TAG in scenario.tags:
        assert ambiguous or named, "say which aspects the stream leaves open"
        assert not set(contested_aspects(scenario)) >= set(ASPECTS), "not every aspect is open"
    else:
        assert not named and not contested_aspects(scenario)


def _tagged(*tags: str) -> Scenario:
    return ScenarioBuilder("s", title="A stream", tags=tags).attempt(_text()).build()


def test_each_contested_aspect_names_what_leaves_it_open() -> None:
    # A plain tag ("reasoning") names no aspect; the first source of an aspect names it.
    scenario = _tagged("quirk-D5", "quirk-C2", "contests:text", "reasoning", "contests:usage")
    assert contested_aspects(_tagged(*scenario.tags, INFO_TAG)) == {
        "text": "this stream (A stream)",
        "tool-calls": "quirk C2 (every parallel call uses index 0)",
        "ids": "quirk C2 (every parallel call uses index 0)",
        "arguments": "quirk D5 (a final flush re-sends the full arguments)",
        "usage": "this stream (A stream)",
    }
    assert contested_aspects(scenario) == {}  # not tagged ambiguous: judged throughout


def test_an_ambiguous_stream_that_names_nothing_leaves_every_aspect_open() -> None:
    assert list(contested_aspects(_tagged(INFO_TAG))) == list(ASPECTS)
    assert unbounded_reading(_tagged(INFO_TAG))


def test_a_quirk_whose_readings_agree_contests_nothing() -> None:
    """C3 (the first call at index 1): ambiguous on the wire, one outcome either way."""
    assert contested_aspects(_tagged("quirk-C3", INFO_TAG)) == {}
    assert admitted_readings(_tagged("quirk-C3", INFO_TAG)) == ()
    assert not unbounded_reading(_tagged("quirk-C3", INFO_TAG))


def test_quirk_corpus_size() -> None:
    assert len(QUIRK_FIXTURES) >= 60


def test_a_comment_rewrapped_as_data_is_no_meaning_preserving_encoding() -> None:
    """`data: : …` may be skipped or refused (S6): the generators must not apply it as if
    it kept the meaning, or they would fail an adapter that refuses it."""
    assert QUIRKS["I2"].transform is None
    assert "I2" not in TRANSFORMS
