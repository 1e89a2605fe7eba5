"""The Anthropic Messages generators draw what they intend, read without the oracle: every
case is a valid fixture of its dialect that the fake provider encodes, its last attempt
keeps the Messages event grammar exactly when its ``expect`` says it does, and the wire
shapes the families are for (interleaved blocks, signature-only thinking, the empty first
``partial_json``, cumulative usage repeated, unknown blocks and events) are all drawn."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml
from drawing import SHRUNK, drawn
from hypothesis import given

from conformance import codes
from conformance.strategies import DIALECT_FAMILIES, family_cases
from conformance.strategies.anthropic import EMPTY_PING
from fakeprovider.dialects.named_events import EventStep
from fakeprovider.fixtures import fixture_yaml
from fakeprovider.scenario import LiteralStep, RawStep, Scenario, StreamAttempt
from fakeprovider.wire import encode_stream

pytestmark = pytest.mark.slow

DIALECT = "anthropic-messages"
FAMILIES = DIALECT_FAMILIES[DIALECT]
# Families whose expect is the last attempt's own outcome (no failing attempts before it).
SINGLE_ATTEMPT = ("C", "T", "E", "S")
# Delta types each block type takes.
FITTING = {
    "text": {"text_delta", "citations_delta"},
    "thinking": {"thinking_delta", "signature_delta"},
    "redacted_thinking": set(),
    "tool_use": {"input_json_delta"},
    "server_tool_use": {"input_json_delta"},
}


EMPTY_PING_STEP = LiteralStep.model_validate(EMPTY_PING)


def last_events(scenario: Scenario) -> list[EventStep | RawStep]:
    last = scenario.attempts[-1]
    assert isinstance(last, StreamAttempt)
    steps = [
        step
        for step in last.stream.steps
        if isinstance(step, EventStep | RawStep) and step != EMPTY_PING_STEP
    ]
    if steps and not steps[-1].event_end:  # a last event without its blank line never arrives
        steps.pop()
    return steps


@dataclass
class Grammar:
    """A reading of the event grammar (reference dialects.md §2.2), independent of the
    oracle's: what a stream breaks, if anything, up to its message_stop."""

    broken: list[str] = field(default_factory=list)
    started: dict[int, str] = field(default_factory=dict)  # index -> block type
    open: set[int] = field(default_factory=set)
    stopped: bool = False
    stop_reason: Any = None
    open_at_stop: set[int] = field(default_factory=set)
    errored: bool = False

    def read(self, steps: list[EventStep | RawStep]) -> Grammar:
        begun = False
        for step in steps:
            if isinstance(step, RawStep):
                self.broken.append("not-json")
                return self
            data = step.event
            kind = data.get("type")
            if kind == "ping":
                continue
            if not begun:
                if kind != "message_start":
                    self.broken.append("no-message-start")
                    return self
                begun = True
                continue
            if kind == "error":
                self.errored = True
                return self
            self._event(kind, data)
            if self.stopped or self.broken:
                return self
        return self

    def _event(self, kind: object, data: dict[str, Any]) -> None:
        index = data.get("index")
        if kind == "content_block_start":
            assert isinstance(index, int)
            if index in self.started:
                self.broken.append("repeated-start")
            self.started[index] = data["content_block"]["type"]
            self.open.add(index)
        elif kind == "content_block_delta":
            if index not in self.open:
                self.broken.append("unknown-index")
            elif self._unfitting(self.started[index], data["delta"]["type"]):
                self.broken.append("wrong-delta")
        elif kind == "content_block_stop":
            if index not in self.open:
                self.broken.append("unknown-index")
            self.open.discard(index)
        elif kind == "message_delta":
            self.stop_reason = data["delta"]["stop_reason"]
        elif kind == "message_stop":
            self.stopped = True
            self.open_at_stop = set(self.open)

    @staticmethod
    def _unfitting(block: str, delta: str) -> bool:
        """A delta its block does not take (a block of an unknown type takes anything)."""
        return block in FITTING and delta not in FITTING[block]


def grammar_of(scenario: Scenario) -> Grammar:
    return Grammar().read(last_events(scenario))


