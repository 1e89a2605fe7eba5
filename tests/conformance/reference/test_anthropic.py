"""The reference adapter's Anthropic Messages translator, from bytes (reference dialects.md §2,
DIALECTS.md "Decisions", AN-* of §8.2): what each odd wire becomes."""

from typing import Any

import pytest
from anthropic_wire import (
    args,
    block,
    delta,
    ends,
    event,
    hello,
    hello_block,
    start,
    stop,
    text,
    text_block,
    tool_block,
    translate,
)

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


def finish_of(events: list[Event]) -> Finish:
    last = events[-1]
    assert isinstance(last, Finish)
    return last


def failed(events: list[Event], code: str) -> bool:
    return finish_of(events).reason == "error" and finish_of(events).code == code


# --- the canonical shapes --------------------------------------------------------------------


def test_a_text_stream_is_one_block_then_usage_then_stop() -> None:
    assert translate(*hello(*ends(output_tokens=15))) == [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="Hel"),
        TextDelta(index=0, text="lo"),
        BlockEnd(index=0, block=TextBlock(text="Hello")),
        Usage(input_tokens=10, output_tokens=15, cache_read_tokens=0),
        Finish(reason="stop"),
    ]


def test_a_tool_call_after_text_keeps_its_start_identity_and_raw_arguments() -> None:
    events = translate(
        start(),
        text_block(0),
        text(0, "Okay."),
        stop(0),
        tool_block(1),
        args(1, ""),
        args(1, '{"city": "Par'),
        args(1, 'is"}'),
        stop(1),
        *ends("tool_use"),
    )
    assert [e for e in events if isinstance(e, ToolCallDelta)] == [
        ToolCallDelta(index=1, id="toolu_A", name="get_weather", arguments_delta=piece)
        for piece in ("", '{"city": "Par', 'is"}')
    ]
    assert events[-4:] == [
        BlockEnd(index=0, block=TextBlock(text="Okay.")),
        BlockEnd(
            index=1,
            block=ToolCallBlock(id="toolu_A", name="get_weather", arguments='{"city": "Paris"}'),
        ),
        Usage(input_tokens=10, output_tokens=5, cache_read_tokens=0),
        Finish(reason="tool-calls"),
    ]


@pytest.mark.parametrize(
    ("deltas", "start_input", "arguments"),
    [
        ([], {}, "{}"),  # no delta at all: the start's input
        ([""], {}, "{}"),  # only the API's empty first delta: "" is no JSON, {} is
        ([""], {"city": "Rome"}, '{"city": "Rome"}'),  # "" never resets the start's input
        ([], {"a": [1, "é"]}, '{"a": [1, "é"]}'),
        (["{bad"], {}, "{bad"),  # invalid JSON stays raw and the stream goes on
    ],
)
def test_arguments_are_the_raw_deltas_or_else_the_start_input(
    deltas: list[str], start_input: dict[str, Any], arguments: str
) -> None:
    events = translate(
        start(),
        tool_block(0, input=start_input),
        *(args(0, piece) for piece in deltas),
        stop(0),
        *ends("tool_use"),
    )
    (end,) = [e for e in events if isinstance(e, BlockEnd)]
    assert end.block == ToolCallBlock(id="toolu_A", name="get_weather", arguments=arguments)
    joined = "".join(e.arguments_delta for e in events if isinstance(e, ToolCallDelta))
    assert joined == arguments  # the block-end equals its deltas (G7)
    assert finish_of(events) == Finish(reason="tool-calls")


