"""The parts every third-party shim shares; they import no third-party library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.adapters.thirdparty import SHIMS, NodeShim
from conformance.adapters.thirdparty.common import (
    NATIVE_RETRY,
    Assembled,
    AssembledCall,
    finish_event,
    hello,
    implied_finish,
    native_policy,
    sdk_retries,
    tool_specs,
    usage_event,
)
from conformance.adapters.thirdparty.errors import error_code
from conformance.adapters.thirdparty.node import JS_SHIMS
from conformance.adapters.thirdparty.retry_policies import NO_RETRIES, openai_sdk
from conformance.codes import RESPONSES_ERROR_CODES
from conformance.events import BlockEnd, Finish, RunCase, ToolCallBlock, Usage, parse_hello_line
from conformance.options import DEFAULT_POLICY, RunOptions, default_request


def _error(name: str, *bases: type[BaseException], **attributes: object) -> type[Exception]:
    """An exception class named like a library's, without the library."""
    return type(name, bases or (Exception,), dict(attributes))


APIError = _error("APIError")
APIStatusError = _error("APIStatusError", APIError)
APIConnectionError = _error("APIConnectionError", APIError)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (_error("RateLimitError", APIStatusError, status_code=429)("slow"), "RATE_LIMIT"),
        (
            _error("BadRequestError", APIStatusError, status_code=400)(
                "maximum context length is 8k"
            ),
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        (_error("AuthenticationError", APIStatusError, status_code=401)("no"), "AUTH"),
        (_error("InternalServerError", APIStatusError, status_code=529)("overloaded"), "SERVER"),
        (_error("APITimeoutError", APIConnectionError)("timed out"), "TIMEOUT"),
        (APIConnectionError("peer closed"), "TRANSPORT"),
        (json.JSONDecodeError("Expecting value", "", 0), "MALFORMED_RESPONSE"),
        (_error("ModelAPIError")("Failed to decode response as JSON"), "MALFORMED_RESPONSE"),
        (APIError("Upstream overloaded"), "SERVER"),
        (_error("ModelHTTPError", status_code=404)("not found"), "HTTP_404"),
        (ValueError("something else"), None),
    ],
)
def test_exceptions_map_to_canonical_codes(error: BaseException, code: str | None) -> None:
    assert error_code(error) == code


def test_litellm_wrapper_is_read_through() -> None:
    wrapper = _error("MidStreamFallbackError", status_code=503)
    closed = wrapper("Stream ended before a finish_reason was received")
    assert error_code(closed) == "STREAM_CLOSED"
    around = wrapper("boom")
    around.original_exception = APIConnectionError("reset")  # type: ignore[attr-defined]
    assert error_code(around) == "TRANSPORT"
    caused = _error("Unknown")("wrapped")
    caused.__cause__ = _error("RateLimitError", status_code=429)("x")
    assert error_code(caused) == "RATE_LIMIT"


def test_a_library_refusing_an_unidentified_call_refuses_it_as_t5_does() -> None:
    """mirascope raises a bare RuntimeError for a call opening without id or name."""
    assert error_code(RuntimeError("Missing id for tool call at index 0")) == "MALFORMED_TOOL_CALL"
    assert error_code(RuntimeError("Missing name for tool call at index 1")) == (
        "MALFORMED_TOOL_CALL"
    )
    assert error_code(RuntimeError("Received tool_call_chunk for unknown tool call ID")) is None


def test_assembled_message_becomes_blocks_usage_and_finish() -> None:
    assembled = Assembled(
        text="",
        reasoning="hm",
        tool_calls=[AssembledCall(None, "get_weather", '{"a"')],
        usage=usage_event(10, 3, 4, None),
        finish_reason="tool_calls",
    )
    events = list(assembled.events())
    ends = [e.block for e in events if isinstance(e, BlockEnd)]
    # Nothing repaired: the missing id stays empty, the broken arguments stay broken.
    assert ends[1] == ToolCallBlock(id="", name="get_weather", arguments='{"a"')
    assert [type(b).__name__ for b in ends] == ["ReasoningBlock", "ToolCallBlock"]
    assert events[-2] == Usage(input_tokens=6, output_tokens=3, cache_read_tokens=4)
    assert events[-1] == Finish(reason="tool-calls")


def test_a_normal_return_without_a_finish_reason_is_a_stop() -> None:
    """The library claimed a complete answer: S5 or E1 then judge whether it was one,
    instead of G1 failing a finish the shim left out."""
    assert finish_event(None) == Finish(reason="stop")
    assert finish_event("") == Finish(reason="stop")
    assert finish_event("length") == Finish(reason="max-tokens")
    assert finish_event("tool_callsstop") == Finish(reason="error", code="TOOL_CALLSSTOP")
    assert usage_event(None, 3, None, None) is None


