"""What the two named-event wires (Anthropic Messages, OpenAI Responses) read alike: an
event is its data's ``type``, its data a JSON object of typed fields, and a body may send
events after the one that ends it."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from fakeprovider.dialects.named_events import EventStep
from fakeprovider.scenario import TERMINAL_STEPS, PauseStep, StreamResponse

from ...codes import ConformanceError
from .sse import SseEvent, payload_json


class MalformedEventError(ConformanceError):
    """An event whose JSON parses but whose shape is not that event's; its text names the
    field, for the wire feature ``<prefix>-malformed-<field>``."""


UNPARSED = object()
"""The data of an event that is no JSON at all."""


def parsed(data: str) -> Any:
    """An event's data as JSON, or :data:`UNPARSED`."""
    try:
        return payload_json(data)
    except (ValueError, RecursionError):
        return UNPARSED


def event_type(event: SseEvent, data: Any) -> str | None:
    """What an event is: its data's type; its name where the data has none."""
    if isinstance(data, dict) and isinstance(data.get("type"), str):
        return str(data["type"])
    return event.name


def sends_after(response: StreamResponse, terminal: Collection[str]) -> bool:
    """Whether the body sends anything after the first event step of a ``terminal`` type."""
    ended = False
    for step in response.steps:
        if ended and not isinstance(step, (PauseStep, *TERMINAL_STEPS)):
            return True
        ended = ended or (isinstance(step, EventStep) and step.event.get("type") in terminal)
    return False


def object_field(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedEventError(what)
    return value


def integer_field(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedEventError(key)
    return value


def fragment(data: dict[str, Any], key: str) -> str:
    """A text fragment: absent or null is none, anything but a string malformed."""
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedEventError(key)
    return value


def count(usage: dict[str, Any], key: str) -> int | None:
    """A token counter: absent or null is none, anything but an integer malformed."""
    value = usage.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedEventError("usage-count")
    return value


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""
