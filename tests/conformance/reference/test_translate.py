"""Tests of the reference adapter's payload -> event translation (invariants C, T, E, S4-S7)."""

import json
from typing import Any

import pytest

from conformance.adapters.reference import StreamTranslator
from conformance.events import (
    BlockEnd,
    BlockStart,
    Event,
    Finish,
    ReasoningBlock,
    ReasoningDelta,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
)

# --- wire chunk builders (harness-contract §e notation) ---

F0: dict[str, Any] = {
    "choices": [{"delta": {"role": "assistant", "content": None, "reasoning_content": ""}}]
}


def C(text: object) -> dict[str, Any]:
    return {"choices": [{"delta": {"content": text}}]}


def R(text: object) -> dict[str, Any]:
    return {"choices": [{"delta": {"reasoning_content": text}}]}


def T(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"delta": {"tool_calls": list(entries)}}]}


def call(index: int | None = 0, **fields: Any) -> dict[str, Any]:
    """A tool_calls entry; `id`, `name`, `arguments` go where the wire puts them."""
    entry: dict[str, Any] = {} if index is None else {"index": index}
    if "id" in fields:
        entry["id"] = fields.pop("id")
    function = {key: fields.pop(key) for key in ("name", "arguments") if key in fields}
    if function:
        entry["function"] = function
    entry.update(fields)
    return entry


def FIN(reason: object) -> dict[str, Any]:
    return {"choices": [{"delta": {}, "finish_reason": reason}]}


def U(prompt: int, completion: int, **extra: Any) -> dict[str, Any]:
    return {
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, **extra},
    }


def translate(*payloads: object, done: bool = True) -> list[Event]:
    translator = StreamTranslator()
    events: list[Event] = []
    for payload in payloads:
        events += translator.feed(payload if isinstance(payload, str) else json.dumps(payload))
    if done:
        events += translator.feed("[DONE]")
    return events


def finish_of(events: list[Event]) -> Finish:
    finishes = [event for event in events if isinstance(event, Finish)]
    assert len(finishes) == 1
    assert events[-1] is finishes[0]
    return finishes[0]


def error(code: str) -> tuple[str, str]:
    return ("error", code)


def outcome(events: list[Event]) -> tuple[str, str | None]:
    finish = finish_of(events)
    return (finish.reason, finish.code)


def block_ends(events: list[Event]) -> list[BlockEnd]:
    return [event for event in events if isinstance(event, BlockEnd)]


# --- text, reasoning, block allocation ---


def test_text_deltas_stream_immediately_and_the_rest_waits_for_done() -> None:
    translator = StreamTranslator()
    live: list[Event] = []
    for chunk in (
        F0,
        C("Hel"),
        C("lo"),
        {**FIN("stop"), "usage": {"prompt_tokens": 5, "completion_tokens": 2}},
    ):
        live += translator.feed(json.dumps(chunk))
    assert live == [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="Hel"),
        TextDelta(index=0, text="lo"),
    ]
    assert translator.feed("[DONE]") == [
        BlockEnd(index=0, block=TextBlock(text="Hello")),
        Usage(input_tokens=5, output_tokens=2, cache_read_tokens=0),
        Finish(reason="stop"),
    ]


def test_indexes_follow_opening_order_across_kinds() -> None:
    assert translate(F0, R("think"), R("ing"), C("answer"), FIN("stop")) == [
        BlockStart(index=0, block_type="reasoning"),
        ReasoningDelta(index=0, text="think"),
        ReasoningDelta(index=0, text="ing"),
        BlockStart(index=1, block_type="text"),
        TextDelta(index=1, text="answer"),
        BlockEnd(index=0, block=ReasoningBlock(text="thinking")),
        BlockEnd(index=1, block=TextBlock(text="answer")),
        Finish(reason="stop"),
    ]


def test_resumed_reasoning_reuses_its_original_block() -> None:
    events = translate(R("a"), C("b"), R("c"), FIN("stop"))
    assert [e for e in events if isinstance(e, BlockStart)] == [
        BlockStart(index=0, block_type="reasoning"),
        BlockStart(index=1, block_type="text"),
    ]
    assert ReasoningDelta(index=0, text="c") in events
    assert block_ends(events) == [
        BlockEnd(index=0, block=ReasoningBlock(text="ac")),
        BlockEnd(index=1, block=TextBlock(text="b")),
    ]


