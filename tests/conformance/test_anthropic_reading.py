"""The oracle's reading of the Anthropic Messages wire: one builder case per decision of
docs/decisions.md ("Reading the Anthropic Messages wire")."""

from __future__ import annotations

from conformance.codes import (
    AUTH,
    CONTEXT_WINDOW_EXCEEDED,
    EMPTY_RESPONSE,
    MALFORMED_RESPONSE,
    MALFORMED_TOOL_CALL,
    MAX_TOKENS,
    PAUSE_TURN,
    QUOTA,
    RATE_LIMIT,
    REFUSAL,
    SERVER,
    STREAM_CLOSED,
    TIMEOUT,
    TRANSPORT,
)
from conformance.events import ReasoningBlock, ServerToolBlock, TextBlock, ToolCallBlock, Usage
from conformance.oracle import ExpectedAttempt, expected_attempt, sse_events
from conformance.oracle.readers import SseEvent
from fakeprovider.build import (
    MessagesStreamBuilder,
    ScenarioBuilder,
    anthropic_error,
    messages_stream as stream,
)


def read(builder: MessagesStreamBuilder) -> ExpectedAttempt:
    scenario = ScenarioBuilder("an-case", dialect="anthropic-messages").attempt(builder).build()
    return expected_attempt(scenario, 1, now=0.0)


def started(**usage: int) -> MessagesStreamBuilder:
    return stream().message_start(**usage)


def text(
    index: int, *parts: str, builder: MessagesStreamBuilder | None = None
) -> MessagesStreamBuilder:
    builder = (builder or started()).text_start(index)
    for part in parts:
        builder.text_delta(index, part)
    return builder.block_stop(index)


def ended(builder: MessagesStreamBuilder, reason: str | None = "end_turn") -> ExpectedAttempt:
    return read(builder.message_delta(reason, output_tokens=5).message_stop())


def test_sse_events_carry_their_names_and_forget_them_after_dispatch() -> None:
    body = b"event: ping\ndata: {}\n\ndata: x\n\nevent: lost\n\n"
    assert sse_events(body) == [SseEvent("ping", "{}"), SseEvent(None, "x")]


def test_blocks_in_opening_order_with_the_text_of_their_deltas() -> None:
    wire = text(0, "Hel", "lo").ping().tool_use_start(1, "toolu_A", "f").input_json(1, "{}")
    attempt = ended(wire.block_stop(1), "tool_use")
    assert attempt.reason == "tool-calls"
    assert attempt.blocks == (
        TextBlock(text="Hello"),
        ToolCallBlock(id="toolu_A", name="f", arguments="{}"),
    )


def test_a_text_block_with_no_non_empty_delta_is_no_content() -> None:
    attempt = ended(text(1, "Hi", builder=text(0, "")))
    assert attempt.blocks == (TextBlock(text="Hi"),)


def test_signature_and_redacted_data_verbatim_and_a_signature_only_block_kept() -> None:
    wire = started().thinking_start(0).thinking_delta(0, "hmm").signature_delta(0, "EqQB==")
    wire = wire.block_stop(0).redacted_thinking_start(1, "Er+/").block_stop(1)
    wire = wire.thinking_start(2).signature_delta(2, "sig2").block_stop(2)
    attempt = ended(wire)
    assert attempt.blocks == (
        ReasoningBlock(text="hmm", signature="EqQB=="),
        ReasoningBlock(text="", redacted="Er+/"),
        ReasoningBlock(text="", signature="sig2"),
    )
    assert attempt.reason == "stop"  # reasoning-only is content (E1)


def test_arguments_are_the_raw_fragments_else_the_start_input_as_json() -> None:
    fragments = started().tool_use_start(0, "toolu_A", "f", {"a": 1}).input_json(0, "")
    fragments = fragments.input_json(0, '{"b":').input_json(0, " 2}").block_stop(0)
    assert ended(fragments, "tool_use").blocks[0] == ToolCallBlock(
        id="toolu_A", name="f", arguments='{"b": 2}'
    )
    in_start = started().tool_use_start(0, "toolu_A", "f", {"city": "Paris"}).input_json(0, "")
    assert ended(in_start.block_stop(0), "tool_use").blocks[0] == ToolCallBlock(
        id="toolu_A", name="f", arguments='{"city": "Paris"}'
    )


