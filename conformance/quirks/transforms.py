"""The re-encoding machinery: rewrite every stream attempt's chunks as JSON, meaning kept."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from fakeprovider.scenario import Scenario

Transform = Callable[[Scenario], Scenario]


# --- the machinery: rewrite every stream attempt's chunks as JSON -----------------------

Chunk = dict[str, Any]
StepData = dict[str, Any]
StreamData = dict[str, Any]


def _streams(rewrite: Callable[[StreamData], None]) -> Transform:
    """A transform that rewrites each stream attempt's JSON form in place."""

    def transform(scenario: Scenario) -> Scenario:
        data = scenario.model_dump(mode="json")
        for attempt in data["attempts"]:
            if "stream" in attempt:
                rewrite(attempt["stream"])
        return Scenario.model_validate(data)

    return transform


def _steps(rewrite: Callable[[list[StepData]], list[StepData]]) -> Transform:
    def on_stream(stream: StreamData) -> None:
        stream["steps"] = rewrite(stream["steps"])

    return _streams(on_stream)


def _framing(**options: Any) -> Transform:
    def on_stream(stream: StreamData) -> None:
        stream["framing"].update(options)

    return _streams(on_stream)


def _chunk_step(chunk: Chunk) -> StepData:
    return {"chunk": chunk, "envelope": True, "event_end": True}


def _choices(chunk: Chunk) -> list[dict[str, Any]]:
    choices = chunk.get("choices")
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def _deltas(chunk: Chunk) -> Iterator[dict[str, Any]]:
    for choice in _choices(chunk):
        delta = choice.get("delta")
        if isinstance(delta, dict):
            yield delta


def _chunks(steps: list[StepData]) -> Iterator[Chunk]:
    for step in steps:
        if "chunk" in step:
            yield step["chunk"]


def _every_delta(rewrite: Callable[[dict[str, Any]], None]) -> Transform:
    def on_steps(steps: list[StepData]) -> list[StepData]:
        for chunk in _chunks(steps):
            for delta in _deltas(chunk):
                rewrite(delta)
        return steps

    return _steps(on_steps)


@dataclass
class _Call:
    """A tool call as the wire identified it so far (by choice and wire index)."""

    id: Any = None
    name: Any = None
    entries: int = 0