def test_parallel_calls_are_routed_by_index_even_interleaved() -> None:
    events = translate(
        start(),
        tool_block(0, "toolu_A"),
        tool_block(1, "toolu_B"),
        args(1, '{"city": "Rome"}'),
        args(0, '{"city": "Paris"}'),
        stop(1),
        stop(0),
        *ends("tool_use"),
    )
    assert [e.block for e in events if isinstance(e, BlockEnd)] == [
        ToolCallBlock(id="toolu_A", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCallBlock(id="toolu_B", name="get_weather", arguments='{"city": "Rome"}'),
    ]


def test_canonical_indexes_follow_opening_order_not_wire_indexes() -> None:
    # Wire index 0 is a text block that never gets text; the tool call is canonical 0.
    events = translate(start(), text_block(0), tool_block(5), stop(5), stop(0), *ends("tool_use"))
    assert events[0] == BlockStart(index=0, block_type="tool-call")
    assert not [e for e in events if isinstance(e, BlockStart) and e.block_type == "text"]


# --- empty text, reasoning, continuity tokens ------------------------------------------------


def test_a_text_block_without_text_is_nothing_and_an_empty_stop_is_empty_response() -> None:
    events = translate(start(), text_block(0), text(0, ""), stop(0), *ends(output_tokens=3))
    assert events == [
        Usage(input_tokens=10, output_tokens=3, cache_read_tokens=0),
        Finish(
            reason="error",
            code=codes.EMPTY_RESPONSE,
            message="model returned a completed response with no content",
        ),
    ]


def test_thinking_is_reasoning_with_its_signature_verbatim() -> None:
    events = translate(
        start(),
        block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, "thinking_delta", thinking="Let me "),
        delta(0, "thinking_delta", thinking="think."),
        delta(0, "signature_delta", signature="EqQB+/=="),
        stop(0),
        text_block(1),
        text(1, "Hi"),
        stop(1),
        *ends(),
    )
    assert events[:3] == [
        BlockStart(index=0, block_type="reasoning"),
        ReasoningDelta(index=0, text="Let me "),
        ReasoningDelta(index=0, text="think."),
    ]
    ends_ = [e.block for e in events if isinstance(e, BlockEnd)]
    assert ends_ == [
        ReasoningBlock(text="Let me think.", signature="EqQB+/=="),
        TextBlock(text="Hi"),
    ]


def test_a_signature_only_thinking_block_is_content() -> None:
    events = translate(
        start(),
        block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, "signature_delta", signature="sig"),
        stop(0),
        *ends(),
    )
    assert events[0] == BlockStart(index=0, block_type="reasoning")
    assert BlockEnd(index=0, block=ReasoningBlock(text="", signature="sig")) in events
    assert finish_of(events) == Finish(reason="stop")


def test_redacted_thinking_is_a_reasoning_block_carrying_its_data() -> None:
    events = translate(
        start(),
        block(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}),
        stop(0),
        *hello_block(1),
        *ends(),
    )
    assert [e.block for e in events if isinstance(e, BlockEnd)] == [
        ReasoningBlock(text="", redacted="EmwKAhgBEgy3va"),
        TextBlock(text="Hello"),
    ]


def test_a_server_tool_is_a_server_tool_block_never_a_client_call() -> None:
    events = translate(
        start(),
        block(
            0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
        ),
        args(0, '{"query": "x"}'),
        stop(0),
        block(1, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}),
        stop(1),
        *hello_block(2),
        *ends(),
    )
    assert not [e for e in events if isinstance(e, ToolCallDelta)]
    assert [e.block for e in events if isinstance(e, BlockEnd)] == [
        ServerToolBlock(id="srvtoolu_1", name="web_search", arguments='{"query": "x"}'),
        TextBlock(text="Hello"),  # canonical 1: the skipped result block took no index
    ]


def test_unknown_block_types_events_and_delta_types_are_skipped_without_shifting() -> None:
    events = translate(
        start(),
        {"type": "ping"},
        block(0, {"type": "fallback", "from": {"model": "a"}, "to": {"model": "b"}}),
        delta(0, "text_delta", text="not shown"),
        stop(0),
        {"type": "vertex_event", "usage": {}},
        text_block(1),
        delta(1, "future_delta", x=1),
        text(1, "Hello"),
        stop(1),
        *ends(),
    )
    assert events[0] == BlockStart(index=0, block_type="text")
    assert [e.block for e in events if isinstance(e, BlockEnd)] == [TextBlock(text="Hello")]
    assert finish_of(events) == Finish(reason="stop")


