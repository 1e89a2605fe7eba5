"""The JS OpenAI Responses clients' shims on Responses scenarios (tox -e shim-js): what each
library hands its caller. They need a Node.js >= 22 and shims/js/node_modules
(scripts/install-js-shims); where either is missing every test here is skipped, saying so."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic_cases import finish, played, run_scenarios, text, thrown, usage
from responses_cases import RESPONSES, SHIM_SCENARIOS, call
from shim_cases import announced_hello

from conformance.adapters.thirdparty import SHIMS
from conformance.adapters.thirdparty.node import SETUP

COLUMNS = ["openai-node-responses", "vercel-ai-responses", "openai-agents-js-responses"]
_MISSING = [name for name in COLUMNS if not SHIMS[name].installed]
if _MISSING:
    pytest.skip(
        f"!!! JS SHIMS NOT TESTED: {', '.join(_MISSING)} cannot run here; run {SETUP}",
        allow_module_level=True,
    )

USAGE = usage(20, 12, cache_read_tokens=10, reasoning_tokens=4)
TEXT = [*text(0, "Hello"), USAGE, finish("stop")]


@pytest.fixture(scope="module")
def openai_node() -> dict[str, list[dict[str, Any]]]:
    return run_scenarios("openai-node-responses", *SHIM_SCENARIOS, wire=RESPONSES)


@pytest.fixture(scope="module")
def agents_js() -> dict[str, tuple[list[dict[str, Any]], int]]:
    return played("openai-agents-js-responses", *SHIM_SCENARIOS, wire=RESPONSES)


@pytest.mark.parametrize("column", COLUMNS)
def test_hello_declares_the_responses_dialect(column: str) -> None:
    hello = announced_hello(column)
    assert hello.dialects == ["openai-responses"]
    assert hello.retry_policy is None


def test_openai_node_text_and_tool_call(openai_node: dict[str, list[dict[str, Any]]]) -> None:
    assert openai_node["rs-shim-text"] == [*text(0, "Hello"), USAGE, finish("stop")]
    assert openai_node["rs-shim-tool-call"] == [
        *call(0, "call_A", "get_weather", '{"city": "Paris"}', "fc_1"),
        USAGE,
        finish("tool-calls"),
    ]


def test_openai_node_throws_on_item_id_rotation(
    openai_node: dict[str, list[dict[str, Any]]],
) -> None:
    # reference §3.7, §4.G (GitHub Copilot): an item_id that is not the item's throws.
    assert thrown(openai_node["rs-shim-item-id-rotation"]) == ("OpenAIError", None)


def test_openai_node_trusts_the_terminal_snapshot(
    openai_node: dict[str, list[dict[str, Any]]],
) -> None:
    # finalResponse() is the terminal response: `output: []` empties the streamed answer,
    # and an incomplete one's usage is kept with no text.
    assert openai_node["rs-shim-empty-terminal-output"] == [USAGE, finish("stop")]
    assert openai_node["rs-shim-incomplete-usage"] == [USAGE, finish("max-tokens")]
    assert openai_node["rs-shim-failed"] == [finish("error", "SERVER")]


def test_openai_node_raises_both_error_shapes(
    openai_node: dict[str, list[dict[str, Any]]],
) -> None:
    # An `error` event throws an APIError, flat or nested (ResponseStream.mjs:407).
    assert thrown(openai_node["rs-shim-flat-error"])[0] == "APIError"
    assert thrown(openai_node["rs-shim-nested-error"])[0] == "APIError"


def test_openai_node_returns_a_cut_stream_as_complete(
    openai_node: dict[str, list[dict[str, Any]]],
) -> None:
    assert openai_node["rs-shim-truncated"] == [*text(0, "Hello"), finish("stop")]


def test_openai_agents_js_runs_one_model_turn(
    agents_js: dict[str, tuple[list[dict[str, Any]], int]],
) -> None:
    # maxTurns: 1, toolUseBehavior 'stop_on_first_tool': each scenario is one request.
    assert {id: requests for id, (_, requests) in agents_js.items()} == dict.fromkeys(
        SHIM_SCENARIOS, 1
    )


def test_openai_agents_js_text_tool_call_reasoning_and_rotation(
    agents_js: dict[str, tuple[list[dict[str, Any]], int]],
) -> None:
    seen = {id: events for id, (events, _) in agents_js.items()}
    assert seen["rs-shim-text"] == TEXT
    assert seen["rs-shim-tool-call"] == [
        *call(0, "call_A", "get_weather", '{"city": "Paris"}', "fc_1"),
        USAGE,
        finish("tool-calls"),
    ]
    assert seen["rs-shim-reasoning"][1]["block"] == {
        "type": "reasoning",
        "text": "Think.",
        "encrypted_content": "gAAAA-opaque",
        "item_id": "rs_1",
    }
    assert seen["rs-shim-reasoning"][2:] == [*text(1, "Hello"), USAGE, finish("stop")]
    # responses.create({stream: true}) is openai-node's plain event stream: no item_id check.
    assert seen["rs-shim-item-id-rotation"] == TEXT


def test_openai_agents_js_trusts_an_empty_terminal_snapshot(
    agents_js: dict[str, tuple[list[dict[str, Any]], int]],
) -> None:
    # openaiResponsesModel.mjs:1306-1320: the turn's output is response.completed's own; with
    # none the turn has no final output and the run goes on to the next turn (past maxTurns).
    events, _ = agents_js["rs-shim-empty-terminal-output"]
    assert events[0] == USAGE
    assert thrown(events) == ("MaxTurnsExceededError", None)


def test_openai_agents_js_keeps_a_failed_turns_usage_as_it_throws(
    agents_js: dict[str, tuple[list[dict[str, Any]], int]],
) -> None:
    # An unsuccessful terminal state throws a ModelBehaviorError (openaiResponsesModel.mjs
    # 851-876); the runner adds the response's usage to the run's (run.mjs:77-80): zeros for
    # a response.failed that sent none. A cut stream records nothing.
    seen = {id: events for id, (events, _) in agents_js.items()}
    assert seen["rs-shim-incomplete-usage"][0] == USAGE
    assert seen["rs-shim-failed"][0] == usage(0, 0)
    for id in ("rs-shim-incomplete-usage", "rs-shim-failed", "rs-shim-truncated"):
        assert thrown(seen[id]) == ("ModelBehaviorError", None), id
    assert len(seen["rs-shim-truncated"]) == 1


def test_openai_agents_js_raises_both_error_shapes_from_openai_node(
    agents_js: dict[str, tuple[list[dict[str, Any]], int]],
) -> None:
    # openai-node's Stream throws an APIError on an `error` event, flat or nested, before
    # the model's own terminal handling sees it.
    for id in ("rs-shim-flat-error", "rs-shim-nested-error"):
        events, _ = agents_js[id]
        assert len(events) == 1
        assert thrown(events)[0] == "APIError", id
