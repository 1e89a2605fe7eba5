"""The anthropic-python messages.stream shim on Anthropic scenarios (tox -e shim-anthropic):
what ``get_final_message()`` hands its caller, or what the SDK raised."""

from __future__ import annotations

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

COLUMN = "anthropic"


@pytest.fixture(scope="module")
def reported() -> dict[str, list[dict[str, object]]]:
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


def test_hello_declares_the_anthropic_dialect() -> None:
    hello = announced_hello(COLUMN)
    assert hello.dialects == ["anthropic-messages"]
    assert hello.retry_policy is None  # retries off for the content cases


def test_text_and_usage(reported: dict[str, list[dict[str, object]]]) -> None:
    assert reported["sdk-text"] == [*text(0, "Hello"), usage(25, 15), finish("stop")]


def test_tool_call_from_fragments(reported: dict[str, list[dict[str, object]]]) -> None:
    # The SDK hands over the parsed input; the shim reports it as its JSON text.
    assert reported["sdk-tool-fragments"] == [
        *text(0, "Let me check."),
        *call(1, "toolu_A", "get_weather", '{"city": "Paris"}'),
        usage(40, 30),
        finish("tool-calls"),
    ]


def test_cache_counters_are_their_own_fields(reported: dict[str, list[dict[str, object]]]) -> None:
    assert reported["sdk-usage-cached"] == [
        *text(0, "Hi"),
        usage(10, 7, cache_read_tokens=5, cache_write_tokens=3),
        finish("stop"),
    ]


def test_error_event_is_a_status_error_of_the_200(
    reported: dict[str, list[dict[str, object]]],
) -> None:
    # _streaming.py:99-112 raises _make_status_error with the response's 200: a plain
    # APIStatusError, typed only by its body's overloaded_error.
    assert thrown(reported["sdk-error-mid-stream"]) == ("APIStatusError", "SERVER")


def test_http_529_is_overloaded(reported: dict[str, list[dict[str, object]]]) -> None:
    assert thrown(reported["sdk-http-529"]) == ("OverloadedError", "SERVER")


def test_delta_for_an_unknown_index_raises_index_error(
    reported: dict[str, list[dict[str, object]]],
) -> None:
    # reference §2.10: accumulate_event indexes content by the wire's index
    # (lib/streaming/_messages.py:496), nothing typed: a thrown without a code.
    assert thrown(reported["sdk-delta-unknown-index"]) == ("IndexError", None)


def test_truncated_stream_is_returned_as_complete(
    reported: dict[str, list[dict[str, object]]],
) -> None:
    # reference §2.10: no message_stop, no stop reason, and get_final_message() returns the
    # snapshot anyway: the caller holds a cut answer that claims to be whole.
    assert reported["sdk-truncated"] == [*text(0, "Hel"), usage(0, 1), finish("stop")]


def test_empty_partial_json_keeps_the_start_input(
    reported: dict[str, list[dict[str, object]]],
) -> None:
    # An empty buffer is never parsed (lib/streaming/_messages.py:507): the start's input stays.
    assert reported["sdk-tool-input-then-empty-json"] == [
        *call(0, "toolu_A", "get_weather", '{"city": "Paris"}'),
        usage(0, 12),
        finish("tool-calls"),
    ]


def test_declares_the_retry_policy_it_runs() -> None:
    native = RunOptions(extra={NATIVE_RETRY: True})
    assert announced_hello(COLUMN, native).retry_policy == anthropic_sdk()


def test_keeps_the_retry_policy_it_declares() -> None:
    check_native_retries(COLUMN)


REFERENCE_2_10 = (
    "an-delta-unknown-index",
    "an-truncated-no-message-stop",
    "an-tool-input-in-start-plus-empty-delta",
)


def test_the_corpus_cases_that_show_reference_2_10() -> None:
    # The matrix's case ids for the two behaviours of dialects.md §2.10, as the column runs
    # them: IndexError on an unknown index, a truncated stream returned as complete; and the
    # start's input kept where the TS SDK resets it.
    seen = run_scenarios(COLUMN, *REFERENCE_2_10)
    assert thrown(seen["an-delta-unknown-index"]) == ("IndexError", None)
    assert seen["an-truncated-no-message-stop"][-1] == finish("stop")
    assert not any(e["type"] == "thrown" for e in seen["an-truncated-no-message-stop"])
    assert seen["an-tool-input-in-start-plus-empty-delta"][:2] == call(
        0, "toolu_A", "get_weather", '{"city": "Paris"}'
    )