@pytest.mark.parametrize("family", FAMILIES)
def test_a_generated_case_is_a_fixture_the_provider_encodes(family: str) -> None:
    @given(family_cases(family, DIALECT))
    def round_trips(scenario: Scenario) -> None:
        assert scenario.dialect == DIALECT
        assert scenario.id.startswith(f"gen-an-{family.lower()}-")
        assert Scenario.model_validate(yaml.safe_load(fixture_yaml(scenario))) == scenario
        for attempt in scenario.attempts:
            if isinstance(attempt, StreamAttempt):
                assert encode_stream(attempt.stream).body

    round_trips()


# The codes a stream that keeps the grammar up to message_stop may still mean.
GRAMMATICAL_FAILURES = {
    codes.EMPTY_RESPONSE,
    codes.MALFORMED_TOOL_CALL,
    codes.REFUSAL,
    codes.PAUSE_TURN,
}


@pytest.mark.parametrize("family", SINGLE_ATTEMPT)
def test_the_last_attempt_keeps_the_grammar_unless_its_expect_says_it_breaks(
    family: str,
) -> None:
    @given(family_cases(family, DIALECT))
    def reads(scenario: Scenario) -> None:
        expect, grammar = scenario.expect, grammar_of(scenario)
        assert expect is not None
        if expect.finish != "error" or expect.code in GRAMMATICAL_FAILURES:
            assert grammar.broken == [] and not grammar.errored, grammar
            assert grammar.stopped, "a stream meant to end ends with message_stop"
            # Only max_tokens leaves a block open (truncation).
            assert not grammar.open_at_stop or grammar.stop_reason in (
                "max_tokens",
                "model_context_window_exceeded",
            )
        elif expect.code == codes.MALFORMED_RESPONSE:
            assert grammar.broken, "a stream meant to be malformed breaks the grammar"
        elif expect.code == codes.STREAM_CLOSED:
            assert not grammar.stopped and not grammar.broken and not grammar.errored
        else:  # an error event's code
            assert grammar.errored and expect.code in (codes.SERVER, codes.RATE_LIMIT)

    reads()


def data_of(scenario: Scenario) -> Iterator[dict[str, Any]]:
    return (step.event for step in last_events(scenario) if isinstance(step, EventStep))


def interleaved(scenario: Scenario) -> bool:
    grammar, opened = Grammar(), 0
    for data in data_of(scenario):
        grammar._event(data.get("type"), data)
        opened = max(opened, len(grammar.open))
    return opened > 1


def signature_only(scenario: Scenario) -> bool:
    expect = scenario.expect
    return expect is not None and expect.reasoning == "" and expect.signature is not None


def empty_first_fragment(scenario: Scenario) -> bool:
    deltas = [d["delta"] for d in data_of(scenario) if d.get("type") == "content_block_delta"]
    arguments = [d["partial_json"] for d in deltas if d.get("type") == "input_json_delta"]
    return len(arguments) > 1 and arguments[0] == "" and any(arguments)


def usage_repeated(scenario: Scenario) -> bool:
    return any(
        "input_tokens" in d.get("usage", {})
        for d in data_of(scenario)
        if d.get("type") == "message_delta"
    )


def unknown_block_and_event(scenario: Scenario) -> bool:
    types = {d.get("type") for d in data_of(scenario)}
    blocks = {
        d["content_block"]["type"]
        for d in data_of(scenario)
        if d.get("type") == "content_block_start"
    }
    return bool(types - {*_KNOWN_EVENTS}) and bool(blocks - {*FITTING})


_KNOWN_EVENTS = (
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
)


@pytest.mark.parametrize(
    ("family", "shape"),
    [
        ("T", interleaved),
        ("C", signature_only),
        ("T", empty_first_fragment),
        ("C", usage_repeated),
        ("C", unknown_block_and_event),
    ],
)
def test_the_families_draw_the_wire_shapes_they_are_for(
    family: str, shape: Callable[[Scenario], bool]
) -> None:
    assert shape(drawn(family, DIALECT, shape))


def test_a_failure_shrinks_to_a_short_sequential_stream() -> None:
    # Any case that is refused as empty shrinks to message_start, message_delta, message_stop.
    def empty(scenario: Scenario) -> bool:
        return scenario.expect is not None and scenario.expect.code == codes.EMPTY_RESPONSE

    found = drawn("E", DIALECT, empty, SHRUNK)
    assert [d["type"] for d in data_of(found)] == ["message_start", "message_delta", "message_stop"]
