"""What the Anthropic Messages shims share (thirdparty/messages.py) and the Anthropic error
bodies' codes; no third-party library is imported."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conformance.adapters.thirdparty.common import hello
from conformance.adapters.thirdparty.errors import error_code
from conformance.adapters.thirdparty.messages import (
    DIALECTS,
    MessageTurn,
    anthropic_tools,
    content_blocks,
    message_params,
    message_usage,
    openai_tools,
    prompt_text,
    stop_finish,
)
from conformance.events import (
    Finish,
    ReasoningBlock,
    RetryPolicy,
    RunCase,
    ServerToolBlock,
    TextBlock,
    ToolCallBlock,
    Usage,
)

WEATHER = {
    "name": "get_weather",
    "description": "The weather.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def _case(**request: object) -> RunCase:
    return RunCase(
        case="c",
        dialect="anthropic-messages",
        base_url="http://127.0.0.1:1/c",
        api_key="k",
        request=request,
        retry=RetryPolicy(max_retries=0, initial_delay_ms=1, max_delay_ms=1, jitter_ratio=0),
        idle_timeout_s=1.0,
        timeout_s=2.0,
    )


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        (None, Finish(reason="stop")),
        ("end_turn", Finish(reason="stop")),
        ("stop_sequence", Finish(reason="stop")),
        ("tool_use", Finish(reason="tool-calls")),
        ("max_tokens", Finish(reason="max-tokens")),
        ("model_context_window_exceeded", Finish(reason="max-tokens")),
        ("refusal", Finish(reason="error", code="REFUSAL")),
        ("pause_turn", Finish(reason="error", code="PAUSE_TURN")),
    ],
)
def test_a_stop_reason_finishes_as_dialects_md_says(
    stop_reason: str | None, finish: Finish
) -> None:
    assert stop_finish(stop_reason) == finish


def test_content_blocks_keep_order_signatures_and_redacted_data() -> None:
    content = [
        SimpleNamespace(type="thinking", thinking="hm", signature="EqQB"),
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": ""},
        SimpleNamespace(type="text", text="Hi"),
        {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
    ]
    assert content_blocks(content) == [
        ReasoningBlock(text="hm", signature="EqQB"),
        ReasoningBlock(text="", redacted="opaque"),
        TextBlock(text="Hi"),
        ToolCallBlock(id="toolu_A", name="get_weather", arguments='{"city": "Paris"}'),
        ServerToolBlock(id="srvtoolu_1", name="web_search", arguments='{"q": "x"}'),
    ]


def test_usage_keeps_cache_reads_and_writes_apart() -> None:
    usage = {"input_tokens": 10, "output_tokens": 7, "cache_read_input_tokens": 5}
    assert message_usage(usage | {"cache_creation_input_tokens": 3}) == Usage(
        input_tokens=10, output_tokens=7, cache_read_tokens=5, cache_write_tokens=3
    )
    assert message_usage({"output_tokens": 7}) is None
    assert message_usage(None) is None


def test_a_turn_is_its_blocks_then_usage_then_its_finish() -> None:
    turn = MessageTurn(
        blocks=[TextBlock(text="Hi")],
        usage=Usage(input_tokens=1, output_tokens=2),
        stop_reason="end_turn",
    )
    assert [event.type for event in turn.events()] == [
        "block-start",
        "block-end",
        "usage",
        "finish",
    ]


def test_the_request_becomes_sdk_keywords_tools_and_a_prompt() -> None:
    case = _case(
        model="m",
        stream=True,
        messages=[{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        tools=[WEATHER],
    )
    assert message_params(case) == {
        "model": "m",
        "max_tokens": 1024,
        "messages": case.request["messages"],
        "tools": [WEATHER],
    }
    assert prompt_text(case) == "Hi"
    assert [spec.name for spec in anthropic_tools(case)] == ["get_weather"]
    assert openai_tools(case)[0]["function"]["parameters"] == WEATHER["input_schema"]


def test_an_anthropic_shim_declares_its_dialect() -> None:
    assert hello("x", "1", reasoning=True, dialects=DIALECTS).spoken_dialects == (
        "anthropic-messages",
    )
    assert hello("x", "1", reasoning=True).dialects is None  # a chat shim's hello is unchanged


APIStatusError = type("APIStatusError", (Exception,), {})


def _status_error(status: int, kind: str) -> BaseException:
    error = APIStatusError("{'type': 'error'}")
    error.status_code = status  # type: ignore[attr-defined]
    error.body = {"type": "error", "error": {"type": kind, "message": "m"}}  # type: ignore[attr-defined]
    return error


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("overloaded_error", "SERVER"),
        ("rate_limit_error", "RATE_LIMIT"),
        ("authentication_error", "AUTH"),
        ("invalid_request_error", "INVALID_REQUEST"),
        ("a_future_error", None),
    ],
)
def test_an_error_event_on_a_200_is_classified_by_its_type(kind: str, code: str | None) -> None:
    # The Anthropic SDK raises an `event: error` with its response's 200: the status says
    # nothing, the body's type does.
    assert error_code(_status_error(200, kind)) == code


def test_an_error_status_still_wins_over_the_body() -> None:
    assert error_code(_status_error(529, "rate_limit_error")) == "SERVER"
