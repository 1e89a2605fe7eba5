"""The reference adapter's OpenAI Responses translator, from bytes (reference dialects.md §3,
DIALECTS.md "Decisions", the RS rules): what each odd wire becomes."""

import json

import pytest
from responses_wire import USAGE, call_item, hello, message_item, translate, weather_call

from conformance import codes
from conformance.adapters.reference import Failure
from conformance.events import (
    BlockEnd,
    BlockStart,
    Event,
    Finish,
    ReasoningBlock,
    ReasoningDelta,
    ServerToolBlock,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
)
from fakeprovider.build import responses_stream

HELLO_OUTPUT = [message_item("msg_1", "Hello")]


def finish_of(events: list[Event]) -> Finish:
    last = events[-1]
    assert isinstance(last, Finish)
    return last


def outcome(events: list[Event]) -> tuple[str, str | None]:
    finish = finish_of(events)
    return finish.reason, finish.code


def ends(events: list[Event]) -> list[object]:
    return [event.block for event in events if isinstance(event, BlockEnd)]


# --- the canonical shapes --------------------------------------------------------------------


def test_a_text_stream_is_one_block_then_usage_then_stop() -> None:
    events = translate(hello().completed(output=HELLO_OUTPUT, usage=USAGE))
    assert events == [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="Hel"),
        TextDelta(index=0, text="lo"),
        BlockEnd(index=0, block=TextBlock(text="Hello")),
        # input_tokens include the cached ones on the wire (C4)
        Usage(input_tokens=8, output_tokens=7, cache_read_tokens=4, reasoning_tokens=3),
        Finish(reason="stop"),
    ]


def test_a_call_reports_call_id_and_keeps_the_item_id_beside_it() -> None:
    events = translate(weather_call(responses_stream().created()).completed(usage=USAGE))
    assert events[:3] == [
        BlockStart(index=0, block_type="tool-call"),
        ToolCallDelta(index=0, id="call_9", name="get_weather", arguments_delta='{"city":'),
        ToolCallDelta(index=0, id="call_9", name="get_weather", arguments_delta='"Paris"}'),
    ]
    call = ToolCallBlock(id="call_9", name="get_weather", arguments='{"city":"Paris"}')
    assert ends(events) == [call.model_copy(update={"item_id": "fc_1"})]
    assert outcome(events) == ("tool-calls", None)


def test_a_call_without_deltas_takes_the_arguments_of_its_done_item() -> None:
    stream = (
        responses_stream()
        .created()
        .function_call_added(0, "fc_1", "call_9", "get_weather")
        .item_done(0, call_item(arguments='{"city":"Oslo"}'))
        .completed()
    )
    events = translate(stream)
    assert (
        ToolCallDelta(index=0, id="call_9", name="get_weather", arguments_delta='{"city":"Oslo"}')
        in events
    )
    assert [block.arguments for block in ends(events)] == ['{"city":"Oslo"}']  # type: ignore[attr-defined]


def test_a_call_name_missing_at_added_is_filled_by_done_and_never_replaced() -> None:
    stream = (
        responses_stream()
        .created()
        .function_call_added(0, "fc_1", "call_9", "")
        .arguments_delta(0, "fc_1", "{}")
        .item_done(0, call_item(name="lookup", call_id="call_other", arguments="{}"))
        .completed()
    )
    [call] = ends(translate(stream))
    assert isinstance(call, ToolCallBlock)
    assert (call.id, call.name) == ("call_9", "lookup")


