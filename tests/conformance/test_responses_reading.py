"""The oracle's reading of the OpenAI Responses wire: one builder case per decision of
docs/decisions.md ("Reading the OpenAI Responses wire")."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.codes import (
    CONTENT_FILTER,
    CONTEXT_WINDOW_EXCEEDED,
    EMPTY_RESPONSE,
    MALFORMED_RESPONSE,
    MALFORMED_TOOL_CALL,
    QUOTA,
    RATE_LIMIT,
    REFUSAL,
    SERVER,
    STREAM_CLOSED,
)
from conformance.events import ReasoningBlock, ServerToolBlock, TextBlock, ToolCallBlock, Usage
from conformance.oracle import ExpectedAttempt, expected_attempt
from fakeprovider.build import ResponsesStreamBuilder, ScenarioBuilder, responses_stream

USAGE = {
    "input_tokens": 30,
    "input_tokens_details": {"cached_tokens": 10},
    "output_tokens": 7,
    "output_tokens_details": {"reasoning_tokens": 3},
    "total_tokens": 37,
}


def read(builder: ResponsesStreamBuilder) -> ExpectedAttempt:
    scenario = ScenarioBuilder("rs-case", dialect="openai-responses").attempt(builder).build()
    return expected_attempt(scenario, 1, now=0.0)


def started() -> ResponsesStreamBuilder:
    return responses_stream().created().in_progress()


def message(
    index: int, *parts: str, builder: ResponsesStreamBuilder | None = None, id: str = "msg_1"
) -> ResponsesStreamBuilder:
    builder = (builder or started()).message_added(index, id).part_added(index, id)
    for part in parts:
        builder.text_delta(index, id, part)
    return builder


def call(
    index: int,
    *fragments: str,
    builder: ResponsesStreamBuilder | None = None,
    id: str = "fc_1",
    call_id: str = "call_1",
    name: str = "get_weather",
) -> ResponsesStreamBuilder:
    builder = (builder or started()).function_call_added(index, id, call_id, name)
    for fragment in fragments:
        builder.arguments_delta(index, id, fragment)
    return builder


def completed(builder: ResponsesStreamBuilder, **response: Any) -> ExpectedAttempt:
    response.setdefault("usage", USAGE)
    return read(builder.completed(**response))


def test_text_is_the_deltas_and_usage_excludes_cached_input() -> None:
    attempt = completed(message(0, "Hel", "lo"))
    assert attempt.reason == "stop"
    assert attempt.blocks == (TextBlock(text="Hello"),)
    assert attempt.usage == Usage(
        input_tokens=20, output_tokens=7, cache_read_tokens=10, reasoning_tokens=3
    )


def test_the_parts_of_a_message_join_in_content_index_order() -> None:
    builder = message(0, "a").part_added(0, "msg_1", 1).text_delta(0, "msg_1", "b", 1)
    assert completed(builder).blocks == (TextBlock(text="ab"),)


def test_a_function_call_reports_call_id_with_the_item_id_beside_it() -> None:
    attempt = completed(call(0, '{"city":', '"Paris"}'))
    assert attempt.reason == "tool-calls"
    assert attempt.blocks == (
        ToolCallBlock(
            id="call_1", name="get_weather", arguments='{"city":"Paris"}', item_id="fc_1"
        ),
    )
    assert "rs-call-id" in attempt.features


def test_arguments_with_no_delta_are_the_done_ones_then_the_added_ones() -> None:
    done = call(0).arguments_done(0, "fc_1", '{"a":1}')
    assert completed(done).blocks[0] == ToolCallBlock(
        id="call_1", name="get_weather", arguments='{"a":1}', item_id="fc_1"
    )
    whole = started().function_call_added(0, "fc_1", "call_1", "f", arguments='{"b":2}')
    assert completed(whole).blocks[0].arguments == '{"b":2}'  # type: ignore[union-attr]


def test_an_identity_missing_at_added_is_filled_by_output_item_done_never_replaced() -> None:
    builder = started().item_added(
        0, {"type": "function_call", "id": "fc_1", "call_id": "call_1", "arguments": ""}
    )
    builder.arguments_delta(0, "fc_1", "{}").item_done(
        0,
        {"type": "function_call", "id": "fc_9", "call_id": "call_9", "name": "f", "arguments": ""},
    )
    attempt = completed(builder)
    assert attempt.blocks == (ToolCallBlock(id="call_1", name="f", arguments="{}", item_id="fc_1"),)


def test_a_call_never_named_is_unidentified() -> None:
    builder = started().item_added(0, {"type": "function_call", "id": "fc_1", "call_id": "c"})
    attempt = completed(builder)
    assert attempt.reason == "error"
    assert attempt.code == MALFORMED_TOOL_CALL


def test_reasoning_is_the_summary_in_order_with_its_tokens_verbatim() -> None:
    builder = started().reasoning_added(0, "rs_1")
    builder.summary_delta(0, "rs_1", "two", summary_index=1)
    builder.summary_delta(0, "rs_1", "one ", summary_index=0)
    builder.event(
        {"type": "response.reasoning_text.delta", "output_index": 0, "item_id": "rs_1"}
        | {"content_index": 0, "delta": " raw"}
    )
    whole = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA=="}
    builder.item_done(0, whole)
    attempt = completed(message(1, "Hi", builder=builder))
    assert attempt.blocks == (
        ReasoningBlock(text="one two raw", encrypted_content="gAAA==", item_id="rs_1"),
        TextBlock(text="Hi"),
    )
    assert "rs-reasoning-tokens" in attempt.features


def test_a_reasoning_item_with_nothing_is_no_content() -> None:
    attempt = completed(started().reasoning_added(0, "rs_1"))
    assert attempt.code == EMPTY_RESPONSE


def test_an_empty_terminal_output_never_erases_the_streamed_items() -> None:
    attempt = completed(message(0, "Hello"), output=[])
    assert attempt.blocks == (TextBlock(text="Hello"),)
    assert "rs-output-empty" in attempt.features
    missing = completed(message(0, "Hello"), output=None)
    assert "rs-output-empty" in missing.features


def test_a_conflicting_terminal_snapshot_is_recorded_the_deltas_standing() -> None:
    snapshot = [
        {
            "type": "message",
            "id": "msg_1",
            "content": [{"type": "output_text", "text": "Bye"}],
        }
    ]
    attempt = completed(message(0, "Hello"), output=snapshot)
    assert attempt.blocks == (TextBlock(text="Hello"),)
    assert "rs-snapshot-conflict" in attempt.features
    agreeing = [{**snapshot[0], "content": [{"type": "output_text", "text": "Hello"}]}]
    assert "rs-snapshot-conflict" not in completed(message(0, "Hello"), output=agreeing).features


def test_done_payloads_empty_or_conflicting_never_replace_the_deltas() -> None:
    empty = completed(message(0, "Hello").text_done(0, "msg_1", ""))
    assert empty.blocks == (TextBlock(text="Hello"),)
    assert "rs-done-empty" in empty.features
    conflict = completed(call(0, "{}").arguments_done(0, "fc_1", '{"x":1}'))
    assert conflict.blocks[0].arguments == "{}"  # type: ignore[union-attr]
    assert "rs-done-conflict" in conflict.features
    item_done = message(0, "Hello").item_done(0, {"type": "message", "id": "msg_1", "content": []})
    assert "rs-done-empty" in completed(item_done).features


def test_text_with_no_delta_is_its_done_text() -> None:
    builder = message(0).text_done(0, "msg_1", "Whole")
    assert completed(builder).blocks == (TextBlock(text="Whole"),)


def test_routing_is_by_output_index_an_item_id_mismatch_recorded() -> None:
    builder = message(0).text_delta(0, "msg_rotated", "Hi")
    attempt = completed(builder)
    assert attempt.blocks == (TextBlock(text="Hi"),)
    assert "rs-item-id-mismatch" in attempt.features


@pytest.mark.parametrize(
    ("builder", "feature"),
    [
        (message(0).text_delta(1, "msg_1", "x"), "rs-unknown-index"),
        (
            message(0, "a")
            .item_done(0, {"type": "message", "id": "msg_1"})
            .text_delta(0, "msg_1", "b"),
            "rs-after-item-done",
        ),
        (call(0).text_delta(0, "fc_1", "text into a call"), "rs-event-misfit"),
        (message(0).message_added(0, "msg_2"), "rs-item-reopened"),
    ],
)
def test_an_event_for_no_open_item_of_its_kind_fails_malformed(
    builder: ResponsesStreamBuilder, feature: str
) -> None:
    attempt = completed(builder)
    assert (attempt.reason, attempt.code) == ("error", MALFORMED_RESPONSE)
    assert feature in attempt.features


def test_unknown_events_and_items_are_skipped_keeping_the_indexes() -> None:
    builder = started().item_added(0, {"type": "custom_tool_call", "id": "ctc_1"})
    builder.event({"type": "response.custom_tool_call_input.delta", "output_index": 0})
    builder.event({"type": "response.future_event"})
    attempt = completed(message(1, "Hi", builder=builder))
    assert attempt.blocks == (TextBlock(text="Hi"),)
    assert {"rs-unknown-item", "rs-unknown-event"} <= attempt.features
    assert "rs-index-gap" not in attempt.features


def test_an_index_gap_is_routed_all_the_same() -> None:
    attempt = completed(message(2, "Hi"))
    assert attempt.blocks == (TextBlock(text="Hi"),)
    builder = message(0, "a").message_added(3, "msg_2").text_delta(3, "msg_2", "b")
    assert "rs-index-gap" in completed(builder).features


def test_a_provider_run_tool_is_a_server_tool_block() -> None:
    builder = started().item_added(0, {"type": "web_search_call", "id": "ws_1"})
    whole = {"type": "web_search_call", "id": "ws_1", "action": {"query": "paris"}}
    builder.item_done(0, whole)
    attempt = completed(message(1, "Sunny", builder=builder))
    assert attempt.blocks == (
        ServerToolBlock(id="ws_1", name="web_search", arguments='{"query": "paris"}'),
        TextBlock(text="Sunny"),
    )
    assert attempt.reason == "stop"


@pytest.mark.parametrize(
    ("reason", "finish", "code"),
    [
        ("max_output_tokens", "max-tokens", None),
        (None, "max-tokens", None),
        ("content_filter", "error", CONTENT_FILTER),
        ("something_new", "error", "SOMETHING_NEW"),
    ],
)
def test_incomplete_finishes_by_its_reason(reason: str | None, finish: str, code: str) -> None:
    attempt = read(message(0, "Hi").incomplete(reason, usage=USAGE))
    assert (attempt.reason, attempt.code) == (finish, code)
    assert attempt.usage is not None  # incomplete keeps its usage


def test_a_reasoning_only_incomplete_stays_max_tokens() -> None:
    builder = started().reasoning_added(0).summary_delta(0, "rs_fake", "thinking")
    attempt = read(builder.incomplete("max_output_tokens", usage=USAGE))
    assert attempt.reason == "max-tokens"


@pytest.mark.parametrize(
    ("code", "canonical"),
    [
        ("rate_limit_exceeded", RATE_LIMIT),
        ("server_error", SERVER),
        ("insufficient_quota", QUOTA),
        ("context_length_exceeded", CONTEXT_WINDOW_EXCEEDED),
        ("invalid_prompt", "INVALID_PROMPT"),
        (None, SERVER),
    ],
)
def test_failed_and_both_error_shapes_fail_with_the_mapped_code(
    code: str | None, canonical: str
) -> None:
    failed = read(message(0, "Hi").failed(code, usage=USAGE))
    assert (failed.reason, failed.code, failed.billed_usage is not None) == (
        "error",
        canonical,
        True,
    )
    assert "rs-failed" in failed.features
    for nested in (True, False):
        errored = read(message(0, "Hi").error(code, nested=nested).failed("server_error"))
        assert (errored.reason, errored.code) == ("error", canonical)
        assert {"rs-error-event", "rs-error-nested" if nested else "rs-error-flat"} <= (
            errored.features
        )


def test_a_chat_style_error_payload_is_a_failure() -> None:
    error = {"error": {"code": "rate_limit_exceeded", "message": "slow"}}
    builder = message(0, "Hi").event(error).data_only()
    attempt = read(builder)
    assert (attempt.code, "rs-error-object" in attempt.features) == (RATE_LIMIT, True)


def test_an_error_event_then_eof_is_still_the_error() -> None:
    assert read(started().error("server_error").end()).code == SERVER


def test_a_refusal_part_ends_in_error_refusal_its_text_not_text() -> None:
    part = {"type": "refusal", "refusal": ""}
    builder = started().message_added(0, "msg_1").part_added(0, "msg_1", part=part)
    builder.refusal_delta(0, "msg_1", "I can't help with that")
    attempt = completed(builder)
    assert (attempt.reason, attempt.code, attempt.blocks) == ("error", REFUSAL, ())
    assert "rs-refusal" in attempt.features


@pytest.mark.parametrize("ending", ["eof", "done"])
def test_an_end_before_a_terminal_event_is_stream_closed(ending: str) -> None:
    builder = message(0, "Hello")
    if ending == "done":
        builder.done()
    attempt = read(builder)
    assert (attempt.reason, attempt.code) == ("error", STREAM_CLOSED)
    assert "rs-no-terminal" in attempt.features
    assert not attempt.interop_readings  # never a success, under interop either


def test_nothing_after_the_first_terminal_is_read() -> None:
    builder = message(0, "Hello").completed(usage=USAGE).text_delta(0, "msg_1", "more")
    builder.completed(usage=USAGE).done()
    attempt = read(builder)
    assert (attempt.reason, attempt.blocks) == ("stop", (TextBlock(text="Hello"),))
    assert "rs-after-terminal" in attempt.features


@pytest.mark.parametrize(
    ("builder", "feature"),
    [
        (message(0, "Hi", builder=responses_stream()), "rs-before-created"),
        (message(0, "Hi", builder=started().created()), "rs-created-repeated"),
    ],
)
def test_response_created_comes_first_and_once(
    builder: ResponsesStreamBuilder, feature: str
) -> None:
    attempt = completed(builder)
    assert (attempt.code, feature in attempt.features) == (MALFORMED_RESPONSE, True)


def test_keepalives_and_comments_are_skipped_anywhere() -> None:
    builder = responses_stream().keepalive().comment("ping").created().keepalive()
    attempt = completed(message(0, "Hi", builder=builder).keepalive())
    assert attempt.blocks == (TextBlock(text="Hi"),)
    assert {"rs-keepalive", "framing-comment"} <= attempt.features


def test_sequence_numbers_out_of_order_or_absent_are_recorded_never_fatal() -> None:
    def numbered(number: int) -> dict[str, Any]:
        return {"type": "response.output_text.delta", "sequence_number": number} | {
            "output_index": 0,
            "item_id": "msg_1",
            "content_index": 0,
            "delta": "b",
        }

    assert "rs-seq-gap" in completed(message(0, "a").event(numbered(99))).features
    repeat = message(0, "a").event(numbered(0))
    attempt = completed(repeat)
    assert attempt.blocks == (TextBlock(text="ab"),)
    assert "rs-seq-backward" in attempt.features
    absent = completed(message(0, "a").text_delta(0, "msg_1", "b").unnumbered())
    assert ("rs-seq-absent" in absent.features, absent.blocks) == (True, (TextBlock(text="ab"),))
    assert not {"rs-seq-gap", "rs-seq-backward", "rs-seq-absent"} & completed(message(0)).features


def test_blocks_take_their_place_when_they_first_have_content() -> None:
    builder = message(0).function_call_added(1, "fc_1", "call_1", "f", arguments="{}")
    builder.text_delta(0, "msg_1", "late text")
    attempt = completed(builder)
    assert [type(block) for block in attempt.blocks] == [ToolCallBlock, TextBlock]
    assert attempt.reason == "tool-calls"


def test_an_empty_completed_is_empty_response_under_harness() -> None:
    attempt = completed(started())
    assert attempt.code == EMPTY_RESPONSE
    assert attempt.interop_readings[0].reason == "stop"


def test_malformed_shapes_fail_malformed_response() -> None:
    builder = started().event({"type": "response.output_item.added", "output_index": "0"})
    assert completed(builder).code == MALFORMED_RESPONSE
    bad_usage = completed(message(0, "Hi"), usage={"input_tokens": "many"})
    assert bad_usage.code == MALFORMED_RESPONSE
    assert read(started().raw("not json")).code == MALFORMED_RESPONSE


def test_a_refusal_part_in_output_item_done_is_a_refusal_one_only_in_the_snapshot_is_not() -> None:
    refusal = {"type": "message", "id": "msg_1", "content": [{"type": "refusal", "refusal": "No"}]}
    done = started().message_added(0, "msg_1").item_done(0, refusal)
    assert completed(done).code == REFUSAL
    snapshot_only = completed(message(0, "Hi"), output=[refusal])
    assert (snapshot_only.reason, snapshot_only.blocks) == ("stop", (TextBlock(text="Hi"),))
    assert "rs-snapshot-conflict" in snapshot_only.features
