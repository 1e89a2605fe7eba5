"""Anthropic Messages wires built event by event, and the reference translator's reading of
them bytewise: shared by the translator's tests and its mutants'."""

import json
from collections.abc import Callable
from typing import Any

from conformance.adapters.reference import AnthropicTranslator, AttemptReader, Failure
from conformance.events import Event


def event(data: dict[str, Any] | str, name: str | None = "") -> bytes:
    """One SSE event: `name` "" means the data's type, None no event: line at all."""
    payload = data if isinstance(data, str) else json.dumps(data)
    if name == "" and isinstance(data, dict):
        name = data["type"]
    line = b"" if name is None else f"event: {name}\n".encode()
    return line + f"data: {payload}\n\n".encode()


def start(input_tokens: int = 10, output_tokens: int = 1, **usage: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [],
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **usage},
        },
    }


def block(index: int, content: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content}


def text_block(index: int) -> dict[str, Any]:
    return block(index, {"type": "text", "text": ""})


def tool_block(
    index: int, call_id: str = "toolu_A", name: str = "get_weather", **more: Any
) -> dict[str, Any]:
    return block(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}, **more})


def delta(index: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def text(index: int, value: str) -> dict[str, Any]:
    return delta(index, "text_delta", text=value)


def args(index: int, value: str) -> dict[str, Any]:
    return delta(index, "input_json_delta", partial_json=value)


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def ends(reason: str | None = "end_turn", output_tokens: int = 5, **usage: int) -> list[Any]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens, **usage},
        },
        {"type": "message_stop"},
    ]


def translate(
    *events: dict[str, Any] | bytes,
    failure: Failure | None = None,
    translator: Callable[[], AnthropicTranslator] = AnthropicTranslator,
) -> list[Event]:
    """The events of a body made of `events` (dicts are named by their type), read bytewise."""
    body = b"".join(item if isinstance(item, bytes) else event(item) for item in events)
    reader = AttemptReader(translator=translator)
    out: list[Event] = []
    for position in range(len(body)):
        out += reader.receive_data(body[position : position + 1])
        if reader.finished:
            break
    return out + reader.end(failure)


def hello_block(index: int) -> list[Any]:
    """A text block saying "Hello" at wire `index`."""
    return [text_block(index), text(index, "Hel"), text(index, "lo"), stop(index)]


def hello(*tail: Any) -> list[Any]:
    return [start(), *hello_block(0), *tail]
