"""The OpenAI Responses generators draw what they intend, read without the oracle: every case
is a valid fixture of its dialect that the fake provider encodes, its last attempt keeps the
Responses event grammar exactly when its ``expect`` says it does, and the wire shapes the
families are for (interleaved items, rotated item ids, an empty or missing terminal output,
.done payloads that differ, flat and nested error events, arguments only in the .done
events, a name only on output_item.added, sequence anomalies, [DONE] after the terminal
event, unknown events and items) are all drawn."""

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
from fakeprovider.dialects.named_events import EventStep
from fakeprovider.dialects.responses import TERMINAL_EVENTS
from fakeprovider.fixtures import fixture_yaml
from fakeprovider.scenario import DoneStep, LiteralStep, RawStep, Scenario, StreamAttempt
from fakeprovider.wire import encode_stream

pytestmark = pytest.mark.slow

DIALECT = "openai-responses"
FAMILIES = DIALECT_FAMILIES[DIALECT]
SINGLE_ATTEMPT = ("C", "T", "E", "S")  # families whose expect is the last attempt's own
ERROR_CODES = set(codes.RESPONSES_ERROR_CODES.values())


def last_steps(scenario: Scenario) -> list[EventStep | RawStep | DoneStep | LiteralStep]:
    last = scenario.attempts[-1]
    assert isinstance(last, StreamAttempt)
    kept = (EventStep, RawStep, DoneStep, LiteralStep)
    steps = [step for step in last.stream.steps if isinstance(step, kept)]
    if steps and isinstance(steps[-1], EventStep) and not steps[-1].event_end:
        steps.pop()  # a last event without its blank line never arrives
    return steps


@dataclass
class Grammar:
    """A reading of the event grammar (reference dialects.md §3.1-3.2), independent of the
    oracle's: what a stream breaks, if anything, up to its terminal event."""

    broken: list[str] = field(default_factory=list)
    opened: dict[int, str] = field(default_factory=dict)  # output_index -> item type
    open: set[int] = field(default_factory=set)
    terminal: str | None = None
    errored: bool = False
    open_at_end: set[int] = field(default_factory=set)

    def read(self, steps: list[EventStep | RawStep | DoneStep | LiteralStep]) -> Grammar:
        begun = False
        for step in steps:
            if isinstance(step, RawStep):
                self.broken.append("not-json")
                return self
            if not isinstance(step, EventStep):  # [DONE] or half a line: the body ends
                return self
            data = step.event
            kind = data.get("type")
            if kind == "keepalive":
                continue
            if not begun:
                assert kind == "response.created", "the first event is response.created"
                begun = True
                continue
            if kind in ("error", "response.failed"):
                self.errored = True
                return self
            self.event(kind, data)
            if self.terminal or self.broken:
                return self
        return self

    def event(self, kind: object, data: dict[str, Any]) -> None:
        index = data.get("output_index")
        if kind == "response.output_item.added":
            assert isinstance(index, int) and index not in self.opened
            self.opened[index] = data["item"]["type"]
            self.open.add(index)
        elif kind == "response.output_item.done":
            self.open.discard(index)
        elif kind in TERMINAL_EVENTS:
            self.terminal = str(kind)
            self.open_at_end = set(self.open)
        elif index is not None and index not in self.open:
            self.broken.append("unknown-index")


def grammar_of(scenario: Scenario) -> Grammar:
    return Grammar().read(last_steps(scenario))


@pytest.mark.parametrize("family", FAMILIES)
def test_a_generated_case_is_a_fixture_the_provider_encodes(family: str) -> None:
    @given(family_cases(family, DIALECT))
    def round_trips(scenario: Scenario) -> None:
        assert scenario.dialect == DIALECT
        assert scenario.id.startswith(f"gen-rs-{family.lower()}-")
        assert Scenario.model_validate(yaml.safe_load(fixture_yaml(scenario))) == scenario
        for attempt in scenario.attempts:
            if isinstance(attempt, StreamAttempt):
                assert encode_stream(attempt.stream).body

    round_trips()


