"""The JS OpenAI Responses clients' shims on Responses scenarios (tox -e shim-js): what each
library hands its caller. They need a Node.js >= 22 and shims/js/node_modules
(scripts/install-js-shims); where either is missing every test here is skipped, saying so."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic_cases import finish, run_scenarios, text, thrown, usage
from responses_cases import RESPONSES, SHIM_SCENARIOS, call
from shim_cases import announced_hello

from conformance.adapters.thirdparty import SHIMS
from conformance.adapters.thirdparty.node import SETUP

COLUMNS = ["openai-node-responses", "vercel-ai-responses"]
_MISSING = [name for name in COLUMNS if not SHIMS[name].installed]
if _MISSING:
    pytest.skip(
        f"!!! JS SHIMS NOT TESTED: {', '.join(_MISSING)} cannot run here; run {SETUP}",
        allow_module_level=True,
    )

USAGE = usage(20, 12, cache_read_tokens=10, reasoning_tokens=4)


@pytest.fixture(scope="module")
def openai_node() -> dict[str, list[dict[str, Any]]]:
    return run_scenarios("openai-node-responses", *SHIM_SCENARIOS, wire=RESPONSES)


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