def test_within_one_chunk_reasoning_then_content_then_tool_calls() -> None:
    chunk = {
        "choices": [
            {
                "delta": {
                    "tool_calls": [call(0, id="c", name="f", arguments="{}")],
                    "content": "t",
                    "reasoning_content": "r",
                }
            }
        ]
    }
    assert translate(chunk, done=False) == [
        BlockStart(index=0, block_type="reasoning"),
        ReasoningDelta(index=0, text="r"),
        BlockStart(index=1, block_type="text"),
        TextDelta(index=1, text="t"),
        BlockStart(index=2, block_type="tool-call"),
        ToolCallDelta(index=2, id="c", name="f", arguments_delta="{}"),
    ]


def test_choices_in_one_chunk_merge_in_order() -> None:
    chunk = {
        "choices": [
            {"index": 1, "delta": {"content": "a"}},
            {"index": 0, "delta": {"content": "b"}},
        ]
    }
    assert block_ends(translate(chunk)) == [BlockEnd(index=0, block=TextBlock(text="ab"))]


@pytest.mark.parametrize("value", ["", None, 0, ["x"], {"text": "x"}], ids=repr)
@pytest.mark.parametrize("field", ["content", "reasoning_content"])
def test_empty_null_or_non_string_text_opens_nothing(field: str, value: object) -> None:
    chunk = {"choices": [{"delta": {field: value}}]}
    assert translate(chunk, C("x"), done=False) == [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="x"),
    ]


def test_absent_reasoning_field_opens_only_text() -> None:
    events = translate({"choices": [{"delta": {"role": "assistant", "content": "x"}}]})
    assert [e for e in events if isinstance(e, BlockStart)] == [
        BlockStart(index=0, block_type="text")
    ]


# --- tool calls ---


def test_tool_call_arguments_are_the_raw_concatenation() -> None:
    events = translate(
        T(call(0, id="call_00_x", name="get_weather", arguments="")),
        T(call(0, arguments='{"city"')),
        T(call(0, arguments=': "Paris"}')),
        {**FIN("tool_calls"), "usage": {"prompt_tokens": 28, "completion_tokens": 6}},
    )
    assert events == [
        BlockStart(index=0, block_type="tool-call"),
        ToolCallDelta(index=0, id="call_00_x", name="get_weather", arguments_delta=""),
        ToolCallDelta(index=0, id="call_00_x", name="get_weather", arguments_delta='{"city"'),
        ToolCallDelta(index=0, id="call_00_x", name="get_weather", arguments_delta=': "Paris"}'),
        BlockEnd(
            index=0,
            block=ToolCallBlock(id="call_00_x", name="get_weather", arguments='{"city": "Paris"}'),
        ),
        Usage(input_tokens=28, output_tokens=6, cache_read_tokens=0),
        Finish(reason="tool-calls"),
    ]


def test_invalid_json_arguments_pass_through_unchanged() -> None:
    events = translate(
        T(call(0, id="c", name="f", arguments='{"a":')),
        T(call(0, arguments=" [1,")),
        FIN("tool_calls"),
    )
    assert block_ends(events) == [
        BlockEnd(index=0, block=ToolCallBlock(id="c", name="f", arguments='{"a": [1,'))
    ]


@pytest.mark.parametrize("arguments", [None, {"a": 1}, 7], ids=repr)
def test_null_or_non_string_arguments_contribute_nothing(arguments: object) -> None:
    events = translate(
        T(call(0, id="c", name="f", arguments=arguments)),
        T(call(0, arguments="{}")),
        FIN("tool_calls"),
    )
    assert ToolCallDelta(index=0, id="c", name="f", arguments_delta="") in events
    assert block_ends(events) == [
        BlockEnd(index=0, block=ToolCallBlock(id="c", name="f", arguments="{}"))
    ]


