"""pydantic-ai's AnthropicModel shim on Anthropic scenarios (tox -e shim-pydantic-ai): the
parts ``request_stream(...).get()`` hands its caller, or what pydantic-ai raised.

pydantic-ai reads the SDK's raw events into parts keyed by the wire's index
(models/anthropic/_streaming.py, ``vendor_part_id=event.index``, 2.68.0).
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

COLUMN = "pydantic-ai-anthropic"
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


def test_text_tool_and_usage(reported: Reported) -> None:
    assert reported["sdk-text"] == [*text(0, "Hello"), usage(25, 15), finish("stop")]
    assert reported["sdk-tool-fragments"] == [
        *text(0, "Let me check."),
        *call(1, "toolu_A", "get_weather", '{"city": "Paris"}'),
        usage(40, 30),
        finish("tool-calls"),
    ]
    assert reported["sdk-usage-cached"] == [
        *text(0, "Hi"),
        usage(10, 7, cache_read_tokens=5, cache_write_tokens=3),
        finish("stop"),
    ]


def test_delta_for_an_unknown_index_becomes_a_part_of_its_own(reported: Reported) -> None:
    assert reported["sdk-delta-unknown-index"] == [
        *text(0, "Hi!"),
        *text(1, " lost"),
        usage(0, 3),
        finish("stop"),
    ]


def test_truncated_stream_is_returned_as_complete(reported: Reported) -> None:
    assert reported["sdk-truncated"] == [*text(0, "Hel"), usage(0, 1), finish("stop")]


def test_empty_partial_json_after_a_start_input_raises(reported: Reported) -> None:
    # messages.py:6960: a start's input is kept parsed (a dict), and any JSON delta after it,
    # even "", is refused: the whole answer is lost, untyped.
    assert thrown(reported["sdk-tool-input-then-empty-json"]) == ("UnexpectedModelBehavior", None)


def test_errors_are_typed_by_anthropic_error_type(reported: Reported) -> None:
    # models/anthropic/_errors.py maps the body's overloaded_error to 529 and its own class,
    # for the error event on a 200 as for the HTTP 529.
    assert thrown(reported["sdk-error-mid-stream"]) == ("ModelOverloadedError", "SERVER")
    assert thrown(reported["sdk-http-529"]) == ("ModelOverloadedError", "SERVER")


def test_keeps_the_retry_policy_it_declares() -> None:
    check_native_retries(COLUMN)