def _tool_entries(chunk: Chunk) -> Iterator[tuple[tuple[str, str], dict[str, Any]]]:
    """(call key, entry) for every tool-call entry of a chunk that has an index."""
    for choice in _choices(chunk):
        delta = choice.get("delta")
        entries = delta.get("tool_calls") if isinstance(delta, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and "index" in entry:
                key = (json.dumps(choice.get("index")), json.dumps(entry["index"]))
                yield key, entry


def _function(entry: dict[str, Any]) -> dict[str, Any]:
    function = entry.get("function")
    if not isinstance(function, dict):
        function = entry["function"] = {}
    return function


EntryRewrite = Callable[[dict[str, Any], _Call], list[Chunk]]


def _every_entry(
    *, first: EntryRewrite | None = None, later: EntryRewrite | None = None
) -> Transform:
    """Rewrite each call's first entry and/or its continuation entries.

    A rewrite may return extra chunks, sent right after the chunk that held the entry
    (e.g. the name a late-naming provider sends one delta after the call opens).
    """

    def on_steps(steps: list[StepData]) -> list[StepData]:
        calls: dict[tuple[str, str], _Call] = {}
        out: list[StepData] = []
        for step in steps:
            out.append(step)
            if "chunk" not in step:
                continue
            extra: list[Chunk] = []
            for key, entry in _tool_entries(step["chunk"]):
                call = calls.setdefault(key, _Call())
                function = entry.get("function")
                if call.entries == 0:
                    call.id = entry.get("id")
                    call.name = function.get("name") if isinstance(function, dict) else None
                rewrite = first if call.entries == 0 else later
                call.entries += 1
                if rewrite is not None:
                    extra += rewrite(entry, call)
            out += [_chunk_step(chunk) for chunk in extra]
        return out

    return _steps(on_steps)


def _set(**fields: Any) -> EntryRewrite:
    """Set entry fields (``name``/``arguments`` go into ``function``) on an entry."""

    def rewrite(entry: dict[str, Any], _: _Call) -> list[Chunk]:
        for key, value in fields.items():
            if key in ("name", "arguments"):
                _function(entry)[key] = value
            else:
                entry[key] = value
        return []

    return rewrite


def _late(key: Literal["id", "name"], placeholder: Any, *, omit: bool = False) -> EntryRewrite:
    """The opening entry carries ``placeholder`` (or nothing) for ``key``; the real value
    follows in a delta of its own."""

    def rewrite(entry: dict[str, Any], _: _Call) -> list[Chunk]:
        holder = _function(entry) if key == "name" else entry
        value = holder.get(key)
        if not isinstance(value, str) or not value:
            return []
        if omit:
            del holder[key]
        else:
            holder[key] = placeholder
        late: dict[str, Any] = {"index": entry["index"]}
        if key == "id":
            late["id"] = value
        else:
            late["function"] = {"name": value}
        return [_delta_chunk({"tool_calls": [late]})]

    return rewrite


def _delta_chunk(delta: dict[str, Any], *, finish_reason: Any = None) -> Chunk:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


def _repeat_name(entry: dict[str, Any], call: _Call) -> list[Chunk]:
    if isinstance(call.name, str) and call.name:
        _function(entry)["name"] = call.name
    return []


def _function_null_after(entry: dict[str, Any], _: _Call) -> list[Chunk]:
    return [_delta_chunk({"tool_calls": [{"index": entry["index"], "function": None}]})]


def _empty_fragment_after(entry: dict[str, Any], _: _Call) -> list[Chunk]:
    return [
        _delta_chunk({"tool_calls": [{"index": entry["index"], "function": {"arguments": ""}}]})
    ]


def _arguments_null_first(entry: dict[str, Any], _: _Call) -> list[Chunk]:
    function = _function(entry)
    fragment = function.get("arguments")
    function["arguments"] = None
    if not isinstance(fragment, str) or not fragment:
        return []
    return [
        _delta_chunk(
            {"tool_calls": [{"index": entry["index"], "function": {"arguments": fragment}}]}
        )
    ]


def _nulls_for_absent(delta: dict[str, Any]) -> None:
    for key in ("role", "content", "reasoning_content"):
        delta.setdefault(key, None)
    for entry in delta.get("tool_calls") or ():
        if isinstance(entry, dict):
            entry.setdefault("id", None)
            entry.setdefault("type", None)
            function = _function(entry)
            function.setdefault("name", None)
            function.setdefault("arguments", None)


def _role_null(delta: dict[str, Any]) -> None:
    delta.setdefault("role", None)


def _all_null_continuation(entry: dict[str, Any], call: _Call) -> list[Chunk]:
    entry.update({"id": None, "type": None})
    _function(entry)["name"] = None
    return []


def _content_null_with_tools(delta: dict[str, Any]) -> None:
    if delta.get("tool_calls"):
        delta.setdefault("content", None)


def _arguments_in_one_lump(steps: list[StepData]) -> list[StepData]:
    """D4: every call's arguments arrive whole, in the last entry of that call."""
    entries = [(key, entry) for chunk in _chunks(steps) for key, entry in _tool_entries(chunk)]
    whole: dict[tuple[str, str], str] = {}
    last: dict[tuple[str, str], int] = {}
    for position, (key, entry) in enumerate(entries):
        fragment = _function(entry).get("arguments")
        if isinstance(fragment, str):
            whole[key] = whole.get(key, "") + fragment
        last[key] = position
    for position, (key, entry) in enumerate(entries):
        function = _function(entry)
        if last[key] == position and whole.get(key):
            function["arguments"] = whole[key]
        elif isinstance(function.get("arguments"), str):
            function["arguments"] = ""
    return steps


def _interleaved(steps: list[StepData]) -> list[StepData]:
    """E1: all parallel calls open first, then their fragments arrive round-robin.

    Applies where the tool-call part of the stream is a run of chunks that each carry one
    entry and nothing else; any other stream is left as it is.
    """
    region = [i for i, step in enumerate(steps) if _lone_entry(step) is not None]
    if not region or region != list(range(region[0], region[-1] + 1)):
        return steps
    openings: list[StepData] = []
    queues: dict[str, list[StepData]] = {}
    for i in region:
        entry = _lone_entry(steps[i])
        assert entry is not None
        key = json.dumps(entry.get("index"))
        if key not in queues:
            queues[key] = []
            openings.append(steps[i])
        else:
            queues[key].append(steps[i])
    if len(queues) < 2:
        return steps
    rotated: list[StepData] = []
    while any(queues.values()):
        rotated += [queue.pop(0) for queue in queues.values() if queue]
    return [*steps[: region[0]], *openings, *rotated, *steps[region[-1] + 1 :]]


def _lone_entry(step: StepData) -> dict[str, Any] | None:
    """The tool-call entry of a chunk whose only content is that one entry."""
    choices = _choices(step["chunk"]) if "chunk" in step else []
    if len(choices) != 1 or choices[0].get("finish_reason") is not None:
        return None
    delta = choices[0].get("delta")
    if not isinstance(delta, dict) or not set(delta) <= {"tool_calls", "role", "content"}:
        return None
    if delta.get("content") not in (None, ""):
        return None
    entries = delta.get("tool_calls")
    if not isinstance(entries, list) or len(entries) != 1 or not isinstance(entries[0], dict):
        return None
    return entries[0] if "index" in entries[0] else None


def _texts_coalesced(steps: list[StepData]) -> list[StepData]:
    """E4: a run of content-only deltas arrives as one delta."""
    out: list[StepData] = []
    for step in steps:
        previous = out[-1] if out else None
        if previous is not None and _content_only(previous) and _content_only(step):
            merged = copy.deepcopy(previous)
            delta = merged["chunk"]["choices"][0]["delta"]
            delta["content"] += step["chunk"]["choices"][0]["delta"]["content"]
            out[-1] = merged
        else:
            out.append(step)
    return out


def _content_only(step: StepData) -> bool:
    if "chunk" not in step or set(step["chunk"]) - {"choices", "id", "object", "created", "model"}:
        return False
    choices = _choices(step["chunk"])
    if len(choices) != 1 or choices[0].get("finish_reason") is not None:
        return False
    delta = choices[0].get("delta")
    return (
        isinstance(delta, dict)
        and set(delta) == {"content"}
        and isinstance(delta["content"], str)
        and bool(delta["content"])
    )


def _finish_split(steps: list[StepData]) -> list[StepData]:
    """F3: a finish that shares a chunk with content moves to a content-less chunk of its own."""
    out: list[StepData] = []
    for step in steps:
        out.append(step)
        choices = _choices(step["chunk"]) if "chunk" in step else []
        if len(choices) != 1:
            continue
        choice = choices[0]
        delta = choice.get("delta")
        reason = choice.get("finish_reason")
        if (
            isinstance(reason, str)
            and reason
            and isinstance(delta, dict)
            and any(value not in (None, "") for key, value in delta.items() if key != "role")
        ):
            choice["finish_reason"] = None
            out.append(_chunk_step(_delta_chunk({}, finish_reason=reason)))
    return out


def _finish_empty_string(steps: list[StepData]) -> list[StepData]:
    for chunk in _chunks(steps):
        for choice in _choices(chunk):
            if choice.get("finish_reason") is None:
                choice["finish_reason"] = ""
    return steps


def _usage_trailing(steps: list[StepData]) -> list[StepData]:
    """H1: usage carried by a chunk with choices moves to a trailing ``choices: []`` chunk."""
    moved: Any = None
    out: list[StepData] = []
    for step in steps:
        chunk = step.get("chunk")
        if isinstance(chunk, dict) and _choices(chunk) and chunk.get("usage") is not None:
            moved = chunk.pop("usage")
        if moved is not None and ("done" in step or _terminal(step)):
            out.append(_chunk_step({"choices": [], "usage": moved}))
            moved = None
        out.append(step)
    if moved is not None:
        out.append(_chunk_step({"choices": [], "usage": moved}))
    return out


def _terminal(step: StepData) -> bool:
    return any(key in step for key in ("stall", "reset", "end", "disconnect"))


def _usage_without_choices(steps: list[StepData]) -> list[StepData]:
    """H2: the usage-only chunk has no ``choices`` key at all."""
    for chunk in _chunks(steps):
        if chunk.get("choices") == [] and chunk.get("usage") is not None:
            del chunk["choices"]
    return steps


def _insert_chunk(chunk: Chunk, *, first: bool) -> Transform:
    """Send ``chunk`` before the stream's first chunk, or right after it."""

    def on_steps(steps: list[StepData]) -> list[StepData]:
        position = next((i for i, step in enumerate(steps) if "chunk" in step), None)
        if position is None:
            return steps
        at = position if first else position + 1
        return [*steps[:at], _chunk_step(copy.deepcopy(chunk)), *steps[at:]]

    return _steps(on_steps)


def _usage_on_every_chunk(steps: list[StepData]) -> list[StepData]:
    """H5: cumulative usage on every chunk; the last one is the billed total."""
    final = next(
        (c["usage"] for c in reversed(list(_chunks(steps))) if isinstance(c.get("usage"), dict)),
        None,
    )
    if final is None or not isinstance(final.get("completion_tokens"), int):
        return steps
    carriers = [c for c in _chunks(steps) if _choices(c) and c.get("usage") is None]
    for n, chunk in enumerate(carriers, 1):
        running = dict(final)
        running["completion_tokens"] = final["completion_tokens"] * n // (len(carriers) + 1)
        if isinstance(final.get("prompt_tokens"), int):
            running["total_tokens"] = final["prompt_tokens"] + running["completion_tokens"]
        chunk["usage"] = running
    return steps


def _chunk_ids_vary(steps: list[StepData]) -> list[StepData]:
    """H6: every chunk carries its own response id, first as OpenAI puts it."""
    for n, step in enumerate(s for s in steps if "chunk" in s):
        rest = {key: value for key, value in step["chunk"].items() if key != "id"}
        step["chunk"] = {"id": f"chatcmpl-{n:04x}", **rest}
    return steps


def _between_events(
    make: Callable[[int], list[StepData]],
) -> Callable[[list[StepData]], list[StepData]]:
    """Insert ``make(n)`` before the n-th chunk or [DONE] event."""

    def on_steps(steps: list[StepData]) -> list[StepData]:
        out: list[StepData] = []
        n = 0
        for step in steps:
            if "chunk" in step or "done" in step:
                out += make(n)
                n += 1
            out.append(step)
        return out

    return on_steps


def _keepalive(n: int) -> list[StepData]:
    return [{"comment": " keep-alive" if n % 2 else " OPENROUTER PROCESSING", "event_end": True}]


def _ids_and_pings(n: int) -> list[StepData]:
    ping: list[StepData] = [{"comment": " ping", "event_end": True}] if n else []
    return [*ping, {"field": "id", "value": str(n + 1), "event_end": False}]
