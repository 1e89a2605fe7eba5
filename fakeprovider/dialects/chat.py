"""OpenAI Chat Completions: the endpoint and the error body (chunk steps: fakeprovider.scenario)."""

from __future__ import annotations

from pydantic import JsonValue

from ..statuses import reason_phrase

ENDPOINT = "chat/completions"


def error_object(status: int, message: str | None = None) -> JsonValue:
    """An error body in the shape OpenAI-compatible providers use."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {
        "error": {
            "message": message or f"fake provider: {status} {reason_phrase(status)}",
            "type": kind,
            "param": None,
            "code": None,
        }
    }