def test_shim_registry_names_importable_targets_without_importing_them() -> None:
    for name, shim in SHIMS.items():
        if isinstance(shim, NodeShim):
            assert (JS_SHIMS / shim.script).is_file()
            continue
        assert shim.target.startswith("conformance.adapters.thirdparty.")
        assert name.startswith(shim.extra.split("-")[0])


def test_a_library_refusing_an_empty_stream_refuses_it_as_e1_does() -> None:
    assert error_code(ValueError("No generation chunks were returned")) == "EMPTY_RESPONSE"

    class ModelConnectionError(Exception):
        pass

    class ModelTimeoutError(ModelConnectionError):
        pass

    assert error_code(ModelTimeoutError("read timed out")) == "TIMEOUT"


def test_a_library_refusing_an_empty_length_turn_refuses_it_with_max_tokens() -> None:
    """openai-agents raises ModelBehaviorError for a length finish with no output (E4)."""
    refusal = _error("ModelBehaviorError")(
        "Chat Completions stream terminated with finish_reason='length' but produced no output"
    )
    assert error_code(refusal) == "MAX_TOKENS"


def test_a_library_without_finish_reasons_finishes_as_its_caller_acts() -> None:
    """Calls returned: its agent loop runs them (tool-calls); none: a complete answer."""
    call = AssembledCall("call_1", "get_weather", "{}")
    assert finish_event(implied_finish([call])) == Finish(reason="tool-calls")
    assert finish_event(implied_finish([])) == Finish(reason="stop")


def test_tool_specs_read_the_request_tools() -> None:
    case = RunCase(
        case="c",
        base_url="http://127.0.0.1:1/v1",
        api_key="k",
        request=default_request(),
        retry=DEFAULT_POLICY,
        idle_timeout_s=1,
        timeout_s=1,
    )
    specs = tool_specs(case)
    assert [spec.name for spec in specs] == ["get_weather", "get_time"]
    assert specs[0].description == "Current weather for a city"
    assert specs[0].properties == {"city": {"type": "string"}}
    assert specs[0].required == ["city"]


def test_content_cases_turn_the_sdk_retries_off() -> None:
    assert sdk_retries(native=False) == {"max_retries": 0}
    assert sdk_retries(native=True) == {}  # the client's own default budget


def test_a_call_field_the_library_handed_over_as_no_string_is_reported_as_its_json_text() -> None:
    """openai-python keeps the wire's `"arguments": {"city": "Paris"}` as a dict, typed str:
    the library did not crash, so the shim must not either. The value is reported as its
    JSON text and C3 judges it (quirk D3 leaves object arguments open); a number for an id
    likewise, where T1 judges it."""
    assembled = Assembled(
        tool_calls=[AssembledCall(0, "get_weather", {"city": "Paris"})],
        finish_reason="tool_calls",
    )
    (end,) = [e for e in assembled.events() if isinstance(e, BlockEnd)]
    assert end.block == ToolCallBlock(id="0", name="get_weather", arguments='{"city": "Paris"}')


def test_a_shim_declares_its_library_s_policy_only_with_the_library_s_retries_on() -> None:
    off, on = RunOptions(), RunOptions(extra={NATIVE_RETRY: True})
    assert native_policy(off, openai_sdk()) is None
    assert native_policy(on, openai_sdk()) == openai_sdk()
    plain = hello("lib", "1", reasoning=True, retry_policy=native_policy(off, openai_sdk()))
    assert plain.capabilities.retry is False and plain.retry_policy is None
    assert "retry_policy" not in plain.to_json_line()  # the content column's hello, as before
    declared = hello("lib", "1", reasoning=True, retry_policy=native_policy(on, openai_sdk()))
    assert declared.capabilities.retry is True and declared.retry_policy == openai_sdk()
    assert parse_hello_line(declared.to_json_line()) == declared


def test_the_protocol_page_shows_the_openai_client_s_policy_as_the_shims_declare_it() -> None:
    page = (Path(__file__).parents[2] / "examples" / "README.md").read_text(encoding="utf-8")
    example = page.split("## A retry policy of its own")[1].split("```json")[1].split("```")[0]
    assert parse_hello_line(" ".join(example.split())).retry_policy == openai_sdk()
    assert openai_sdk(3).max_retries == 3
    assert NO_RETRIES.max_retries == 0


def test_the_js_shims_map_responses_error_codes_as_the_suite_does() -> None:
    """shims/js/lib/errors.js keeps its own copy of codes.RESPONSES_ERROR_CODES (JS cannot
    import it): the two must say the same."""
    source = (Path(__file__).parents[2] / "shims/js/lib/errors.js").read_text(encoding="utf-8")
    block = source.split("RESPONSES_ERROR_CODES = Object.freeze({", 1)[1].split("});", 1)[0]
    pairs = dict(
        (key.strip(), value.strip().strip("'"))
        for key, _, value in (
            line.rstrip(",").partition(":") for line in block.strip().splitlines()
        )
    )
    assert pairs == RESPONSES_ERROR_CODES
