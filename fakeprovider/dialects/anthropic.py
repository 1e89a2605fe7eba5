"""Anthropic Messages streaming: named events, the endpoint, the error body.

A stream is a sequence of named SSE events (``event: content_block_delta`` then its
``data:``), the name equal to the ``type`` inside the data by default (reference
dialects.md §2.2). An event step sends its data object verbatim, so a field can be absent,
``null`` or ``""`` exactly as written, and its ``event:`` line can be the type, another
name (a mismatch), or left out (a data-only event, which the official SDKs drop).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, model_validator

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


class EventStep(BaseModel):
    """One named event: an ``event:`` line (unless left out), then the data object verbatim."""

    # A typo in a fixture must be an error, not a silently ignored key.
    model_config = ConfigDict(extra="forbid", frozen=True)

    event: dict[str, JsonValue] = Field(
        description='The data object, sent as written (key order, null and "" kept).'
    )
    name: str | None = Field(
        default=None,
        pattern=r"^[^\r\n]*$",
        description="The event: line's value; left out, the data's type. Another value "
        "sends an event whose name and type disagree.",
    )
    event_line: StrictBool = Field(
        default=True, description="False sends a data-only event: no event: line at all."
    )
    event_end: StrictBool = Field(default=True, description="End the event with a blank line.")

    @model_validator(mode="after")
    def _named(self) -> EventStep:
        if not self.event_line and self.name is not None:
            raise ValueError("'name' names the event: line that 'event_line: false' leaves out")
        if self.event_line and self.name is None and not isinstance(self.event.get("type"), str):
            raise ValueError(
                "the event has no string 'type' to name its event: line; give 'name', or "
                "'event_line: false' for a data-only event"
            )
        return self

    def event_name(self) -> str | None:
        """The ``event:`` line's value, or None for a data-only event."""
        if not self.event_line:
            return None
        if self.name is not None:
            return self.name
        name = self.event.get("type")
        assert isinstance(name, str)  # guaranteed by _named
        return name