# --- the wire's grammar: refused, never guessed --------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param([text(1, "x")], id="delta-never-started"),
        pytest.param([stop(0), text(0, "x")], id="delta-after-stop"),
        pytest.param([stop(1)], id="stop-never-started"),
        pytest.param([stop(0), stop(0)], id="stop-twice"),
        pytest.param([stop(0), tool_block(0)], id="repeated-start-other-type"),
        pytest.param([args(0, "{}")], id="json-into-text"),
        pytest.param([delta(0, "thinking_delta", thinking="x")], id="thinking-into-text"),
    ],
)
def test_a_delta_or_start_that_fits_no_open_block_is_malformed_response(bad: list[Any]) -> None:
    events = translate(start(), text_block(0), text(0, "Hi"), *bad, *ends())
    assert failed(events, codes.MALFORMED_RESPONSE)
    assert not [e for e in events if isinstance(e, BlockEnd)]
    assert Usage(input_tokens=10, output_tokens=1, cache_read_tokens=0) in events


def test_the_same_start_again_is_ignored_never_merged_or_reset() -> None:
    events = translate(
        start(), text_block(0), text(0, "Hi"), text_block(0), text(0, "!"), stop(0), *ends()
    )
    assert finish_of(events) == Finish(reason="stop")
    assert [e.block for e in events if isinstance(e, BlockEnd)] == [TextBlock(text="Hi!")]


def test_a_text_delta_into_a_tool_block_is_refused() -> None:
    events = translate(start(), tool_block(0), text(0, "oops"), stop(0), *ends("tool_use"))
    assert failed(events, codes.MALFORMED_RESPONSE)


def test_content_before_message_start_is_malformed() -> None:
    assert failed(translate(text_block(0), text(0, "x"), stop(0), *ends()), "MALFORMED_RESPONSE")


@pytest.mark.parametrize(
    "payload", ["", "{not json", "[1]", '{"index": 0}'], ids=["empty", "json", "array", "no-type"]
)
def test_an_event_with_unreadable_data_is_malformed(payload: str) -> None:
    events = translate(*hello(event(payload, name="content_block_delta"), *ends()))
    assert failed(events, codes.MALFORMED_RESPONSE)


def test_a_ping_with_empty_data_is_skipped() -> None:
    events = translate(*hello(event("", name="ping"), b"event: ping\ndata:\n\n", *ends()))
    assert finish_of(events) == Finish(reason="stop")


def test_events_are_read_by_data_type_without_or_against_their_event_line() -> None:
    body = [event(item, name=None) for item in hello(*ends())]
    body[1] = event(text_block(0), name="content_block_stop")  # a name that disagrees
    events = translate(*body)
    assert [e.block for e in events if isinstance(e, BlockEnd)] == [TextBlock(text="Hello")]


# --- usage -----------------------------------------------------------------------------------


def test_usage_is_assigned_never_summed_and_cache_counters_are_their_own() -> None:
    events = translate(
        start(317, 1, cache_creation_input_tokens=4425, cache_read_input_tokens=7),
        *hello(*ends(output_tokens=47, input_tokens=317, cache_creation_input_tokens=4425))[1:],
    )
    assert [e for e in events if isinstance(e, Usage)] == [
        Usage(input_tokens=317, output_tokens=47, cache_read_tokens=7, cache_write_tokens=4425)
    ]


def test_a_usage_count_that_is_no_integer_is_malformed() -> None:
    events = translate(start(), *hello(*ends())[1:-2], *ends(output_tokens="5"))  # type: ignore[arg-type]
    assert failed(events, codes.MALFORMED_RESPONSE)


# --- the end -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("end_turn", Finish(reason="stop")),
        ("stop_sequence", Finish(reason="stop")),
        ("max_tokens", Finish(reason="max-tokens")),
        ("model_context_window_exceeded", Finish(reason="max-tokens")),
        ("refusal", Finish(reason="error", code="REFUSAL", message="model stopped: refusal")),
        (
            "pause_turn",
            Finish(reason="error", code="PAUSE_TURN", message="model stopped: pause_turn"),
        ),
        (
            "new_reason",
            Finish(reason="error", code="NEW_REASON", message="model stopped: new_reason"),
        ),
        (None, Finish(reason="stop")),  # no stop reason and no call: the turn ended
    ],
)
def test_the_stop_reason_maps_to_the_finish(reason: str | None, finish: Finish) -> None:
    events = translate(*hello(*ends(reason)))
    assert events[-1] == finish
    assert isinstance(events[-2], Usage)  # usage is reported before any finish