def test_entry_without_function_or_arguments_yields_one_delta() -> None:
    events = translate(
        T({"index": 0, "id": "c"}),
        T({"index": 0, "type": "function", "function": {"name": "f"}}),
        done=False,
    )
    assert events == [
        BlockStart(index=0, block_type="tool-call"),
        ToolCallDelta(index=0, id="c", arguments_delta=""),
        ToolCallDelta(index=0, id="c", name="f", arguments_delta=""),
    ]


def test_null_function_object_is_tolerated() -> None:
    events = translate(
        T(call(0, id="c", name="f", arguments="{}")),
        T({"index": 0, "function": None}),
        FIN("tool_calls"),
    )
    assert outcome(events) == ("tool-calls", None)


@pytest.mark.parametrize("blank", ["", None, 0, False, ["x"]], ids=repr)
def test_empty_null_or_non_string_continuation_identity_keeps_the_established_one(
    blank: object,
) -> None:
    events = translate(
        T(call(0, id="call_1", name="f", arguments="")),
        T({"index": 0, "id": blank, "type": None, "function": {"name": blank, "arguments": "{}"}}),
        FIN("tool_calls"),
    )
    assert ToolCallDelta(index=0, id="call_1", name="f", arguments_delta="{}") in events
    assert block_ends(events) == [
        BlockEnd(index=0, block=ToolCallBlock(id="call_1", name="f", arguments="{}"))
    ]
    assert outcome(events) == ("tool-calls", None)


def test_repeated_identical_identity_is_inert() -> None:
    events = translate(
        T(call(0, id="c", name="read_file", arguments="{")),
        T(call(0, id="c", name="read_file", arguments="}")),
        FIN("tool_calls"),
    )
    assert block_ends(events) == [
        BlockEnd(index=0, block=ToolCallBlock(id="c", name="read_file", arguments="{}"))
    ]


@pytest.mark.parametrize(
    "later",
    [call(0, id="cd", arguments="}"), call(0, name="_x", arguments="}")],
    ids=["id-alone", "name-alone"],
)
def test_conflicting_later_identity_keeps_the_first_and_never_concatenates(
    later: dict[str, Any],
) -> None:
    events = translate(T(call(0, id="ab", name="get", arguments="{")), T(later), FIN("tool_calls"))
    assert events == [
        BlockStart(index=0, block_type="tool-call"),
        ToolCallDelta(index=0, id="ab", name="get", arguments_delta="{"),
        ToolCallDelta(index=0, id="ab", name="get", arguments_delta="}"),
        BlockEnd(index=0, block=ToolCallBlock(id="ab", name="get", arguments="{}")),
        Finish(reason="tool-calls"),
    ]


@pytest.mark.parametrize("index", [0, None], ids=["index-reused", "no-index"])
def test_another_id_with_a_name_at_a_used_index_is_another_call(index: int | None) -> None:
    # Ollama puts every parallel call at index 0, Gemini sends each without one (C2, E2).
    events = translate(
        T(call(index, id="a", name="get_weather", arguments='{"city": "Paris"}')),
        T(call(index, id="b", name="get_weather", arguments='{"city": "Oslo"}')),
        T(call(index, arguments="")),
        FIN("tool_calls"),
    )
    assert block_ends(events) == [
        BlockEnd(
            index=0, block=ToolCallBlock(id="a", name="get_weather", arguments='{"city": "Paris"}')
        ),
        BlockEnd(
            index=1, block=ToolCallBlock(id="b", name="get_weather", arguments='{"city": "Oslo"}')
        ),
    ]


def test_late_identity_is_accepted() -> None:
    events = translate(
        T(call(0, arguments="{}")), T(call(0, id="late", name="f", arguments="")), FIN("tool_calls")
    )
    assert events[:3] == [
        BlockStart(index=0, block_type="tool-call"),
        ToolCallDelta(index=0, arguments_delta="{}"),  # identity unknown yet: omitted
        ToolCallDelta(index=0, id="late", name="f", arguments_delta=""),
    ]
    assert block_ends(events) == [
        BlockEnd(index=0, block=ToolCallBlock(id="late", name="f", arguments="{}"))
    ]


