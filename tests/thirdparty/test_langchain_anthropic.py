"""The langchain-anthropic ChatAnthropic shim on Anthropic scenarios
(tox -e shim-langchain-anthropic): the chunks ``.stream`` hands its caller, added up.

langchain reads the SDK's raw events, not its accumulator (chat_models.py
``_make_message_chunk_from_anthropic_event``, 2298-2527 in 1.7.10), so it shares none of
anthropic-python's §2.10 failures and has its own.
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
from conformance.adapters.thirdparty.retry_policies import anthropic_sdk
from conformance.options import RunOptions

COLUMN = "langchain-anthropic"
Reported = dict[str, list[dict[str, Any]]]


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


def test_hello_declares_the_dialect_and_the_sdk_retries() -> None:
    assert announced_hello(COLUMN).dialects == ["anthropic-messages"]
    native = RunOptions(extra={NATIVE_RETRY: True})
    assert announced_hello(COLUMN, native).retry_policy == anthropic_sdk()


def test_usage_is_message_deltas_alone(reported: Reported) -> None:
    # message_start's input_tokens (25) is not read (2334-2345: its chunk has no usage); only
    # message_delta's usage is (2494-2497), and it carried output_tokens alone.
    assert reported["sdk-text"] == [*text(0, "Hello"), usage(0, 15), finish("stop")]
    # The cache write counted in message_start only is lost the same way.
    assert reported["sdk-usage-cached"] == [
        *text(0, "Hi"),
        usage(10, 7, cache_read_tokens=5),
        finish("stop"),
    ]


def test_tool_call_is_the_raw_concatenation(reported: Reported) -> None:
    assert reported["sdk-tool-fragments"] == [
        *text(0, "Let me check."),
        *call(1, "toolu_A", "get_weather", '{"city": "Paris"}'),
        usage(0, 30),
        finish("tool-calls"),
    ]
    # A start's input is its JSON (json.dumps), the empty partial_json adds nothing.
    assert reported["sdk-tool-input-then-empty-json"] == [
        *call(0, "toolu_A", "get_weather", '{"city": "Paris"}'),
        usage(0, 12),
        finish("tool-calls"),
    ]


def test_delta_for_an_unknown_index_becomes_a_block_of_its_own(reported: Reported) -> None:
    # Each text delta is a content block keyed by the wire's index: index 3 is merged with
    # nothing and stays a second text block.
    assert reported["sdk-delta-unknown-index"] == [
        *text(0, "Hi!"),
        *text(1, " lost"),
        usage(0, 3),
        finish("stop"),
    ]


def test_truncated_stream_is_returned_as_complete(reported: Reported) -> None:
    assert reported["sdk-truncated"] == [*text(0, "Hel"), finish("stop")]


def test_errors_keep_their_anthropic_type(reported: Reported) -> None:
    # _handle_anthropic_api_error re-raises the SDK's errors as langchain's own classes.
    assert thrown(reported["sdk-error-mid-stream"]) == ("APIStatusError", "SERVER")
    assert thrown(reported["sdk-http-529"]) == ("AnthropicOverloadedError", "SERVER")


def test_keeps_the_retry_policy_it_declares() -> None:
    check_native_retries(COLUMN)