def test_a_null_stop_reason_after_a_call_is_tool_calls_and_a_later_null_never_erases() -> None:
    events = translate(start(), tool_block(0), args(0, "{}"), stop(0), *ends(None))
    assert finish_of(events) == Finish(reason="tool-calls")
    wire = [*hello(*ends("max_tokens")[:1]), *ends(None)]
    assert finish_of(translate(*wire)) == Finish(reason="max-tokens")


def test_max_tokens_mid_call_closes_the_call_as_it_stands_with_max_tokens() -> None:
    events = translate(start(), tool_block(0), args(0, '{"path": "/tm'), *ends("max_tokens"))
    assert events[-3:] == [
        BlockEnd(
            index=0,
            block=ToolCallBlock(id="toolu_A", name="get_weather", arguments='{"path": "/tm'),
        ),
        Usage(input_tokens=10, output_tokens=5, cache_read_tokens=0),
        Finish(reason="max-tokens"),
    ]


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ({"type": "overloaded_error", "message": "Overloaded"}, codes.SERVER),
        ({"type": "api_error", "message": "Internal"}, codes.SERVER),
        ({"type": "rate_limit_error", "message": "slow down"}, codes.RATE_LIMIT),
        (
            {
                "type": "rate_limit_error",
                "message": "x",
                "details": {"error_code": "enforced_spend_limit_reached"},
            },
            codes.QUOTA,
        ),
        ({"type": "billing_error", "message": "pay"}, codes.QUOTA),
        ({"type": "authentication_error", "message": "key"}, codes.AUTH),
        (
            {"type": "invalid_request_error", "message": "prompt is too long: 5 > 4"},
            codes.CONTEXT_WINDOW_EXCEEDED,
        ),
        ({"type": "something_new", "message": "?"}, codes.SERVER),
        ("Overloaded", codes.SERVER),  # a non-standard body is still a failure
    ],
)
def test_an_error_event_fails_with_its_type_s_code_after_the_usage(
    error: object, code: str
) -> None:
    events = translate(
        start(), text_block(0), text(0, "Partial"), {"type": "error", "error": error}
    )
    assert events[:2] == [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="Partial"),
    ]
    assert events[2] == Usage(input_tokens=10, output_tokens=1, cache_read_tokens=0)
    assert failed(events, code)
    assert len(events) == 4  # no block-end: a partial answer is never presented as complete


def test_the_end_of_the_body_before_message_stop_is_stream_closed() -> None:
    events = translate(*hello(*ends()[:1]))
    assert failed(events, codes.STREAM_CLOSED)
    assert not [e for e in events if isinstance(e, BlockEnd)]


def test_a_transport_failure_is_reported_after_the_usage() -> None:
    events = translate(*hello(), failure=Failure(codes.TRANSPORT, "reset"))
    assert events[-2:] == [
        Usage(input_tokens=10, output_tokens=1, cache_read_tokens=0),
        Finish(reason="error", code=codes.TRANSPORT, message="reset"),
    ]


def test_nothing_after_message_stop_is_read() -> None:
    events = translate(
        *hello(*ends()), text(0, "more"), {"type": "error", "error": {}}, b"data: [DONE]\n\n"
    )
    assert finish_of(events) == Finish(reason="stop")
    assert TextDelta(index=0, text="more") not in events


@pytest.mark.parametrize(
    "content",
    [
        {"type": "tool_use", "name": "get_weather", "input": {}},
        {"type": "tool_use", "id": "", "name": "get_weather", "input": {}},
        {"type": "tool_use", "id": "toolu_A", "name": None, "input": {}},
    ],
    ids=["no-id", "empty-id", "null-name"],
)
def test_a_call_without_id_or_name_is_malformed_tool_call_after_the_usage(
    content: dict[str, Any],
) -> None:
    events = translate(start(), block(0, content), args(0, "{}"), stop(0), *ends("tool_use"))
    assert not [e for e in events if isinstance(e, BlockEnd)]
    assert isinstance(events[-2], Usage)
    assert failed(events, codes.MALFORMED_TOOL_CALL)