def test_name_first_sent_empty_then_real_is_accepted() -> None:
    events = translate(
        T(call(0, id="c", name="", arguments="")),
        T(call(0, name="f", arguments="{}")),
        FIN("tool_calls"),
    )
    assert block_ends(events) == [
        BlockEnd(index=0, block=ToolCallBlock(id="c", name="f", arguments="{}"))
    ]


def test_parallel_calls_keep_separate_identities_under_interleaving() -> None:
    events = translate(
        T(call(0, id="a", name="one", arguments=""), call(1, id="b", name="two", arguments="")),
        T({"index": 1, "id": "", "function": {"name": None, "arguments": '{"y"'}}),
        T({"index": 0, "id": None, "function": {"name": "", "arguments": '{"x"'}}),
        T(call(1, arguments=":2}"), call(0, arguments=":1}")),
        FIN("tool_calls"),
    )
    assert block_ends(events) == [
        BlockEnd(index=0, block=ToolCallBlock(id="a", name="one", arguments='{"x":1}')),
        BlockEnd(index=1, block=ToolCallBlock(id="b", name="two", arguments='{"y":2}')),
    ]


def test_text_then_tool_call_get_distinct_indexes() -> None:
    events = translate(
        F0, C("Checking."), T(call(0, id="c", name="f", arguments="{}")), FIN("tool_calls")
    )
    assert [e for e in events if isinstance(e, BlockStart)] == [
        BlockStart(index=0, block_type="text"),
        BlockStart(index=1, block_type="tool-call"),
    ]


def test_entries_without_index_use_their_array_position() -> None:
    events = translate(
        T(
            call(None, id="a", name="one", arguments=""),
            call(None, id="b", name="two", arguments=""),
        ),
        T(call(None, arguments="{}"), call(None, arguments="[]")),
        FIN("tool_calls"),
    )
    assert block_ends(events) == [
        BlockEnd(index=0, block=ToolCallBlock(id="a", name="one", arguments="{}")),
        BlockEnd(index=1, block=ToolCallBlock(id="b", name="two", arguments="[]")),
    ]


def test_wire_index_is_keyed_by_its_raw_json_value() -> None:
    events = translate(
        T(call(0, id="a", name="one", arguments="1")),
        T({"index": "0", "id": "b", "function": {"name": "two", "arguments": "2"}}),
        T(call(0, arguments="1")),
        FIN("tool_calls"),
    )
    assert block_ends(events) == [
        BlockEnd(index=0, block=ToolCallBlock(id="a", name="one", arguments="11")),
        BlockEnd(index=1, block=ToolCallBlock(id="b", name="two", arguments="2")),
    ]


def test_wire_index_need_not_start_at_zero() -> None:
    events = translate(C("x"), T(call(3, id="c", name="f", arguments="{}")), FIN("tool_calls"))
    assert BlockStart(index=1, block_type="tool-call") in events
    assert outcome(events) == ("tool-calls", None)


@pytest.mark.parametrize(
    ("first", "missing"),
    [
        (call(0, arguments="{}"), "id or name"),
        (call(0, name="f", arguments="{}"), "id"),
        (call(0, id="c", arguments="{}"), "name"),
        (call(0, id="", name=None, arguments="{}"), "id or name"),
    ],
    ids=["neither", "no-id", "no-name", "blank"],
)
def test_unidentified_call_reports_usage_then_malformed_tool_call_without_block_end(
    first: dict[str, Any], missing: str
) -> None:
    events = translate(F0, T(first), FIN("tool_calls"), U(5, 1))
    assert not block_ends(events)
    assert events[-2:-1] == [Usage(input_tokens=5, output_tokens=1, cache_read_tokens=0)]
    finish = finish_of(events)
    assert (finish.reason, finish.code) == error("MALFORMED_TOOL_CALL")
    assert finish.message == f"tool call at index 0 has no {missing} at [DONE]"


def test_one_unidentified_call_withholds_every_block_end() -> None:
    events = translate(
        C("text"),
        T(call(0, id="good", name="f", arguments="{}"), call(1, arguments="{}")),
        FIN("tool_calls"),
    )
    assert not block_ends(events)
    assert outcome(events) == error("MALFORMED_TOOL_CALL")


