"""The real-world stream quirks of anchors.md §3 as data, and the unambiguous ones as transforms.

Each quirk has the id of its anchors.md entry (``A5``), a short name, and a level
(INVARIANTS.md §Q): **MUST** — the meaning is unambiguous, so an adapter must produce the
outcome the oracle reads from the wire (for an encoding quirk: the canonical stream's);
**INFO** — the wire can be read more than one way, so the suite records what the adapter
did. Quirks §Q does not grade (K, most of B/D/J/L) have no level: the invariants of their
family judge them.

A fixture names its quirks with ``quirk-<ID>`` tags; an ambiguous one also carries
:data:`INFO_TAG`, which turns the scenario's outcome verdicts into ``info`` (see
:func:`recorded_only`). The transforms are pure functions ``Scenario → Scenario`` that
re-encode every stream attempt the way a quirky provider would *without* changing what it
means, so the generators can apply them to any intended response::

    from conformance.quirks import TRANSFORMS, with_quirks
    quirky = with_quirks(scenario, "A5", "I7")   # DashScope's "" ids, framed with CRLF
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fakeprovider.scenario import Scenario

QuirkLevel = Literal["MUST", "INFO"]
Transform = Callable[[Scenario], Scenario]

INFO_TAG = "level:info"
"""Scenario tag: the wire is ambiguous, so outcome verdicts are recorded as ``info``."""
QUIRK_TAG_PREFIX = "quirk-"


@dataclass(frozen=True)
class Quirk:
    id: str  # anchors.md §3 id, e.g. "A5"
    name: str  # the proposed scenario name there, e.g. "cont-id-empty-string"
    level: QuirkLevel | None  # None: not graded by Q; its family's invariants decide
    summary: str
    transform: Transform | None = field(default=None, compare=False)


def recorded_only(scenario: Scenario) -> bool:
    """True when the scenario is an ambiguous quirk: its outcome is recorded, not judged."""
    return INFO_TAG in scenario.tags


def quirk_ids(scenario: Scenario) -> tuple[str, ...]:
    """The quirk ids a scenario is tagged with (``quirk-A5`` → ``A5``), in tag order."""
    return tuple(
        tag.removeprefix(QUIRK_TAG_PREFIX) for tag in scenario.tags if tag.startswith("quirk-")
    )


def graded_quirks(scenario: Scenario, level: QuirkLevel) -> tuple[Quirk, ...]:
    """The catalogued quirks of ``scenario`` at ``level``."""
    found = (QUIRKS.get(quirk_id) for quirk_id in quirk_ids(scenario))
    return tuple(quirk for quirk in found if quirk is not None and quirk.level == level)


def with_quirks(scenario: Scenario, *quirk_ids: str) -> Scenario:
    """``scenario`` re-encoded by each quirk's transform in turn, tagged ``quirk-<ID>``.

    Raises KeyError for an id without a transform (see :data:`TRANSFORMS`).
    """
    for quirk_id in quirk_ids:
        scenario = TRANSFORMS[quirk_id](scenario)
        tag = QUIRK_TAG_PREFIX + quirk_id
        if tag not in scenario.tags:
            scenario = scenario.model_copy(update={"tags": (*scenario.tags, tag)})
    return scenario


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


def _comment_as_data(n: int) -> list[StepData]:
    return [{"raw": ": OPENROUTER PROCESSING", "event_end": True}] if n == 0 else []


def _ids_and_pings(n: int) -> list[StepData]:
    ping: list[StepData] = [{"comment": " ping", "event_end": True}] if n else []
    return [*ping, {"field": "id", "value": str(n + 1), "event_end": False}]


_AZURE_FILTER_PREAMBLE: Chunk = {
    "choices": [],
    "prompt_filter_results": [
        {
            "prompt_index": 0,
            "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}},
        }
    ],
}


def _catalogue(entries: Iterable[Quirk]) -> dict[str, Quirk]:
    return {quirk.id: quirk for quirk in entries}


QUIRKS: Mapping[str, Quirk] = _catalogue(
    [
        # A — identity fields on continuation deltas
        Quirk(
            "A1",
            "cont-id-null",
            "MUST",
            'continuations send "id": null (and name null)',
            _every_entry(later=_set(id=None, type="function", name=None)),
        ),
        Quirk(
            "A2",
            "cont-all-null",
            "MUST",
            "continuations send id, type and name as null",
            _every_entry(later=_all_null_continuation),
        ),
        Quirk(
            "A3",
            "cont-id-null-role-null",
            "MUST",
            "role: null on deltas, id: null on continuations",
            lambda s: _every_delta(_role_null)(_every_entry(later=_set(id=None))(s)),
        ),
        Quirk(
            "A4",
            "cont-nulls-everywhere",
            "MUST",
            "every absent optional delta field sent as null",
            _every_delta(_nulls_for_absent),
        ),
        Quirk(
            "A5",
            "cont-id-empty-string",
            "MUST",
            'continuations send "id": "" (DashScope)',
            _every_entry(later=_set(id="", type="function")),
        ),
        Quirk(
            "A6",
            "cont-name-empty-string",
            "MUST",
            'continuations send "name": ""',
            _every_entry(later=_set(name="")),
        ),
        Quirk(
            "A7",
            "cont-name-repeated",
            "MUST",
            "the full name is repeated on every delta",
            _every_entry(later=_repeat_name),
        ),
        Quirk(
            "A8",
            "cont-id-repeated-no-index",
            "INFO",
            "id/type/name repeated on every delta and no index (read as T7: open)",
        ),
        Quirk(
            "A9",
            "first-name-empty-then-real",
            "MUST",
            'the opening delta has name "", the name follows',
            _every_entry(first=_late("name", "")),
        ),
        Quirk(
            "A10",
            "first-name-null",
            "MUST",
            "the opening delta has name null, the name follows",
            _every_entry(first=_late("name", None)),
        ),
        Quirk(
            "A11",
            "function-null",
            "MUST",
            "a tool-call delta with function: null",
            _every_entry(first=_function_null_after),
        ),
        Quirk(
            "A12",
            "content-null-with-tools",
            "MUST",
            "content: null beside tool_calls",
            _every_delta(_content_null_with_tools),
        ),
        Quirk(
            "A13",
            "type-repeated",
            "MUST",
            '"type": "function" re-sent on every continuation',
            _every_entry(later=_set(type="function")),
        ),
        # B — missing or empty ids
        Quirk(
            "B1",
            "first-no-id",
            "MUST",
            "the opening delta has no id; it arrives later",
            _every_entry(first=_late("id", None, omit=True)),
        ),
        Quirk("B2", "id-missing-index-gt0", None, "parallel calls after the first never get an id"),
        Quirk("B3", "id-empty", None, 'a call whose only id is ""'),
        Quirk("B4", "cont-id-omitted", None, "the id only on the opening delta (canonical)"),
        Quirk("B5", "dup-ids", None, "two parallel calls share an id"),
        # C — index anomalies (all ambiguous)
        Quirk("C1", "index-omitted", "INFO", "tool-call entries without index"),
        Quirk("C2", "index-reused-0", "INFO", "every parallel call uses index 0"),
        Quirk(
            "C3", "index-offset-block", "INFO", "the first call at index 1 (a content-block index)"
        ),
        Quirk("C4", "index-negative", "INFO", "the first call at index -1"),
        Quirk("C5", "index-drift", "INFO", "continuations carry a drifting index without identity"),
        Quirk("C6", "same-call-multi-index", "INFO", "the same call (same id) at several indexes"),
        Quirk("C7", "dup-index-in-chunk", "INFO", "two entries with the same index in one chunk"),
        Quirk("C8", "index-zero-falsy", None, "canonical index 0 (breaks `not index` clients)"),
        # D — argument payload shapes
        Quirk(
            "D1", "args-empty-string", "MUST", 'a no-argument call: arguments "" and nothing more'
        ),
        Quirk(
            "D2",
            "args-null-first",
            "MUST",
            "the opening delta has arguments: null",
            _every_entry(first=_arguments_null_first),
        ),
        Quirk("D3", "args-object", "INFO", "arguments streamed as a JSON object"),
        Quirk(
            "D4",
            "args-single-lump",
            "MUST",
            "the whole argument string in one delta",
            _steps(_arguments_in_one_lump),
        ),
        Quirk("D5", "args-dup-final-flush", "INFO", "a final flush re-sends the full arguments"),
        Quirk("D6", "args-char-dup", None, "characters duplicated at fragment boundaries"),
        Quirk("D7", "args-lost-multitoken", None, "arguments lost when a delta spans tokens"),
        Quirk("D8", "markup-leak", "INFO", "a tool call leaks as text markup"),
        Quirk(
            "D9",
            "args-empty-delta",
            None,
            'an argument delta of "" opens the arguments',
            _every_entry(first=_empty_fragment_after),
        ),
        # E — parallel / interleaved calls
        Quirk(
            "E1",
            "interleaved-fragments",
            "MUST",
            "parallel calls' fragments interleave",
            _steps(_interleaved),
        ),
        Quirk(
            "E2",
            "parallel-each-own-chunk-no-index",
            "INFO",
            "each parallel call in its own chunk, unique id, no index (Gemini 3)",
        ),
        Quirk(
            "E3",
            "parallel-first-args-empty",
            None,
            "all but the last parallel call get empty arguments",
        ),
        Quirk(
            "E4",
            "parser-chunk-variance",
            None,
            "the whole message in one delta",
            _steps(_texts_coalesced),
        ),
        # F — finish_reason anomalies
        Quirk("F1", "stop-with-tools", "MUST", "tool calls, then finish_reason stop"),
        Quirk("F2", "double-finish", "MUST", "tool_calls finish, then an extra stop finish"),
        Quirk(
            "F3",
            "finish-separate-chunk",
            "MUST",
            "the finish in a content-less chunk of its own",
            _steps(_finish_split),
        ),
        Quirk(
            "F4",
            "finish-empty-string",
            "MUST",
            'finish_reason "" on every non-final chunk',
            _steps(_finish_empty_string),
        ),
        Quirk("F5", "no-finish-then-close", "MUST", "tool-call chunks, then the stream closes"),
        Quirk("F6", "tool-calls-finish-empty-list", "MUST", "finish tool_calls with no call"),
        Quirk("F7", "filter-as-stop", "MUST", "content filtered mid-stream, finish stop"),
        # G — empty completions
        Quirk("G1", "empty-stop", "MUST", "role delta, empty delta with stop, [DONE]"),
        Quirk("G2", "empty-stop-after-tool", "MUST", "finish stop with nothing at all, no usage"),
        Quirk("G3", "billed-empty-stop", "MUST", "empty stop whose usage bills output tokens"),
        Quirk("G4", "unreported-empty-stop", "MUST", "empty stop and no usage"),
        Quirk("G5", "empty-content-anthropic", "MUST", "stop with an empty content array"),
        # H — choices / usage chunk shapes
        Quirk(
            "H1",
            "usage-only-empty-choices",
            "MUST",
            "usage in a trailing choices: [] chunk",
            _steps(_usage_trailing),
        ),
        Quirk(
            "H2",
            "usage-choices-missing",
            "MUST",
            "the usage chunk has no choices key",
            _steps(_usage_without_choices),
        ),
        Quirk(
            "H3",
            "empty-choices-preamble",
            "MUST",
            "a first chunk with choices: [] (Azure filter)",
            _insert_chunk(_AZURE_FILTER_PREAMBLE, first=True),
        ),
        Quirk(
            "H4",
            "empty-choices-ping",
            "MUST",
            "a choices: [] chunk mid-stream",
            _insert_chunk({"choices": []}, first=False),
        ),
        Quirk(
            "H5",
            "usage-every-chunk",
            "MUST",
            "cumulative usage on every chunk",
            _steps(_usage_on_every_chunk),
        ),
        Quirk(
            "H6",
            "chunk-id-varies",
            "MUST",
            "a different response id on every chunk",
            _steps(_chunk_ids_vary),
        ),
        # I — SSE framing and encoding
        Quirk(
            "I1",
            "comment-keepalive",
            "MUST",
            "comment lines before and between events",
            _steps(_between_events(_keepalive)),
        ),
        Quirk(
            "I2",
            "comment-rewrapped-as-data",
            "MUST",
            "data: : OPENROUTER PROCESSING",
            _steps(_between_events(_comment_as_data)),
        ),
        Quirk(
            "I3",
            "comment-blank-after-id",
            "MUST",
            "id: lines, then : ping comments",
            _steps(_between_events(_ids_and_pings)),
        ),
        Quirk(
            "I4", "data-no-space", "MUST", "data:{…} without a space", _framing(data_space=False)
        ),
        Quirk(
            "I5",
            "event-split-tcp",
            "MUST",
            "events split across network writes",
            _framing(split={"mode": "fixed", "size": 7}),
        ),
        Quirk(
            "I6",
            "utf8-split",
            "MUST",
            "one byte per write, inside multi-byte characters",
            _framing(split={"mode": "byte"}),
        ),
        Quirk("I7", "crlf-bare-cr", "MUST", "CRLF line endings", _framing(line_ending="crlf")),
        Quirk("I8", "no-done", None, "the stream closes after content without [DONE]"),
        Quirk("I9", "non-json-data", None, "a plain-text data line, stream left open"),
        # J — mid-stream errors, disconnects and stalls (judged by S7, H3, H4)
        Quirk("J1", "error-object-in-stream", None, 'HTTP 200, then data: {"error": …}'),
        Quirk("J2", "error-in-chunk-envelope", None, "a chunk with choices: [] and an error"),
        Quirk("J3", "typed-error-event", None, "event: error with an error payload"),
        Quirk("J4", "done-after-failure", None, "only data: [DONE] after an upstream failure"),
        Quirk("J5", "disconnect-incomplete-chunked", None, "TCP close mid-body"),
        Quirk("J6", "silent-stall", None, "chunks stop, the connection stays open"),
        # K — retry-after-partial-stream hazards (judged by R7, R8)
        Quirk("K1", "retry-replays-prefix", None, "a retry after a partial stream replays it"),
        Quirk("K2", "retry-phantom-tool", None, "a retry keeps the failed attempt's tool call"),
        Quirk("K3", "retry-dup-tokens", None, "a stream retry re-publishes emitted tokens"),
        Quirk("K5", "length-retry-dup", None, "a retry after length duplicates the answer"),
        # L — reasoning and other vendor fields
        Quirk("L1", "reasoning-echo", None, "reasoning_content beside tool calls"),
        Quirk("L2", "stray-think-tag", None, "a stray </think> at the start of content"),
        Quirk("L3", "vendor-field", None, "a non-standard field beside empty deltas"),
        Quirk(
            "L4",
            "empty-first-chunk",
            "MUST",
            'an empty first chunk (content "", tool_calls [])',
            _insert_chunk(
                _delta_chunk({"role": "assistant", "content": "", "tool_calls": []}), first=True
            ),
        ),
    ]
)

TRANSFORMS: Mapping[str, Transform] = {
    quirk.id: quirk.transform for quirk in QUIRKS.values() if quirk.transform is not None
}
"""Quirk id → meaning-preserving transform: the oracle's outcome is unchanged by it."""