# The codes a stream that keeps the grammar up to its terminal event may still mean.
GRAMMATICAL_FAILURES = {
    codes.EMPTY_RESPONSE,
    codes.MALFORMED_TOOL_CALL,
    codes.REFUSAL,
    codes.CONTENT_FILTER,
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
            assert grammar.terminal, "a stream meant to end ends with a terminal event"
            # Only an incomplete response leaves an item open (truncation).
            assert not grammar.open_at_end or grammar.terminal == "response.incomplete"
            if expect.code != codes.MALFORMED_TOOL_CALL:  # which ends in any terminal event
                truncated = expect.finish == "max-tokens" or expect.code == codes.CONTENT_FILTER
                assert truncated == (grammar.terminal == "response.incomplete")
        elif expect.code == codes.MALFORMED_RESPONSE:
            assert grammar.broken, "a stream meant to be malformed breaks the grammar"
        elif expect.code == codes.STREAM_CLOSED:
            assert not grammar.terminal and not grammar.broken and not grammar.errored
        else:  # an error event's or response.failed's code
            assert grammar.errored and expect.code in ERROR_CODES

    reads()


def data_of(scenario: Scenario) -> Iterator[dict[str, Any]]:
    return (step.event for step in last_steps(scenario) if isinstance(step, EventStep))


def of_type(scenario: Scenario, kind: str) -> list[dict[str, Any]]:
    return [data for data in data_of(scenario) if data.get("type") == kind]


def interleaved(scenario: Scenario) -> bool:
    grammar, most = Grammar(), 0
    for data in data_of(scenario):
        grammar.event(data.get("type"), data)
        most = max(most, len(grammar.open))
    return most > 1


def rotated_item_ids(scenario: Scenario) -> bool:
    ids = {d["item"]["id"] for d in of_type(scenario, "response.output_item.added")}
    routed = [d["item_id"] for d in data_of(scenario) if "item_id" in d]
    return bool(routed) and not set(routed) & ids


def _terminal_output(scenario: Scenario) -> object:
    ends = [d for d in data_of(scenario) if d.get("type") in TERMINAL_EVENTS]
    return ends[0]["response"].get("output", "missing") if ends else "no end"


def empty_output_after_content(scenario: Scenario) -> bool:
    expect = scenario.expect
    return expect is not None and bool(expect.text) and _terminal_output(scenario) == []


def missing_output(scenario: Scenario) -> bool:
    return _terminal_output(scenario) == "missing"


def differing_done_text(scenario: Scenario) -> bool:
    expect = scenario.expect
    done = of_type(scenario, "response.output_text.done")
    return expect is not None and bool(expect.text) and any(d["text"] != expect.text for d in done)


def flat_error_event(scenario: Scenario) -> bool:
    return any("error" not in d and "code" in d for d in of_type(scenario, "error"))


def nested_error_then_failed(scenario: Scenario) -> bool:
    errors = of_type(scenario, "error")
    return any("error" in d for d in errors) and bool(of_type(scenario, "response.failed"))


def arguments_only_in_done(scenario: Scenario) -> bool:
    expect = scenario.expect
    calls = expect.tool_calls if expect is not None else None
    deltas = of_type(scenario, "response.function_call_arguments.delta")
    return bool(calls) and any(c.arguments for c in calls or ()) and not deltas


def name_only_in_added(scenario: Scenario) -> bool:
    done = of_type(scenario, "response.output_item.done")
    return any(d["item"]["type"] == "function_call" and "name" not in d["item"] for d in done)


def identity_filled_by_done(scenario: Scenario) -> bool:
    expect = scenario.expect
    added = of_type(scenario, "response.output_item.added")
    late = [a for a in added if a["item"]["type"] == "function_call" and not a["item"].get("name")]
    return expect is not None and expect.finish == "tool-calls" and bool(late)


def sequence_anomaly(scenario: Scenario) -> bool:
    last = scenario.attempts[-1]
    assert isinstance(last, StreamAttempt)
    events = [step for step in last.stream.steps if isinstance(step, EventStep)]
    return any(not step.numbered for step in events) and any(
        "sequence_number" in step.event for step in events
    )


def done_after_terminal(scenario: Scenario) -> bool:
    ended = False
    for step in last_steps(scenario):
        if isinstance(step, EventStep) and step.event.get("type") in TERMINAL_EVENTS:
            ended = True
        elif ended and isinstance(step, DoneStep):
            return True
    return False


def unknown_event_and_item(scenario: Scenario) -> bool:
    types = {d.get("type") for d in data_of(scenario)}
    items = {d["item"]["type"] for d in of_type(scenario, "response.output_item.added")}
    return "response.x_future_event" in types and "x_future_item" in items


def keepalive_first(scenario: Scenario) -> bool:
    first = next(data_of(scenario), {})
    return first.get("type") == "keepalive"


@pytest.mark.parametrize(
    ("family", "shape"),
    [
        ("T", interleaved),
        ("C", rotated_item_ids),
        ("C", empty_output_after_content),
        ("C", missing_output),
        ("C", differing_done_text),
        ("G", flat_error_event),
        ("S", nested_error_then_failed),
        ("T", arguments_only_in_done),
        ("T", name_only_in_added),
        ("T", identity_filled_by_done),
        ("C", sequence_anomaly),
        ("G", done_after_terminal),
        ("C", unknown_event_and_item),
        ("E", keepalive_first),
    ],
)
def test_the_families_draw_the_wire_shapes_they_are_for(
    family: str, shape: Callable[[Scenario], bool]
) -> None:
    assert shape(drawn(family, DIALECT, shape))


def test_a_failure_shrinks_to_a_short_sequential_stream() -> None:
    # Any case that is refused as empty shrinks to response.created, response.completed.
    def empty(scenario: Scenario) -> bool:
        return scenario.expect is not None and scenario.expect.code == codes.EMPTY_RESPONSE

    found = drawn("E", DIALECT, empty, SHRUNK)
    assert [d["type"] for d in data_of(found)] == ["response.created", "response.completed"]
