"""litellm's anthropic/ route on Anthropic scenarios (tox -e shim-litellm): the OpenAI-shaped
chunks ``litellm.completion(model="anthropic/…", stream=True)`` hands its caller, rebuilt
by ``stream_chunk_builder``.

litellm translates the events itself (llms/anthropic/chat/handler.py ``ModelResponseIterator``
in 1.110.2), so the wire's block index reaches its caller only as a tool counter.
"""

from __future__ import annotations

from typing import Any

import pytest
from anthropic_cases import (
    call,
    check_native_retries,
    finish,
    run_scenarios,
    text,
    thrown,
    usage,
)
from shim_cases import announced_hello

from conformance.adapters.thirdparty.common import NATIVE_RETRY
from conformance.adapters.thirdparty.retry_policies import NO_RETRIES
from conformance.options import RunOptions

COLUMN = "litellm-anthropic"
Reported = dict[str, list[dict[str, Any]]]
ZERO_DETAILS = {"cache_read_tokens": 0, "reasoning_tokens": 0, "cache_write_tokens": 0}


@pytest.fixture(scope="module")
def reported() -> Reported:
    return run_scenarios(
        COLUMN,
        "sdk-text",
        "sdk-tool-fragments",
        "sdk-usage-cached",
        "sdk-error-mid-stream",
        "sdk-http-529",
        "sdk-delta-unknown-index",
        "sdk-truncated",
        "sdk-tool-input-then-empty-json",
    )


def test_hello_declares_the_dialect_and_no_retry_layer() -> None:
    assert announced_hello(COLUMN).dialects == ["anthropic-messages"]
    native = RunOptions(extra={NATIVE_RETRY: True})
    assert announced_hello(COLUMN, native).retry_policy == NO_RETRIES


def test_text_tool_and_usage(reported: Reported) -> None:
    assert reported["sdk-text"] == [
        *text(0, "Hello"),
        usage(25, 15, **ZERO_DETAILS),
        finish("stop"),
    ]
    assert reported["sdk-tool-fragments"] == [
        *text(0, "Let me check."),
        *call(1, "toolu_A", "get_weather", '{"city": "Paris"}'),
        usage(40, 30, **ZERO_DETAILS),
        finish("tool-calls"),
    ]
    # prompt_tokens counts reads and writes (18), its details name both: nothing is lost.
    assert reported["sdk-usage-cached"] == [
        *text(0, "Hi"),
        usage(10, 7, cache_read_tokens=5, reasoning_tokens=0, cache_write_tokens=3),
        finish("stop"),
    ]


def test_delta_for_an_unknown_index_joins_the_text(reported: Reported) -> None:
    # A text delta is passed through as text whatever its index (reference §2.10).
    assert reported["sdk-delta-unknown-index"] == [
        *text(0, "Hi lost!"),
        usage(0, 3, **ZERO_DETAILS),
        finish("stop"),
    ]


def test_start_input_is_dropped_and_no_arguments_become_braces(reported: Reported) -> None:
    # handler.py: the start's input is never read for a tool_use (arguments ""), and a call
    # whose deltas add up to nothing gets "{}" at content_block_stop: {"city": "Paris"} is lost.
    assert reported["sdk-tool-input-then-empty-json"] == [
        *call(0, "toolu_A", "get_weather", "{}"),
        usage(0, 12, **ZERO_DETAILS),
        finish("tool-calls"),
    ]


def test_failures(reported: Reported) -> None:
    # handler.py: an error event raises AnthropicError(status_code=500), which the stream
    # wrapper hands over as a MidStreamFallbackError around an InternalServerError.
    assert thrown(reported["sdk-error-mid-stream"]) == ("MidStreamFallbackError", "SERVER")
    assert thrown(reported["sdk-http-529"]) == ("InternalServerError", "SERVER")
    # A body that ends before message_delta: litellm's own "Stream ended before a finish_reason".
    assert thrown(reported["sdk-truncated"]) == ("MidStreamFallbackError", "STREAM_CLOSED")


def test_keeps_the_retry_policy_it_declares() -> None:
    check_native_retries(COLUMN)
