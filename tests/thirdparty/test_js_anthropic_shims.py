"""The JS Anthropic clients' shims (@anthropic-ai/sdk, @ai-sdk/anthropic, @langchain/anthropic)
on Anthropic scenarios (tox -e shim-js): what each library hands its caller.

They need a Node.js >= 22 and shims/js/node_modules (scripts/install-js-shims); where either
is missing every test here is skipped, with a reason that says so and how to get them.
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

from conformance.adapters.thirdparty import SHIMS, NodeShim
from conformance.adapters.thirdparty.common import NATIVE_RETRY
from conformance.adapters.thirdparty.node import SETUP
from conformance.options import RunOptions

COLUMNS = [
    name
    for name, shim in SHIMS.items()
    if isinstance(shim, NodeShim) and name.endswith(("anthropic", "anthropic-node"))
]
_MISSING = [name for name in COLUMNS if not SHIMS[name].installed]
if _MISSING:
    pytest.skip(
        f"!!! JS SHIMS NOT TESTED: {', '.join(_MISSING)} cannot run here (they need Node.js "
        f">= 22 and shims/js/node_modules); run {SETUP}",
        allow_module_level=True,
    )

Reported = dict[str, list[dict[str, Any]]]
SCENARIOS = (
    "sdk-text",
    "sdk-tool-fragments",
    "sdk-usage-cached",
    "sdk-error-mid-stream",
    "sdk-http-529",
    "sdk-delta-unknown-index",
    "sdk-truncated",
    "sdk-tool-input-then-empty-json",
)


@pytest.mark.parametrize("column", COLUMNS)
def test_keeps_the_retry_policy_it_declares(column: str) -> None:
    check_native_retries(column)


@pytest.fixture(scope="module")
def anthropic_node() -> Reported:
    return run_scenarios("anthropic-node", *SCENARIOS)


@pytest.mark.parametrize("column", COLUMNS)
def test_hello_declares_the_anthropic_dialect(column: str) -> None:
    hello = announced_hello(column)
    assert hello.dialects == ["anthropic-messages"]
    assert hello.retry_policy is None
    assert announced_hello(column, RunOptions(extra={NATIVE_RETRY: True})).retry_policy


def test_anthropic_node_text_tool_and_usage(anthropic_node: Reported) -> None:
    assert anthropic_node["sdk-text"] == [*text(0, "Hello"), usage(25, 15), finish("stop")]
    assert anthropic_node["sdk-tool-fragments"] == [
        *text(0, "Let me check."),
        *call(1, "toolu_A", "get_weather", '{"city":"Paris"}'),
        usage(40, 30),
        finish("tool-calls"),
    ]
    assert anthropic_node["sdk-usage-cached"] == [
        *text(0, "Hi"),
        usage(10, 7, cache_read_tokens=5, cache_write_tokens=3),
        finish("stop"),
    ]


def test_anthropic_node_errors(anthropic_node: Reported) -> None:
    # core/streaming.mjs:49-52: an APIError with the body's type and no status.
    assert thrown(anthropic_node["sdk-error-mid-stream"]) == ("APIError", "SERVER")
    assert thrown(anthropic_node["sdk-http-529"]) == ("OverloadedError", "SERVER")


def test_anthropic_node_ignores_a_delta_for_an_unknown_index(anthropic_node: Reported) -> None:
    # reference §2.10: content.at(3) is undefined, the delta is dropped; the rest reads whole.
    assert anthropic_node["sdk-delta-unknown-index"] == [
        *text(0, "Hi!"),
        usage(0, 3),
        finish("stop"),
    ]


def test_anthropic_node_resets_tool_input_on_an_empty_partial_json(
    anthropic_node: Reported,
) -> None:
    # reference §2.10: the input is rebuilt from the deltas' text, "" → {}: the start's
    # {"city": "Paris"} is lost.
    assert anthropic_node["sdk-tool-input-then-empty-json"] == [
        *call(0, "toolu_A", "get_weather", "{}"),
        usage(0, 12),
        finish("tool-calls"),
    ]


def test_anthropic_node_refuses_a_truncated_stream(anthropic_node: Reported) -> None:
    # finalMessage() throws when no message_stop came (lib/MessageStream.mjs:381): a plain
    # AnthropicError, untyped.
    assert thrown(anthropic_node["sdk-truncated"]) == ("AnthropicError", None)


@pytest.fixture(scope="module")
def vercel_ai() -> Reported:
    return run_scenarios("vercel-ai-anthropic", *SCENARIOS)


ZERO_CACHE = {"cache_read_tokens": 0, "cache_write_tokens": 0}  # the provider's zeros


def test_vercel_ai_text_tool_and_usage(vercel_ai: Reported) -> None:
    assert vercel_ai["sdk-text"] == [*text(0, "Hello"), usage(25, 15, **ZERO_CACHE), finish("stop")]
    assert vercel_ai["sdk-tool-fragments"] == [
        *text(0, "Let me check."),
        *call(1, "toolu_A", "get_weather", '{"city":"Paris"}'),
        usage(40, 30, **ZERO_CACHE),
        finish("tool-calls"),
    ]
    assert vercel_ai["sdk-usage-cached"] == [
        *text(0, "Hi"),
        usage(10, 7, cache_read_tokens=5, cache_write_tokens=3),
        finish("stop"),
    ]


def test_vercel_ai_reports_failures_as_parts(vercel_ai: Reported) -> None:
    # A later error event is an error part (a StreamProviderError typed 529 by its
    # overloaded_error), after the text already streamed.
    assert vercel_ai["sdk-error-mid-stream"] == [
        *text(0, "Hel"),
        {
            "type": "finish",
            "reason": "error",
            "code": "SERVER",
            "message": "StreamProviderError: Overloaded",
        },
    ]
    assert vercel_ai["sdk-http-529"] == [
        {
            "type": "finish",
            "reason": "error",
            "code": "SERVER",
            "message": "APICallError: fake provider: 529 overloaded_error",
        }
    ]


def test_vercel_ai_passes_a_delta_for_an_unknown_index_on(vercel_ai: Reported) -> None:
    # The text_delta case sends a text-delta part for id "3" without looking for a started
    # block (@ai-sdk/anthropic/dist/index.js:5856-5867): the caller gets a second text.
    assert vercel_ai["sdk-delta-unknown-index"] == [
        *text(0, "Hi!"),
        *text(1, " lost"),
        usage(0, 3, **ZERO_CACHE),
        finish("stop"),
    ]


def test_vercel_ai_finishes_a_truncated_stream(vercel_ai: Reported) -> None:
    # A finish part still comes, finishReason "other" with no raw stop reason and no usage:
    # nothing tells the caller the answer was cut.
    assert vercel_ai["sdk-truncated"] == [*text(0, "Hel"), finish("stop")]


def test_vercel_ai_keeps_a_start_input_through_an_empty_partial_json(
    vercel_ai: Reported,
) -> None:
    # The empty delta is skipped (dist/index.js:5893) and the start's input stays the call's.
    assert vercel_ai["sdk-tool-input-then-empty-json"] == [
        *call(0, "toolu_A", "get_weather", '{"city":"Paris"}'),
        usage(0, 12, **ZERO_CACHE),
        finish("tool-calls"),
    ]


@pytest.fixture(scope="module")
def langchain_js() -> Reported:
    return run_scenarios("langchain-js-anthropic", *SCENARIOS)


def test_langchain_js_adds_the_preliminary_output_count(langchain_js: Reported) -> None:
    # message_start's usage chunk (output_tokens 1, preliminary) and message_delta's (15,
    # cumulative) are summed by concat (dist/utils/message_outputs.js:7-41): 16 reported.
    assert langchain_js["sdk-text"] == [
        *text(0, "Hello"),
        usage(25, 16, **ZERO_CACHE),
        finish("stop"),
    ]
    assert langchain_js["sdk-usage-cached"] == [
        *text(0, "Hi"),
        usage(10, 8, cache_read_tokens=5, cache_write_tokens=3),
        finish("stop"),
    ]
    assert langchain_js["sdk-tool-fragments"] == [
        *text(0, "Let me check."),
        *call(1, "toolu_A", "get_weather", '{"city": "Paris"}'),
        usage(40, 31, **ZERO_CACHE),
        finish("tool-calls"),
    ]


def test_langchain_js_drops_a_start_input(langchain_js: Reported) -> None:
    # A tool_use start's chunk carries args "" whatever its input (message_outputs.js:52-57):
    # with only an empty partial_json after it the call has no arguments.
    assert langchain_js["sdk-tool-input-then-empty-json"] == [
        *call(0, "toolu_A", "get_weather", ""),
        usage(0, 13, **ZERO_CACHE),
        finish("tool-calls"),
    ]


def test_langchain_js_keeps_an_unknown_index_and_a_truncated_stream(
    langchain_js: Reported,
) -> None:
    assert langchain_js["sdk-delta-unknown-index"] == [
        *text(0, "Hi!"),
        *text(1, " lost"),
        usage(0, 4, **ZERO_CACHE),
        finish("stop"),
    ]
    assert langchain_js["sdk-truncated"] == [
        *text(0, "Hel"),
        usage(0, 1, **ZERO_CACHE),
        finish("stop"),
    ]


def test_langchain_js_errors(langchain_js: Reported) -> None:
    assert thrown(langchain_js["sdk-error-mid-stream"]) == ("APIError", "SERVER")
    assert thrown(langchain_js["sdk-http-529"]) == ("InternalServerError", "SERVER")


def test_anthropic_node_on_the_corpus_cases_that_show_reference_2_10() -> None:
    # The matrix's case ids for dialects.md §2.10 as the TS SDK meets them: the unknown
    # index ignored, the start's input reset by an empty partial_json, the truncated stream
    # refused (where the Python SDK returns it).
    seen = run_scenarios(
        "anthropic-node",
        "an-delta-unknown-index",
        "an-truncated-no-message-stop",
        "an-tool-input-in-start-plus-empty-delta",
    )
    assert seen["an-delta-unknown-index"][:2] == text(0, "Hello")
    assert seen["an-delta-unknown-index"][-1] == finish("stop")
    assert seen["an-tool-input-in-start-plus-empty-delta"][:2] == call(
        0, "toolu_A", "get_weather", "{}"
    )
    assert thrown(seen["an-truncated-no-message-stop"]) == ("AnthropicError", None)
