"""The parts every third-party shim shares; they import no third-party library."""

from __future__ import annotations

import json

import pytest

from conformance.adapters.thirdparty import SHIMS
from conformance.adapters.thirdparty.common import (
    Assembled,
    AssembledCall,
    finish_event,
    usage_event,
)
from conformance.adapters.thirdparty.errors import error_code
from conformance.events import BlockEnd, Finish, ToolCallBlock, Usage


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
        assert shim.target.startswith("conformance.adapters.thirdparty.")
        assert name.startswith(shim.extra.split("-")[0])


def test_a_library_refusing_an_empty_stream_refuses_it_as_e1_does() -> None:
    assert error_code(ValueError("No generation chunks were returned")) == "EMPTY_RESPONSE"

    class ModelConnectionError(Exception):
        pass

    class ModelTimeoutError(ModelConnectionError):
        pass

    assert error_code(ModelTimeoutError("read timed out")) == "TIMEOUT"