def test_unidentified_call_beats_a_wire_length_finish() -> None:
    assert outcome(translate(T(call(0, arguments="{")), FIN("length"))) == error(
        "MALFORMED_TOOL_CALL"
    )


def test_unidentified_call_without_usage_emits_just_the_finish() -> None:
    events = translate(T(call(0, arguments="{}")), FIN("tool_calls"))
    assert [type(e) for e in events] == [BlockStart, ToolCallDelta, Finish]


# --- finish reasons and empty responses ---


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("stop", ("stop", None)),
        ("tool_calls", ("tool-calls", None)),
        ("length", ("max-tokens", None)),
        ("content_filter", error("CONTENT_FILTER")),
        ("insufficient_system_resource", error("INSUFFICIENT_SYSTEM_RESOURCE")),
    ],
)
def test_finish_reason_mapping(wire: str, expected: tuple[str, str | None]) -> None:
    events = translate(F0, C("x"), FIN(wire))
    assert outcome(events) == expected
    assert block_ends(events) == [BlockEnd(index=0, block=TextBlock(text="x"))]


def test_unknown_finish_reason_message_names_it() -> None:
    assert (
        finish_of(translate(C("x"), FIN("mystery_reason"))).message
        == "model stopped: mystery_reason"
    )


def test_last_finish_reason_wins_and_null_or_empty_is_ignored() -> None:
    events = translate(C("x"), FIN("tool_calls"), FIN("stop"), FIN(None), FIN(""), FIN(3))
    assert outcome(events) == ("stop", None)


def test_no_finish_reason_by_done_means_stop() -> None:
    assert outcome(translate(F0, C("x"))) == ("stop", None)


def test_explicit_stop_with_zero_blocks_is_empty_response_after_usage() -> None:
    events = translate(F0, {**FIN("stop"), "usage": {"prompt_tokens": 7, "completion_tokens": 0}})
    assert events == [
        Usage(input_tokens=7, output_tokens=0, cache_read_tokens=0),
        Finish(
            reason="error",
            code="EMPTY_RESPONSE",
            message="model returned a completed response with no content",
        ),
    ]


@pytest.mark.parametrize(
    "chunks", [[{}], [F0], [], [{"choices": []}], [{"choices": None}]], ids=repr
)
def test_absent_finish_with_zero_blocks_is_empty_response(chunks: list[object]) -> None:
    assert translate(*chunks) == [
        Finish(
            reason="error",
            code="EMPTY_RESPONSE",
            message="model returned a completed response with no content",
        )
    ]


def test_reasoning_only_stream_is_a_successful_stop() -> None:
    assert outcome(translate(F0, R("mull"), FIN("stop"))) == ("stop", None)


def test_whitespace_only_text_is_content() -> None:
    events = translate(F0, C(" "), FIN("stop"))
    assert block_ends(events) == [BlockEnd(index=0, block=TextBlock(text=" "))]
    assert outcome(events) == ("stop", None)


@pytest.mark.parametrize(
    ("wire", "expected"),
    [("length", Finish(reason="max-tokens")), ("tool_calls", Finish(reason="tool-calls"))],
)
def test_non_stop_finish_with_zero_blocks_keeps_its_meaning(wire: str, expected: Finish) -> None:
    assert translate(F0, FIN(wire), U(3, 0)) == [
        Usage(input_tokens=3, output_tokens=0, cache_read_tokens=0),
        expected,
    ]


def test_content_filter_with_zero_blocks_stays_content_filter() -> None:
    assert outcome(translate(F0, FIN("content_filter"))) == error("CONTENT_FILTER")


def test_tool_call_counts_as_content_for_stop() -> None:
    events = translate(T(call(0, id="c", name="f", arguments="{}")), FIN("stop"))
    assert outcome(events) == ("stop", None)
    assert len(block_ends(events)) == 1


# --- usage ---


