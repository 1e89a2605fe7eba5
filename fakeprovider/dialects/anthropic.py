"""Anthropic Messages streaming: named events, the endpoint, the error body.

A stream is a sequence of named SSE events (``event: content_block_delta`` then its
``data:``), scripted as event steps (:mod:`.named_events`; reference dialects.md §2.2).
"""

from __future__ import annotations

from pydantic import JsonValue

ENDPOINT = "messages"

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""The ``error.type`` Anthropic sends with each HTTP status (its errors documentation);
any other status below 500 is an ``invalid_request_error``, from 500 an ``api_error``."""


DELTA_BLOCK_TYPES: dict[str, frozenset[str]] = {
    "text_delta": frozenset({"text"}),
    "citations_delta": frozenset({"text"}),
    "input_json_delta": frozenset({"tool_use", "server_tool_use"}),
    "thinking_delta": frozenset({"thinking"}),
    "signature_delta": frozenset({"thinking"}),
}
"""The block types each delta type of the wire belongs to (the SDK types, reference
dialects.md §2.2, §2.8); a delta or block type not named here is a newer one."""


def error_type(status: int) -> str:
    return ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")


def error_object(status: int, message: str | None = None) -> JsonValue:
    """``{"type": "error", "error": {"type": …, "message": …}}``, Anthropic's error body
    (HTTP and the mid-stream ``error`` event alike)."""
    return {
        "type": "error",
        "error": {
            "type": error_type(status),
            "message": message or f"fake provider: {status} {error_type(status)}",
        },
    }
