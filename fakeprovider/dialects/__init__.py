"""The wires a scenario can speak: each dialect's endpoint, error body and event vocabulary.

A dialect is another wire for the same meaning (DIALECTS.md). What differs per wire lives in
one module each (``chat``, ``anthropic``, ``responses``); the framing, byte splits, pauses
and endings of a stream attempt are the same machinery for all of them (fakeprovider.wire).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import JsonValue

from . import anthropic, chat, responses

DialectId = Literal["chat-completions", "anthropic-messages", "openai-responses"]
DIALECT_IDS: tuple[DialectId, ...] = get_args(DialectId)
DEFAULT_DIALECT: DialectId = "chat-completions"


@dataclass(frozen=True)
class Dialect:
    """What the fake provider needs to know of a wire beyond its stream steps."""

    id: DialectId
    endpoint: str
    """The path after the base URL's ``/v1``: served at ``/{id}/v1/<endpoint>``,
    ``/{id}/<endpoint>`` and, for header or model routing, ``/v1/<endpoint>``."""
    error_object: Callable[[int, str | None], JsonValue]
    """The error body a provider of this dialect sends for a status (and message)."""
    base_suffix: str
    """What the dialect's SDKs expect a base URL to end with: OpenAI's append
    ``/chat/completions`` or ``/responses`` to a base with ``/v1``, Anthropic's
    ``/v1/messages`` to one without."""
    named_events: bool = False
    """Its stream is named events scripted as event steps, which a recording keeps."""
    numbered_events: bool = False
    """Each event's data carries a ``sequence_number``, filled in where a step sets none."""


DIALECTS: dict[DialectId, Dialect] = {
    "chat-completions": Dialect("chat-completions", chat.ENDPOINT, chat.error_object, "/v1"),
    "anthropic-messages": Dialect(
        "anthropic-messages", anthropic.ENDPOINT, anthropic.error_object, "", named_events=True
    ),
    "openai-responses": Dialect(
        "openai-responses",
        responses.ENDPOINT,
        responses.error_object,
        "/v1",
        named_events=True,
        numbered_events=True,
    ),
}


def dialect_of_path(path: str) -> DialectId:
    """The dialect of a request to ``path`` at any upstream (a real provider, a gateway with
    a path prefix of its own): the one whose endpoint the path ends with, chat by default.
    ``path`` has no query string."""
    for dialect in DIALECTS.values():
        if path.rstrip("/").endswith("/" + dialect.endpoint):
            return dialect.id
    return DEFAULT_DIALECT