def test_usage_mapping_full_shape() -> None:
    usage = {
        "prompt_tokens": 283,
        "completion_tokens": 69,
        "prompt_cache_hit_tokens": 256,
        "prompt_cache_miss_tokens": 27,
        "prompt_tokens_details": {"cached_tokens": 256},
        "completion_tokens_details": {"reasoning_tokens": 24},
    }
    events = translate(C("x"), {"choices": [], "usage": usage})
    assert (
        Usage(input_tokens=27, output_tokens=69, cache_read_tokens=256, reasoning_tokens=24)
        in events
    )


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            {"prompt_cache_hit_tokens": 8},
            Usage(input_tokens=2, output_tokens=2, cache_read_tokens=8),
        ),
        ({}, Usage(input_tokens=10, output_tokens=2, cache_read_tokens=0)),  # 0, not omitted
        (
            {"prompt_tokens_details": {"cached_tokens": 0}},
            Usage(input_tokens=10, output_tokens=2, cache_read_tokens=0),
        ),
        (
            {"prompt_tokens_details": {"cached_tokens": 4}, "prompt_cache_hit_tokens": 8},
            Usage(input_tokens=6, output_tokens=2, cache_read_tokens=4),
        ),
        (
            {"prompt_tokens_details": {"cached_tokens": None}, "prompt_cache_hit_tokens": 8},
            Usage(input_tokens=2, output_tokens=2, cache_read_tokens=8),
        ),
        (
            {"prompt_tokens_details": None, "completion_tokens_details": {}},
            Usage(input_tokens=10, output_tokens=2, cache_read_tokens=0),
        ),
    ],
    ids=[
        "hit-fallback",
        "minimal",
        "cached-zero",
        "details-first",
        "details-null",
        "details-empty",
    ],
)
def test_usage_mapping_variants(extra: dict[str, Any], expected: Usage) -> None:
    events = translate(C("x"), U(10, 2, **extra))
    assert [e for e in events if isinstance(e, Usage)] == [expected]


