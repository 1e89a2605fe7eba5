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
