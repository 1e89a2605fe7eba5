"""One chat-completions chunk, read and shape-checked before any of it is applied.

Scalar leaves of the wrong type are tolerated the way the invariants require (a `null` or
non-string `content`, `id` or `name` is simply not there). Containers of the wrong type (a
choice that is not an object, `tool_calls` that is not a list, ...) and usage counts that are
not integers make the chunk malformed: there is no honest reading of them.
"""

import json
from dataclasses import dataclass
from typing import Any

from conformance.codes import ConformanceError
from conformance.events import Usage


class MalformedChunkError(ConformanceError, ValueError):
    """Valid JSON that is not a chat-completions chunk."""


@dataclass(frozen=True)
class ToolCallPart:
    key: str  # JSON of the wire tool_calls[].index, or of the entry's position when it has none
    call_id: str | None  # only a non-empty string counts as identity
    name: str | None
    arguments: str


@dataclass(frozen=True)
class ChoicePart:
    reasoning: str  # "" when absent, null, empty or not a string: it opens nothing
    content: str
    tool_calls: list[ToolCallPart]
    finish_reason: str | None


@dataclass(frozen=True)
class WireChunk:
    choices: list[ChoicePart]
    usage: Usage | None


def read_chunk(document: object) -> WireChunk:
    """The parts of a parsed payload the translator uses; raises MalformedChunkError."""
    if not isinstance(document, dict):
        raise MalformedChunkError("the payload is not a JSON object")
    choices = _list_or_empty(document.get("choices"), "choices")
    return WireChunk(
        [_read_choice(choice) for choice in choices], read_usage(document.get("usage"))
    )


def _read_choice(choice: object) -> ChoicePart:
    if not isinstance(choice, dict):
        raise MalformedChunkError("a choice is not an object")
    delta = _object_or_empty(choice.get("delta"), "delta")
    entries = _list_or_empty(delta.get("tool_calls"), "tool_calls")
    reason = choice.get("finish_reason")
    return ChoicePart(
        reasoning=_text_or_empty(delta.get("reasoning_content")),
        content=_text_or_empty(delta.get("content")),
        tool_calls=[_read_tool_call(entry, position) for position, entry in enumerate(entries)],
        # "" is treated as absent: some servers send it on every chunk (anchors F4).
        finish_reason=reason if isinstance(reason, str) and reason else None,
    )


def _read_tool_call(entry: object, position: int) -> ToolCallPart:
    if not isinstance(entry, dict):
        raise MalformedChunkError("a tool_calls entry is not an object")
    wire_index = entry.get("index")
    # An entry without `index` (anchors C1) takes its array position. Otherwise the raw JSON
    # value is the key, as in the harness: 0 and "0" are different calls.
    key = json.dumps(position if wire_index is None else wire_index, sort_keys=True)
    function = _object_or_empty(entry.get("function"), "function")
    arguments = function.get("arguments")
    return ToolCallPart(
        key=key,
        call_id=_identity(entry.get("id")),
        name=_identity(function.get("name")),
        # Raw fragments are concatenated, never parsed. A non-string (e.g. an object some
        # servers send, anchors D3) is not a fragment, so it contributes "" rather than a
        # re-serialisation the provider never sent.
        arguments=arguments if isinstance(arguments, str) else "",
    )


def read_usage(usage: object) -> Usage | None:
    """Disjoint usage: input excludes cached prompt tokens (invariant C4)."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise MalformedChunkError("usage is not an object")
    prompt = _required_count(usage, "prompt_tokens")
    completion = _required_count(usage, "completion_tokens")
    prompt_details = _object_or_empty(usage.get("prompt_tokens_details"), "prompt_tokens_details")
    completion_details = _object_or_empty(
        usage.get("completion_tokens_details"), "completion_tokens_details"
    )
    cached = _optional_count(prompt_details, "cached_tokens")
    if cached is None:
        cached = _optional_count(usage, "prompt_cache_hit_tokens")
    if cached is None:
        cached = 0  # reported as 0, not omitted, so every usage event states its cache reads
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=completion,
        cache_read_tokens=cached,
        reasoning_tokens=_optional_count(completion_details, "reasoning_tokens"),
    )


def _optional_count(container: dict[str, Any], key: str) -> int | None:
    if container.get(key) is None:
        return None
    return _required_count(container, key)


def _required_count(container: dict[str, Any], key: str) -> int:
    value = container.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedChunkError(f"usage {key} is not an integer")
    return value


def _list_or_empty(value: object, name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedChunkError(f"{name} is not a list")
    return value


def _object_or_empty(value: object, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedChunkError(f"{name} is not an object")
    return value


def _text_or_empty(value: object) -> str:
    return value if isinstance(value, str) else ""


def _identity(value: object) -> str | None:
    # "", null and non-strings are what gateways send on continuations (anchors A1-A6).
    return value if isinstance(value, str) and value else None