def test_a_server_tool_block_is_no_client_call_and_unknown_blocks_shift_nothing() -> None:
    wire = started().block_start(
        0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    )
    wire = wire.input_json(0, '{"q": "x"}').block_stop(0)
    wire = wire.block_start(1, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1"})
    wire = wire.delta(1, {"type": "compaction_delta", "content": "c"}).block_stop(1)
    wire = wire.event({"type": "vertex_event", "usage": {}})
    attempt = ended(text(2, "found", builder=wire))
    assert attempt.blocks == (
        ServerToolBlock(id="srvtoolu_1", name="web_search", arguments='{"q": "x"}'),
        TextBlock(text="found"),
    )
    assert {"an-server-tool", "an-unknown-block", "an-unknown-event"} <= attempt.features


def test_a_delta_or_stop_for_an_index_never_started_or_stopped_fails() -> None:
    never = read(text(0, "Hi").text_delta(3, "zzz"))
    assert (never.code, never.blocks) == (MALFORMED_RESPONSE, (TextBlock(text="Hi"),))
    assert "an-delta-unknown-index" in never.features
    after = read(text(0, "Hi").text_delta(0, "late"))
    assert after.code == MALFORMED_RESPONSE and "an-delta-after-stop" in after.features
    stop = read(text(0, "Hi").block_stop(0))
    assert stop.code == MALFORMED_RESPONSE and "an-stop-after-stop" in stop.features
    before = read(started().input_json(0, "{}").tool_use_start(0, "toolu_A", "f"))
    assert before.code == MALFORMED_RESPONSE


def test_a_repeated_start_of_the_same_block_is_ignored_another_refused_in_harness() -> None:
    same = started().tool_use_start(0, "toolu_A", "f").tool_use_start(0, "toolu_A", "f")
    attempt = ended(same.input_json(0, "{}").block_stop(0), "tool_use")
    assert attempt.blocks == (ToolCallBlock(id="toolu_A", name="f", arguments="{}"),)
    assert "an-start-repeated" in attempt.features
    other = started().text_start(0).text_delta(0, "---").thinking_start(0)
    attempt = ended(other.thinking_delta(0, "hmm").block_stop(0))
    assert (attempt.reason, attempt.code) == ("error", MALFORMED_RESPONSE)
    (interop,) = attempt.interop_readings
    assert (interop.reason, interop.blocks) == ("stop", (TextBlock(text="---"),))


def test_a_delta_that_does_not_fit_its_block_is_never_appended() -> None:
    wire = started().tool_use_start(0, "toolu_A", "f").input_json(0, "{").text_delta(0, "\n")
    attempt = ended(wire.input_json(0, "}").block_stop(0), "tool_use")
    assert attempt.code == MALFORMED_RESPONSE and "an-delta-misfit" in attempt.features
    assert attempt.interop_readings[0].blocks == (
        ToolCallBlock(id="toolu_A", name="f", arguments="{}"),
    )


def test_usage_is_assigned_never_summed_and_excludes_cache_reads() -> None:
    wire = text(
        0,
        "Hi",
        builder=started(
            input_tokens=317, cache_creation_input_tokens=4425, cache_read_input_tokens=20
        ),
    )
    wire = wire.message_delta(None, usage={"output_tokens": 20})
    wire = wire.message_delta(
        "end_turn",
        usage={"input_tokens": 317, "output_tokens": 47, "cache_creation_input_tokens": 4425},
    )
    attempt = read(wire.message_stop())
    assert attempt.usage == Usage(
        input_tokens=317, output_tokens=47, cache_read_tokens=20, cache_write_tokens=4425
    )
    assert attempt.reason == "stop"  # a null stop reason never erases a later one


def test_the_finish_table() -> None:
    table = {
        "end_turn": ("stop", None),
        "stop_sequence": ("stop", None),
        "max_tokens": ("max-tokens", None),
        "model_context_window_exceeded": ("max-tokens", None),
        "refusal": ("error", REFUSAL),
        "pause_turn": ("error", PAUSE_TURN),
        "tool_use": ("tool-calls", None),
    }
    for stop_reason, finish in table.items():
        attempt = ended(text(0, "Hi"), stop_reason)
        assert (attempt.reason, attempt.code) == finish, stop_reason


def test_no_stop_reason_reads_as_the_blocks_say() -> None:
    call = started().tool_use_start(0, "toolu_A", "f").input_json(0, "{}").block_stop(0)
    assert ended(call, None).reason == "tool-calls"
    attempt = ended(text(0, "Hi"), None)
    assert attempt.reason == "stop" and "an-stop-reason-null" in attempt.features


def test_a_truncated_tool_block_is_closed_as_it_stands() -> None:
    wire = started().tool_use_start(0, "toolu_A", "f").input_json(0, '{"a": "b')
    attempt = ended(wire, "max_tokens")
    assert attempt.reason == "max-tokens"
    assert attempt.blocks == (ToolCallBlock(id="toolu_A", name="f", arguments='{"a": "b'),)
    assert "an-block-unstopped" in attempt.features


def test_an_error_event_fails_with_the_code_of_its_type() -> None:
    codes = {
        "overloaded_error": SERVER,
        "api_error": SERVER,
        "rate_limit_error": RATE_LIMIT,
        "authentication_error": AUTH,
        "billing_error": QUOTA,
        "something_new": SERVER,
    }
    for kind, code in codes.items():
        attempt = read(text(0, "Partial").error(kind))
        assert (attempt.reason, attempt.code) == ("error", code), kind
        assert attempt.billed_usage is not None and "an-error-event" in attempt.features
    odd = read(started().event({"type": "error", "code": "InvalidParameter", "message": "x"}))
    assert odd.code == SERVER


def test_an_end_before_message_stop_fails_as_chat_and_a_finish_reads_finished_in_interop() -> None:
    assert read(text(0, "Hel").end()).code == STREAM_CLOSED
    assert read(text(0, "Hel").reset()).code == TRANSPORT
    assert read(text(0, "Hel").stall()).code == TIMEOUT
    attempt = read(text(0, "Hello").message_delta("end_turn", output_tokens=2).end())
    assert attempt.code == STREAM_CLOSED and "an-no-message-stop" in attempt.features
    (interop,) = attempt.interop_readings
    assert (interop.reason, interop.blocks) == ("stop", (TextBlock(text="Hello"),))


def test_nothing_after_message_stop_is_read() -> None:
    wire = text(0, "Hello").message_delta("end_turn").message_stop().text_delta(0, "LATE").done()
    attempt = read(wire)
    assert attempt.blocks == (TextBlock(text="Hello"),) and "an-after-stop" in attempt.features


def test_ping_anywhere_and_empty_data_elsewhere_is_malformed() -> None:
    wire = stream().ping().message_start().ping()
    wire = text(0, "Hi", builder=wire).field("event", "ping").raw("")
    assert ended(wire).blocks == (TextBlock(text="Hi"),)
    empty = text(0, "Hi").field("event", "content_block_delta").raw("")
    attempt = read(empty)
    assert attempt.code == MALFORMED_RESPONSE and "non-json" in attempt.features


def test_the_first_event_must_be_message_start() -> None:
    attempt = ended(text(0, "Hi", builder=stream()))
    assert attempt.code == MALFORMED_RESPONSE and "an-before-message-start" in attempt.features
    again = read(text(0, "Hi").message_start())
    assert again.code == MALFORMED_RESPONSE


def test_events_are_what_their_data_type_says() -> None:
    wire = stream().message_start().data_only().text_start(0).named("ping")
    attempt = ended(wire.text_delta(0, "Hi").data_only().block_stop(0))
    assert attempt.blocks == (TextBlock(text="Hi"),)
    assert {"an-data-only", "an-name-mismatch"} <= attempt.features


def test_refusals_of_the_harness_as_chat_reads_them() -> None:
    empty = ended(started())
    assert (empty.code, empty.interop_readings[0].reason) == (EMPTY_RESPONSE, "stop")
    unnamed = started().tool_use_start(0, "", "").input_json(0, "{}").block_stop(0)
    attempt = ended(unnamed, "tool_use")
    assert attempt.code == MALFORMED_TOOL_CALL
    assert attempt.interop_readings[0].reason == "tool-calls"
    cut = ended(started(), "max_tokens")
    assert cut.interop_readings[0].code == MAX_TOKENS


def test_anthropic_http_errors() -> None:
    def code(error: object) -> str | None:
        scenario = ScenarioBuilder("an-http", dialect="anthropic-messages").attempt(error)
        return expected_attempt(scenario.build(), 1, now=0.0).code

    assert code(anthropic_error(529)) == SERVER
    assert code(anthropic_error(402)) == QUOTA
    assert code(anthropic_error(429)) == RATE_LIMIT
    spend = anthropic_error(429, details={"error_code": "enforced_spend_limit_reached"})
    assert code(spend) == QUOTA
    context = anthropic_error(400, message="prompt is too long: 215000 tokens > 200000 maximum")
    assert code(context) == CONTEXT_WINDOW_EXCEEDED
    retried = anthropic_error(500, should_retry=False)
    scenario = ScenarioBuilder("an-http", dialect="anthropic-messages").attempt(retried).build()
    assert expected_attempt(scenario, 1, now=0.0).header("x-should-retry") == "false"
