"""Each OpenAI Responses mutant has its bug on a wire that shows it, and the reference
translator has not: the kill table then holds each to its target invariants."""

from collections.abc import Callable

import pytest
from responses_wire import USAGE, call_item, hello, translate, weather_call

from conformance.adapters.mutants import MUTANTS
from conformance.adapters.reference import ResponsesTranslator
from conformance.events import BlockEnd, Event, Finish, Usage
from fakeprovider.build import ResponsesStreamBuilder, responses_stream

# (finish reason, code, block-ends, usage as (input, output))
Outcome = tuple[str, str | None, list[object], list[tuple[int, int]]]


def outcome(events: list[Event]) -> Outcome:
    finish = events[-1]
    assert isinstance(finish, Finish)
    return (
        finish.reason,
        finish.code,
        [event.block for event in events if isinstance(event, BlockEnd)],
        [(e.input_tokens, e.output_tokens) for e in events if isinstance(e, Usage)],
    )


def texts(events: list[Event]) -> list[object]:
    return [getattr(block, "text", None) for block in outcome(events)[2]]


def call_ids(events: list[Event]) -> list[tuple[object, object]]:
    return [(getattr(b, "id", None), getattr(b, "name", None)) for b in outcome(events)[2]]


def finish(events: list[Event]) -> tuple[str, str | None]:
    return outcome(events)[:2]


def reasoning() -> ResponsesStreamBuilder:
    return (
        responses_stream()
        .created()
        .reasoning_added(0, "rs_1")
        .summary_delta(0, "rs_1", "Hmm")
        .item_done(0, {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA=="})
        .completed()
    )


def rotated() -> ResponsesStreamBuilder:
    return responses_stream().created().message_added(0, "msg_a").text_delta(0, "msg_b", "Hi")


def encrypted(events: list[Event]) -> list[object]:
    return [getattr(block, "encrypted_content", None) for block in outcome(events)[2]]


# mutant -> (its wire, what tells the reading apart, the reference's, the mutant's)
CASES: dict[str, tuple[ResponsesStreamBuilder, Callable[[list[Event]], object], object, object]] = {
    "rs_trusts_terminal_snapshot": (
        hello().completed(output=[]),
        lambda events: (finish(events), texts(events)),
        (("stop", None), ["Hello"]),
        (("stop", None), []),
    ),
    "rs_routes_by_item_id": (
        rotated().completed(),
        finish,
        ("stop", None),
        ("error", "MALFORMED_RESPONSE"),
    ),
    "rs_reads_past_terminal": (
        hello().completed().message_added(1, "msg_2").text_delta(1, "msg_2", "more").completed(),
        texts,
        ["Hello"],
        ["Hello", "more"],
    ),
    "rs_eof_as_complete": (hello(), finish, ("error", "STREAM_CLOSED"), ("stop", None)),
    "rs_encrypted_content_dropped": (reasoning(), encrypted, ["gAAA=="], [None]),
    "rs_incomplete_usage_lost": (
        hello().incomplete(usage=USAGE),
        lambda events: outcome(events)[3],
        [(8, 7)],
        [],
    ),
    "rs_incomplete_as_stop": (hello().incomplete(), finish, ("max-tokens", None), ("stop", None)),
    "rs_item_id_as_call_id": (
        weather_call(responses_stream().created()).completed(),
        call_ids,
        [("call_9", "get_weather")],
        [("fc_1", "get_weather")],
    ),
    "rs_name_from_deltas_only": (
        weather_call(responses_stream().created()).completed(),
        call_ids,
        [("call_9", "get_weather")],
        [("call_9", "")],
    ),
    "rs_flat_error_swallowed": (
        hello().error("rate_limit_exceeded", "slow down", nested=False),
        finish,
        ("error", "RATE_LIMIT"),
        ("error", "STREAM_CLOSED"),
    ),
}

RESPONSES = {
    name: mutant
    for name, mutant in MUTANTS.items()
    if mutant.responses_translator is not ResponsesTranslator
}


def test_every_responses_mutant_is_shown_here() -> None:
    assert set(CASES) == set(RESPONSES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_mutant_has_its_bug_and_the_reference_has_not(name: str) -> None:
    wire, reading, reference, mutated = CASES[name]
    assert reading(translate(wire)) == reference
    assert reading(translate(wire, translator=RESPONSES[name].responses_translator)) == mutated


def test_a_nested_error_is_still_raised_by_the_flat_error_mutant() -> None:
    wire = hello().error("rate_limit_exceeded", "slow down", nested=True)
    bug = RESPONSES["rs_flat_error_swallowed"].responses_translator
    assert finish(translate(wire, translator=bug)) == ("error", "RATE_LIMIT")


def test_the_item_id_mutant_keeps_a_call_whose_ids_agree() -> None:
    stream = (
        responses_stream()
        .created()
        .function_call_added(0, "same", "same", "f")
        .arguments_delta(0, "same", "{}")
        .item_done(0, call_item("same", "same", "f", "{}"))
        .completed()
    )
    bug = RESPONSES["rs_item_id_as_call_id"].responses_translator
    assert call_ids(translate(stream, translator=bug)) == [("same", "f")]
