"""OpenAI Responses streaming: typed named events, numbered; the endpoint, the error body.

A stream is a sequence of named SSE events (``event: response.output_text.delta`` then its
``data:``), scripted as event steps (:mod:`.named_events`; reference dialects.md §3.1, §3.2).
Every event carries a ``sequence_number``, the resume cursor: a step whose data has none
gets its position among the attempt's events, written after ``type`` as the API writes it,
unless the step says ``numbered: false``. There is no ``[DONE]``: the stream ends after a
terminal event. HTTP errors have the chat-completions body.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import JsonValue

from . import chat
from .named_events import EventStep

ENDPOINT = "responses"
SEQUENCE_FIELD = "sequence_number"

TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
"""The events that end a response (reference dialects.md §3.2); nothing follows them."""

_MESSAGE, _REASONING = frozenset({"message"}), frozenset({"reasoning"})
ITEM_EVENT_TYPES: dict[str, frozenset[str]] = {
    "response.content_part.added": _MESSAGE,
    "response.content_part.done": _MESSAGE,
    "response.output_text.delta": _MESSAGE,
    "response.output_text.done": _MESSAGE,
    "response.output_text.annotation.added": _MESSAGE,
    "response.refusal.delta": _MESSAGE,
    "response.refusal.done": _MESSAGE,
    "response.function_call_arguments.delta": frozenset({"function_call"}),
    "response.function_call_arguments.done": frozenset({"function_call"}),
    "response.reasoning_summary_part.added": _REASONING,
    "response.reasoning_summary_part.done": _REASONING,
    "response.reasoning_summary_text.delta": _REASONING,
    "response.reasoning_summary_text.done": _REASONING,
    "response.reasoning_text.delta": _REASONING,
    "response.reasoning_text.done": _REASONING,
    "response.custom_tool_call_input.delta": frozenset({"custom_tool_call"}),
    "response.custom_tool_call_input.done": frozenset({"custom_tool_call"}),
    "response.mcp_call_arguments.delta": frozenset({"mcp_call"}),
    "response.mcp_call_arguments.done": frozenset({"mcp_call"}),
}
"""The output item types each item-scoped event type of the wire belongs to (the SDK's
event union, reference dialects.md §3.2); an event or item type not named here is a newer
one. ``response.output_item.done`` closes an item of any type."""


def error_object(status: int, message: str | None = None) -> JsonValue:
    """The HTTP error body: the chat-completions shape (reference dialects.md §3.6)."""
    return chat.error_object(status, message)


StepT = TypeVar("StepT")


def numbered_events(steps: Sequence[StepT]) -> tuple[StepT, ...]:
    """``steps`` with each event step's ``sequence_number`` filled in where its data has
    none: the event's position among the attempt's event steps (0, 1, 2…), whatever
    numbers other steps set themselves."""
    numbered: list[StepT] = []
    position = 0
    for step in steps:
        if isinstance(step, EventStep):
            if step.numbered and SEQUENCE_FIELD not in step.event:
                numbered.append(step.model_copy(update={"event": _with_number(step, position)}))
            else:
                numbered.append(step)
            position += 1
        else:
            numbered.append(step)
    return tuple(numbered)


def _with_number(step: EventStep, number: int) -> dict[str, JsonValue]:
    data: dict[str, JsonValue] = {}
    for key, value in step.event.items():
        data[key] = value
        if key == "type":
            data[SEQUENCE_FIELD] = number
    if SEQUENCE_FIELD not in data:  # no type to follow: first
        data = {SEQUENCE_FIELD: number, **data}
    return data