def test_last_non_null_usage_wins_once_before_finish() -> None:
    events = translate(
        F0,
        C("x"),
        {**FIN("stop"), "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
        {"choices": [], "usage": None},
        U(2, 2),
        {"usage": None},
    )
    assert events[-2:] == [
        Usage(input_tokens=2, output_tokens=2, cache_read_tokens=0),
        Finish(reason="stop"),
    ]
    assert sum(isinstance(e, Usage) for e in events) == 1


def test_usage_on_every_chunk_reports_the_last() -> None:
    events = translate(
        {**C("a"), "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
        {**C("b"), "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
        FIN("stop"),
    )
    assert events[-2] == Usage(input_tokens=3, output_tokens=2, cache_read_tokens=0)


def test_no_usage_means_no_usage_event() -> None:
    assert not any(isinstance(e, Usage) for e in translate(C("x"), FIN("stop")))


# --- malformed payloads, provider errors, truncation, failures ---


@pytest.mark.parametrize(
    "payload",
    ["{bad json", "", "[DONE] ", "Number of choices must be greater than 0.", '{"a": NaN}'],
)
def test_payload_that_is_not_json_is_malformed_response(payload: str) -> None:
    events = translate(C("x"), U(1, 1), payload)
    assert events == [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="x"),
        Usage(input_tokens=1, output_tokens=1, cache_read_tokens=0),  # billed: reported (R9)
        Finish(
            reason="error", code="MALFORMED_RESPONSE", message=f"malformed SSE payload: {payload}"
        ),
    ]


def test_malformed_message_quotes_at_most_120_characters() -> None:
    payload = "{" + "x" * 300
    assert finish_of(translate(payload)).message == f"malformed SSE payload: {payload[:120]}"


@pytest.mark.parametrize(
    "document",
    [
        None,
        [1, 2],
        "text",
        {"choices": {}},
        {"choices": [None]},
        {"choices": [{"delta": "x"}]},
        {"choices": [{"delta": {"tool_calls": {}}}]},
        {"choices": [{"delta": {"tool_calls": [None]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": "f"}]}}]},
        {"choices": [], "usage": 5},
        {"choices": [], "usage": {"prompt_tokens": "3", "completion_tokens": 1}},
        {"choices": [], "usage": {"completion_tokens": 1}},
        {
            "choices": [],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "prompt_tokens_details": []},
        },
    ],
    ids=repr,
)
def test_json_of_the_wrong_shape_is_malformed_response(document: object) -> None:
    events = translate(C("x"), json.dumps(document))
    assert outcome(events) == error("MALFORMED_RESPONSE")
    assert not block_ends(events)


def test_wrong_shape_emits_nothing_of_the_offending_chunk() -> None:
    chunk = {"choices": [{"delta": {"content": "ok"}}, None]}
    assert [type(e) for e in translate(chunk)] == [Finish]


@pytest.mark.parametrize(
    "chunk",
    [
        {"choices": [{}]},
        {"choices": [{"delta": None}]},
        {"choices": [{"delta": {"tool_calls": None}}]},
        {"id": "x", "object": "chat.completion.chunk", "choices": [{"delta": {"role": None}}]},
    ],
    ids=repr,
)
def test_tolerated_chunk_shapes_carry_nothing(chunk: dict[str, Any]) -> None:
    assert translate(C("x"), chunk, FIN("stop"))[-1] == Finish(reason="stop")


def test_mid_stream_error_object_is_a_server_failure_with_the_provider_message() -> None:
    events = translate(
        F0, C("part"), {"error": {"message": "overloaded", "type": "server_error"}}, FIN("stop")
    )
    assert events[-1] == Finish(reason="error", code="SERVER", message="overloaded")
    assert not block_ends(events)


def test_mid_stream_error_in_an_empty_chunk_envelope_is_a_failure() -> None:
    chunk = {
        "object": "chat.completion.chunk",
        "choices": [],
        "error": {"message": "Worker limit reached (33/32)"},
    }
    assert finish_of(translate(chunk)) == Finish(
        reason="error", code="SERVER", message="Worker limit reached (33/32)"
    )


def test_mid_stream_error_with_a_status_uses_the_status_mapping() -> None:
    events = translate({"error": {"message": "slow down", "code": 429}})
    assert outcome(events) == error("RATE_LIMIT")


def test_null_error_field_is_an_ordinary_chunk() -> None:
    assert outcome(translate({"error": None, **C("x")})) == ("stop", None)


def test_gateway_rewrapped_comment_payload_is_ignored() -> None:
    assert outcome(translate(": OPENROUTER PROCESSING", C("x"))) == ("stop", None)


def test_eof_before_done_is_stream_closed_with_blocks_left_open() -> None:
    translator = StreamTranslator()
    events = (
        translator.feed(json.dumps(C("par")))
        + translator.feed(json.dumps(U(5, 1)))
        + translator.eof()
    )
    assert events == [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="par"),
        Usage(input_tokens=5, output_tokens=1, cache_read_tokens=0),  # billed: reported (R9)
        Finish(reason="error", code="STREAM_CLOSED", message="SSE stream ended without [DONE]"),
    ]


def test_nothing_after_done_is_read() -> None:
    translator = StreamTranslator()
    translator.feed(json.dumps(C("a")))
    assert finish_of(translator.feed("[DONE]")) == Finish(reason="stop")
    assert translator.finished
    assert translator.feed(json.dumps(C("late"))) == []
    assert translator.feed("[DONE]") == []
    assert translator.feed("{bad") == []
    assert translator.eof() == []
    assert translator.failure("TRANSPORT", "reset") == []


def test_transport_failure_is_an_error_finish_leaving_blocks_open() -> None:
    translator = StreamTranslator()
    events = translator.feed(json.dumps(C("par"))) + translator.failure(
        "TRANSPORT", "connection reset"
    )
    assert events[-1] == Finish(reason="error", code="TRANSPORT", message="connection reset")
    assert not block_ends(events)


def test_abort_is_an_aborted_finish() -> None:
    assert StreamTranslator().failure("ABORTED", "caller aborted") == [
        Finish(reason="aborted", code="ABORTED", message="caller aborted")
    ]


def test_exactly_one_finish_after_a_failure() -> None:
    translator = StreamTranslator()
    first = translator.feed("{bad")
    assert outcome(first) == error("MALFORMED_RESPONSE")
    assert translator.feed("[DONE]") == []
    assert translator.eof() == []