def test_reasoning_keeps_its_id_and_encrypted_content_verbatim() -> None:
    stream = (
        responses_stream()
        .created()
        .reasoning_added(0, "rs_1")
        .summary_delta(0, "rs_1", "Think")
        .summary_delta(0, "rs_1", "ing", summary_index=1)
        .item_done(0, {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA=="})
        .completed()
    )
    events = translate(stream)
    assert events[:2] == [
        BlockStart(index=0, block_type="reasoning"),
        ReasoningDelta(index=0, text="Think"),
    ]
    assert ends(events) == [
        ReasoningBlock(text="Thinking", encrypted_content="gAAA==", item_id="rs_1")
    ]
    assert outcome(events) == ("stop", None)  # reasoning-only is content (E2)


def test_encrypted_reasoning_without_summary_is_still_a_block() -> None:
    stream = (
        responses_stream()
        .created()
        .reasoning_added(0, "rs_1")
        .item_done(0, {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"})
        .completed()
    )
    assert ends(translate(stream)) == [
        ReasoningBlock(text="", encrypted_content="x", item_id="rs_1")
    ]


# --- the deltas are the answer ---------------------------------------------------------------


@pytest.mark.parametrize("output", [[], None], ids=["empty", "null"])
def test_an_empty_terminal_output_never_erases_the_streamed_items(output: object) -> None:
    events = translate(hello().completed(output=output))
    assert ends(events) == [TextBlock(text="Hello")]
    assert outcome(events) == ("stop", None)


def test_a_conflicting_done_payload_does_not_replace_the_deltas() -> None:
    stream = (
        responses_stream()
        .created()
        .message_added(0, "msg_1")
        .text_delta(0, "msg_1", "Hello")
        .text_done(0, "msg_1", "Goodbye")
        .item_done(0, message_item("msg_1", "Goodbye"))
        .completed(output=[message_item("msg_1", "Goodbye")])
    )
    assert ends(translate(stream)) == [TextBlock(text="Hello")]


def test_a_rotating_item_id_is_routed_by_output_index() -> None:
    stream = (
        responses_stream()
        .created()
        .message_added(0, "msg_a")
        .text_delta(0, "msg_b", "Hel")
        .text_delta(0, "msg_c", "lo")
        .completed()
    )
    assert ends(translate(stream)) == [TextBlock(text="Hello")]


# --- routing and the end -----------------------------------------------------------------------


def test_a_delta_for_an_unopened_index_never_attaches_elsewhere() -> None:
    events = translate(hello().text_delta(1, "msg_2", "stray").completed())
    assert outcome(events) == ("error", codes.MALFORMED_RESPONSE)
    assert ends(events) == []


def test_a_delta_after_its_item_is_done_is_refused() -> None:
    events = translate(hello().text_delta(0, "msg_1", "late").completed())
    assert outcome(events) == ("error", codes.MALFORMED_RESPONSE)


def test_a_text_delta_for_a_function_call_is_refused() -> None:
    stream = (
        responses_stream()
        .created()
        .function_call_added(0, "fc_1", "call_9", "get_weather")
        .text_delta(0, "fc_1", "text")
        .completed()
    )
    assert outcome(translate(stream)) == ("error", codes.MALFORMED_RESPONSE)


def test_unknown_events_and_item_types_are_skipped_without_shifting_indexes() -> None:
    stream = (
        responses_stream()
        .created()
        .event({"type": "response.future_thing", "x": 1})
        .item_added(0, {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1"})
        .event({"type": "response.output_text.delta", "output_index": 0, "delta": "x"})
        .item_done(0, {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1"})
        .message_added(1, "msg_1")
        .text_delta(1, "msg_1", "Hi")
        .completed()
    )
    events = translate(stream)
    assert events[0] == BlockStart(index=0, block_type="text")
    assert ends(events) == [TextBlock(text="Hi")]


def test_the_first_event_must_be_created() -> None:
    stream = responses_stream().message_added(0, "msg_1").text_delta(0, "msg_1", "Hi").completed()
    assert outcome(translate(stream)) == ("error", codes.MALFORMED_RESPONSE)


def test_keepalives_are_read_anywhere() -> None:
    stream = responses_stream().keepalive().created().keepalive().message_added(0, "m")
    events = translate(stream.text_delta(0, "m", "Hi").keepalive().completed())
    assert outcome(events) == ("stop", None)


def test_nothing_after_the_first_terminal_event_is_read() -> None:
    stream = hello().completed().message_added(1, "msg_2").text_delta(1, "msg_2", "more")
    events = translate(stream.completed())
    assert ends(events) == [TextBlock(text="Hello")]
    assert [event for event in events if isinstance(event, Finish)] == [Finish(reason="stop")]


@pytest.mark.parametrize("tail", ["eof", "done"])
def test_a_body_ending_before_a_terminal_event_is_stream_closed(tail: str) -> None:
    stream = hello()
    if tail == "done":
        stream = stream.done()
    events = translate(stream)
    assert outcome(events) == ("error", codes.STREAM_CLOSED)
    assert ends(events) == []


def test_a_transport_failure_leaves_blocks_open() -> None:
    events = translate(hello(), failure=Failure(code=codes.TRANSPORT, message="reset"))
    assert outcome(events) == ("error", codes.TRANSPORT)


# --- finishes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("max_output_tokens", ("max-tokens", None)),
        (None, ("max-tokens", None)),
        ("content_filter", ("error", codes.CONTENT_FILTER)),
    ],
)
def test_incomplete_maps_by_its_reason_and_keeps_its_usage(
    reason: str | None, expected: tuple[str, str | None]
) -> None:
    events = translate(hello().incomplete(reason, usage=USAGE))
    assert outcome(events) == expected
    assert Usage(input_tokens=8, output_tokens=7, cache_read_tokens=4, reasoning_tokens=3) in events


def test_an_empty_incomplete_stays_max_tokens() -> None:
    assert outcome(translate(responses_stream().created().incomplete())) == ("max-tokens", None)


def test_an_empty_completed_is_empty_response() -> None:
    events = translate(responses_stream().created().completed())
    assert outcome(events) == ("error", codes.EMPTY_RESPONSE)


def test_a_refusal_part_is_no_text_and_ends_in_refusal() -> None:
    stream = (
        responses_stream()
        .created()
        .message_added(0, "msg_1")
        .part_added(0, "msg_1", part={"type": "refusal", "refusal": ""})
        .refusal_delta(0, "msg_1", "I can't help with that.")
        .completed()
    )
    events = translate(stream)
    assert outcome(events) == ("error", codes.REFUSAL)
    assert not any(isinstance(event, TextDelta) for event in events)


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("nested", [True, False], ids=["nested", "flat"])
@pytest.mark.parametrize(
    ("wire_code", "code"),
    [
        ("rate_limit_exceeded", codes.RATE_LIMIT),
        ("server_error", codes.SERVER),
        ("insufficient_quota", codes.QUOTA),
        ("context_length_exceeded", codes.CONTEXT_WINDOW_EXCEEDED),
        ("invalid_prompt", "INVALID_PROMPT"),
    ],
)
def test_an_error_event_of_either_shape_fails_with_its_code(
    nested: bool, wire_code: str, code: str
) -> None:
    events = translate(hello().error(wire_code, "boom", nested=nested).failed(wire_code))
    assert outcome(events) == ("error", code)
    assert finish_of(events).message == "boom"
    assert ends(events) == []


def test_response_failed_fails_with_its_code_and_keeps_usage() -> None:
    events = translate(hello().failed("rate_limit_exceeded", "slow down", usage=USAGE))
    assert outcome(events) == ("error", codes.RATE_LIMIT)
    assert any(isinstance(event, Usage) for event in events)


def test_a_chat_style_error_payload_fails() -> None:
    stream = hello().event({"error": {"message": "overloaded", "code": "server_error"}}).data_only()
    assert outcome(translate(stream)) == ("error", codes.SERVER)


@pytest.mark.parametrize(
    ("wire_code", "code"),
    [("weird code!", "WEIRD_CODE"), ("42", codes.SERVER), (None, codes.SERVER)],
)
def test_another_error_code_is_upper_cased_or_server(wire_code: str | None, code: str) -> None:
    assert outcome(translate(hello().error(wire_code, "x"))) == ("error", code)


def test_a_provider_run_tool_is_a_server_tool_block_never_a_call() -> None:
    action = {"type": "search", "query": "Paris weather"}
    item = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": action}
    stream = responses_stream().created().item_added(0, {**item, "status": "in_progress"})
    events = translate(stream.item_done(0, item).completed())
    assert ends(events) == [
        ServerToolBlock(id="ws_1", name="web_search", arguments=json.dumps(action))
    ]
    assert outcome(events) == ("stop", None)  # a provider-run tool is content (E1)


def test_text_only_in_a_done_payload_is_emitted_as_its_delta() -> None:
    stream = (
        responses_stream()
        .created()
        .message_added(0, "msg_1")
        .text_done(0, "msg_1", "Hello")
        .item_done(0, message_item("msg_1", "Goodbye"))
        .completed()
    )
    events = translate(stream)
    assert TextDelta(index=0, text="Hello") in events
    assert ends(events) == [TextBlock(text="Hello")]


def test_text_only_in_a_done_part_opens_its_block_with_a_start() -> None:
    part = {"type": "output_text", "text": "Hi", "annotations": []}
    stream = responses_stream().created().message_added(0, "msg_1").part_added(0, "msg_1")
    events = translate(stream.part_done(0, "msg_1", part).completed())
    assert events[:2] == [BlockStart(index=0, block_type="text"), TextDelta(index=0, text="Hi")]
    assert ends(events) == [TextBlock(text="Hi")]


def test_a_summary_only_in_a_done_summary_part_is_the_reasoning() -> None:
    part = {"type": "summary_text", "text": "Plan"}
    stream = responses_stream().created().reasoning_added(0, "rs_1")
    stream = stream.event(
        {
            "type": "response.reasoning_summary_part.done",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 1,
            "part": part,
        }
    )
    events = translate(stream.completed())
    assert events[0] == BlockStart(index=0, block_type="reasoning")
    assert ends(events) == [ReasoningBlock(text="Plan", item_id="rs_1")]
