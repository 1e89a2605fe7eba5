"""The Python OpenAI Responses clients' shims on Responses scenarios: what each library
hands its caller, or what it raised. Each test runs where its library is installed (the
shim's tox environment: shim-openai, shim-openai-agents, shim-langchain) and is skipped,
saying so, elsewhere."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic_cases import finish, run_scenarios, text, thrown, usage
from responses_cases import RESPONSES, SHIM_SCENARIOS, call
from shim_cases import announced_hello

from conformance.adapters.thirdparty import SHIMS

COLUMNS = ("openai-responses", "openai-agents-responses", "langchain-responses")
Reported = dict[str, list[dict[str, Any]]]
USAGE = usage(20, 12, cache_read_tokens=10, reasoning_tokens=4)  # 30 in, 10 of them cached
TEXT = [*text(0, "Hello"), USAGE, finish("stop")]
_cache: dict[str, Reported] = {}


def reported(column: str) -> Reported:
    if not SHIMS[column].installed:
        pytest.skip(f"!!! {column} NOT TESTED: {SHIMS[column].setup}")
    if column not in _cache:
        _cache[column] = run_scenarios(column, *SHIM_SCENARIOS, wire=RESPONSES)
    return _cache[column]


@pytest.mark.parametrize("column", COLUMNS)
def test_hello_declares_the_responses_dialect(column: str) -> None:
    if not SHIMS[column].installed:
        pytest.skip(f"!!! {column} NOT TESTED: {SHIMS[column].setup}")
    hello = announced_hello(column)
    assert hello.dialects == ["openai-responses"]
    assert hello.retry_policy is None  # retries off for the content cases


@pytest.mark.parametrize("column", COLUMNS)
def test_text_tool_call_reasoning_and_usage(column: str) -> None:
    seen = reported(column)
    assert seen["rs-shim-text"] == TEXT
    # The call under its call_id, the item id beside it.
    assert seen["rs-shim-tool-call"] == [
        *call(0, "call_A", "get_weather", '{"city": "Paris"}', "fc_1"),
        USAGE,
        finish("tool-calls"),
    ]
    assert seen["rs-shim-reasoning"][:2] == [
        {"type": "block-start", "index": 0, "block_type": "reasoning"},
        {
            "type": "block-end",
            "index": 0,
            "block": {
                "type": "reasoning",
                "text": "Think.",
                "encrypted_content": "gAAAA-opaque",
                "item_id": "rs_1",
            },
        },
    ]


@pytest.mark.parametrize("column", COLUMNS)
def test_item_id_rotation_is_routed_by_output_index(column: str) -> None:
    assert reported(column)["rs-shim-item-id-rotation"] == TEXT


@pytest.mark.parametrize("column", COLUMNS)
def test_the_nested_error_event_raises_with_its_code(column: str) -> None:
    # _streaming.py:96-108 raises APIError(body=data["error"]); errors.py reads its code.
    assert thrown(reported(column)["rs-shim-nested-error"]) == ("APIError", "RATE_LIMIT")


def test_openai_python_trusts_an_empty_terminal_snapshot() -> None:
    # _responses.py:496-498 rebuilds only a null output: `output: []` is the final answer.
    assert reported("openai-responses")["rs-shim-empty-terminal-output"] == [
        USAGE,
        finish("stop"),
    ]


@pytest.mark.parametrize("column", ["openai-agents-responses", "langchain-responses"])
def test_an_empty_terminal_snapshot_keeps_the_streamed_items(column: str) -> None:
    # agents: run_loop.py:2668-2673 puts the done items back; langchain builds from deltas.
    assert reported(column)["rs-shim-empty-terminal-output"] == TEXT


def test_openai_python_raises_without_a_completed_response() -> None:
    # get_final_response() (_responses.py:91-93): a flat error event passes as an event
    # (no "error" key to raise on), then incomplete, failed and a cut stream all end the
    # same way: a RuntimeError without a code, the streamed text and usage lost.
    seen = reported("openai-responses")
    for id in ("rs-shim-flat-error", "rs-shim-incomplete-usage", "rs-shim-failed"):
        assert thrown(seen[id]) == ("RuntimeError", None), id
    assert thrown(seen["rs-shim-truncated"]) == ("RuntimeError", None)


def test_openai_agents_raises_model_behavior_errors() -> None:
    # run_loop.py:2659-2666 and 2704: every non-completed end is a ModelBehaviorError.
    seen = reported("openai-agents-responses")
    for id in (
        "rs-shim-flat-error",
        "rs-shim-incomplete-usage",
        "rs-shim-failed",
        "rs-shim-truncated",
    ):
        assert thrown(seen[id]) == ("ModelBehaviorError", None), id


def test_langchain_keeps_incomplete_usage_and_a_cut_stream() -> None:
    seen = reported("langchain-responses")
    # response.incomplete is the last chunk like response.completed: text, usage, the limit.
    assert seen["rs-shim-incomplete-usage"] == [
        *text(0, "Hello"),
        USAGE,
        finish("max-tokens"),
    ]
    # No terminal event: the chunks so far, no status, no usage: a complete-looking answer.
    assert seen["rs-shim-truncated"] == [*text(0, "Hello"), finish("stop")]
    assert thrown(seen["rs-shim-flat-error"]) == ("ValueError", None)
    assert thrown(seen["rs-shim-failed"]) == ("ValueError", None)
