"""Reading a whole OpenAI Responses body (reference dialects.md §3, DIALECTS.md "Decisions"):
typed events routed by ``output_index``, into the canonical expected attempt.

The streamed deltas are the source of truth: a ``.done`` payload or the terminal snapshot
only fills what no delta sent, and one that disagrees is recorded as a wire feature. Each
decision is in docs/decisions.md ("Reading the OpenAI Responses wire").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from fakeprovider.dialects.responses import SEQUENCE_FIELD, TERMINAL_EVENTS
from fakeprovider.scenario import StreamResponse

from ...codes import (
    CONTENT_FILTER,
    MALFORMED_RESPONSE,
    REFUSAL,
    RESPONSES_ERROR_CODES,
    SERVER,
    STREAM_CLOSED,
    finish_reason_code,
)
from ...events import Block, ReasoningBlock, ServerToolBlock, TextBlock, ToolCallBlock, Usage
from ...verdicts import AltReading
from ..http_errors import classify_status, error_object_detail
from ..outcome import ExpectedAttempt
from .canonical import Ending, ended_attempt, failed_attempt
from .framing import framing_features
from .named import (
    UNPARSED,
    MalformedEventError,
    count,
    event_type,
    fragment,
    integer_field,
    object_field,
    parsed,
    sends_after,
    text,
)
from .sse import SseEvent

# RS-C5: the finish of `response.incomplete` by its `incomplete_details.reason` (None: no
# reason given). Another reason is an error with it upper-cased.
INCOMPLETE_REASONS: dict[str | None, tuple[str, str | None]] = {
    None: ("max-tokens", None),
    "max_output_tokens": ("max-tokens", None),
    "content_filter": ("error", CONTENT_FILTER),
}

# What each output item type is canonically; a type not listed (`custom_tool_call`,
# `compaction`, future ones) is skipped with its events, keeping its output_index (RS-G6).
ITEM_KINDS: dict[str, str] = {
    "message": "message",
    "function_call": "tool",
    "reasoning": "reasoning",
}

# Items of tools the provider runs itself: a server-tool block (never a client call), named
# by the item's `name` where it has one (`mcp_call`), else as listed here.
SERVER_TOOL_ITEMS: dict[str, str] = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "code_interpreter_call": "code_interpreter",
    "image_generation_call": "image_generation",
    "mcp_call": "mcp",
}

# The item-scoped events that carry content: (the item kind they fit, the slot of the item
# they write, the field holding the text). A delta appends; a `.done` is a snapshot.
DELTA_EVENTS: dict[str, tuple[str, str, str]] = {
    "response.output_text.delta": ("message", "content", "delta"),
    "response.refusal.delta": ("message", "refusal", "delta"),
    "response.function_call_arguments.delta": ("tool", "arguments", "delta"),
    "response.reasoning_summary_text.delta": ("reasoning", "summary", "delta"),
    "response.reasoning_text.delta": ("reasoning", "reasoning", "delta"),
}
DONE_EVENTS: dict[str, tuple[str, str, str]] = {
    "response.output_text.done": ("message", "content", "text"),
    "response.refusal.done": ("message", "refusal", "refusal"),
    "response.function_call_arguments.done": ("tool", "arguments", "arguments"),
    "response.reasoning_summary_text.done": ("reasoning", "summary", "text"),
    "response.reasoning_text.done": ("reasoning", "reasoning", "text"),
}
# Which index field numbers the parts of each slot (arguments are one part).
_SLOT_INDEX = {
    "content": "content_index",
    "refusal": "content_index",
    "summary": "summary_index",
    "reasoning": "content_index",
}
# Events that open or close a part: the item kind they fit. Their payload is a part object.
PART_EVENTS: dict[str, str] = {
    "response.content_part.added": "message",
    "response.content_part.done": "message",
    "response.reasoning_summary_part.added": "reasoning",
    "response.reasoning_summary_part.done": "reasoning",
}
# Events of the response as a whole that carry nothing to read.
LIFECYCLE_EVENTS = frozenset({"response.in_progress", "response.queued"})
# Item-scoped events the reading routes (RS-G2) but takes nothing from.
UNREAD_ITEM_EVENTS = frozenset({"response.output_text.annotation.added"})

_ITEM_EVENTS = frozenset(
    {*DELTA_EVENTS, *DONE_EVENTS, *PART_EVENTS, *UNREAD_ITEM_EVENTS, "response.output_item.done"}
)


@dataclass
class _Part:
    """One part of an item's content: what its deltas sent and what snapshots said of it."""

    streamed: str = ""
    done: list[str] = field(default_factory=list)  # `.done` payloads, in arrival order
    output: list[str] = field(default_factory=list)  # the terminal snapshot's

    @property
    def value(self) -> str:
        """The deltas; with no non-empty one, the first non-empty `.done` payload."""
        return self.streamed or next((snapshot for snapshot in self.done if snapshot), "")


PartKey = tuple[str, int]  # (slot, index within the slot)


@dataclass
class _Item:
    """An output item as it is read: at its output_index, in opening order."""

    kind: str | None  # an ITEM_KINDS value, "server-tool", or None for a skipped type
    type: str
    added: dict[str, Any]
    item_id: str | None = None
    call_id: str | None = None
    name: str | None = None
    encrypted_content: str | None = None
    whole: dict[str, Any] | None = None  # output_item.done's item
    parts: dict[PartKey, _Part] = field(default_factory=dict)
    refused: bool = False
    done: bool = False
    shown_at: int | None = None  # when it first had content: its place among the blocks

    def part(self, slot: str, index: int) -> _Part:
        return self.parts.setdefault((slot, index), _Part())

    def joined(self, slot: str) -> str:
        return "".join(self.parts[key].value for key in sorted(self.parts) if key[0] == slot)

    def canonical(self) -> Block | None:
        """The block the caller sees, or None for one that is no content: a skipped type, a
        message with no text, a reasoning item with neither text nor encrypted content."""
        if self.kind == "message":
            body = self.joined("content")
            return TextBlock(text=body) if body else None
        if self.kind == "reasoning":
            body = self.joined("summary") + self.joined("reasoning")
            if not body and self.encrypted_content is None:
                return None
            return ReasoningBlock(
                text=body, encrypted_content=self.encrypted_content, item_id=self.item_id
            )
        if self.kind == "tool":
            arguments = self.joined("arguments") or text(self.added.get("arguments"))
            return ToolCallBlock(
                id=self.call_id or "",
                name=self.name or "",
                arguments=arguments,
                item_id=self.item_id,
            )
        if self.kind == "server-tool":
            item = self.whole or self.added
            name = _nonempty(item.get("name")) or SERVER_TOOL_ITEMS[self.type]
            return ServerToolBlock(id=self.item_id or "", name=name, arguments=_server_input(item))
        return None


@dataclass
class _Reading:
    """State while reading one attempt's events, in order."""

    features: set[str]
    after_terminal: bool = False  # the body sends something after its terminal event
    started: bool = False  # response.created was read
    items: dict[int, _Item] = field(default_factory=dict)  # by output_index, opening order
    sequence: int | None = None  # the last sequence_number read
    finish: tuple[str, str | None] | None = None  # an incomplete's (reason, code)
    usage: Usage | None = None
    done: bool = False
    failure: str | None = None

    closed_feature = "rs-no-terminal"

    def fail(self, code: str, feature: str) -> None:
        self.failure = code
        self.features.add(feature)

    @property
    def finish_arrived(self) -> bool:
        # The finish is the terminal event itself: a body cut before it has none (RS-G5).
        return self.done

    def is_terminal(self, event: SseEvent) -> bool:
        return event_type(event, parsed(event.data)) in TERMINAL_EVENTS

    def read(self, event: SseEvent) -> None:
        if event.data == "[DONE]":
            # A gateway's chat habit: the end of the body, before any terminal event (one
            # after it is never read), so the response never finished (RS-G5).
            self.features.add("rs-done-sentinel")
            self.fail(STREAM_CLOSED, self.closed_feature)
            return
        data = parsed(event.data)
        if event.data == "" or data is UNPARSED:
            self.fail(MALFORMED_RESPONSE, "non-json")  # S6's: no JSON to read
            return
        if not isinstance(data, dict):
            self.fail(MALFORMED_RESPONSE, "rs-malformed-event")
            return
        kind = event_type(event, data)
        if kind == "keepalive":
            self.features.add("rs-keepalive")
            return
        self._number(data)
        try:
            self._read_event(kind, data)
        except MalformedEventError as error:
            self.fail(MALFORMED_RESPONSE, f"rs-malformed-{error}")

    def _number(self, data: dict[str, Any]) -> None:
        """RS-S2: sequence_number is the resume cursor; its gaps, repeats and absence are
        recorded and never fail the attempt."""
        number = data.get(SEQUENCE_FIELD)
        if not isinstance(number, int) or isinstance(number, bool):
            self.features.add("rs-seq-absent")
            return
        if self.sequence is not None:
            if number <= self.sequence:
                self.features.add("rs-seq-backward")
            elif number > self.sequence + 1:
                self.features.add("rs-seq-gap")
        self.sequence = number

    def _read_event(self, kind: str | None, data: dict[str, Any]) -> None:
        if kind == "error":
            flat = not isinstance(data.get("error"), dict)
            self.features.add("rs-error-flat" if flat else "rs-error-nested")
            self.fail(error_code(data if flat else data["error"]), "rs-error-event")
            return
        if not isinstance(data.get("type"), str) and data.get("error") is not None:
            # A chat-style error payload a gateway sends on this wire too (RS-H1).
            self.fail(error_code(data["error"]), "rs-error-object")
            return
        if kind == "response.created":
            if self.started:
                self.fail(MALFORMED_RESPONSE, "rs-created-repeated")
            self.started = True
            return
        known = kind in TERMINAL_EVENTS or kind in LIFECYCLE_EVENTS or kind in _ITEM_EVENTS
        if not (known or kind == "response.output_item.added"):
            self.features.add("rs-unknown-event")  # RS-G6
            return
        if not self.started:
            self.fail(MALFORMED_RESPONSE, "rs-before-created")  # RS-G1
            return
        if kind in TERMINAL_EVENTS:
            self._terminal(kind, data)
        elif kind == "response.output_item.added":
            self._item_added(data)
        elif kind in _ITEM_EVENTS:
            self._item_event(kind, data)

    def _item_added(self, data: dict[str, Any]) -> None:
        index = integer_field(data, "output_index")
        item = object_field(data.get("item"), "item")
        item_type = item.get("type")
        if not isinstance(item_type, str):
            raise MalformedEventError("item")
        if index in self.items:
            self.fail(MALFORMED_RESPONSE, "rs-item-reopened")  # RS-G2: one item per index
            return
        if self.items and index != max(self.items) + 1:
            self.features.add("rs-index-gap")  # RS-G3: routed by index all the same
        kind = ITEM_KINDS.get(item_type)
        if kind is None and item_type in SERVER_TOOL_ITEMS:
            kind = "server-tool"
        if kind is None:
            self.features.add("rs-unknown-item")
        read = _Item(kind, item_type, item, item_id=_nonempty(item.get("id")))
        if kind == "tool":
            read.call_id, read.name = _nonempty(item.get("call_id")), _nonempty(item.get("name"))
            _arguments_text(item)  # a non-string arguments value is malformed
        elif kind == "reasoning":
            read.encrypted_content = _string(item.get("encrypted_content"))
        self.items[index] = read
        self._shown(read)

    def _item_event(self, kind: str, data: dict[str, Any]) -> None:
        item = self._routed(data)
        if item is None or item.kind is None:
            return  # a skipped item's events are skipped with it (RS-G6)
        if kind == "response.output_item.done":
            self._item_done(item, object_field(data.get("item"), "item"))
        elif kind in UNREAD_ITEM_EVENTS:
            return
        elif kind in PART_EVENTS:
            if self._fits(item, PART_EVENTS[kind]):
                self._part_event(item, kind, data)
        else:
            fits, slot, key = (DELTA_EVENTS | DONE_EVENTS)[kind]
            if not self._fits(item, fits):
                return
            part = item.part(slot, _part_index(data, slot))
            if kind in DELTA_EVENTS:
                part.streamed += fragment(data, key)
            else:
                part.done.append(fragment(data, key))
            item.refused = item.refused or slot == "refusal"
        self._shown(item)

    def _routed(self, data: dict[str, Any]) -> _Item | None:
        """RS-G2: the open item an event is for, by output_index; at an index never opened,
        or whose item is done, the attempt fails and nothing attaches elsewhere. RS-G3: an
        item_id that is not the item's id is read past, recorded."""
        item = self.items.get(integer_field(data, "output_index"))
        if item is None:
            self.fail(MALFORMED_RESPONSE, "rs-unknown-index")
            return None
        if item.done:
            self.fail(MALFORMED_RESPONSE, "rs-after-item-done")
            return None
        item_id = data.get("item_id")
        if isinstance(item_id, str) and item.item_id is not None and item_id != item.item_id:
            self.features.add("rs-item-id-mismatch")
        return item

    def _fits(self, item: _Item, kind: str) -> bool:
        """RS-G2: an event of one item kind for an item of another (text into a function
        call) is never appended to it: the attempt fails."""
        if item.kind == kind:
            return True
        self.fail(MALFORMED_RESPONSE, "rs-event-misfit")
        return False

    def _part_event(self, item: _Item, kind: str, data: dict[str, Any]) -> None:
        part = object_field(data.get("part"), "part")
        if item.kind == "message":
            index = _part_index(data, "content")
            if part.get("type") == "refusal":
                item.refused = True
            elif kind.endswith(".done") and part.get("type") == "output_text":
                item.part("content", index).done.append(fragment(part, "text"))
        elif kind.endswith(".done"):
            item.part("summary", _part_index(data, "summary")).done.append(fragment(part, "text"))

    def _item_done(self, item: _Item, whole: dict[str, Any]) -> None:
        """output_item.done: the item whole. It fills an identity the added item lacked
        (never replacing one), the continuity tokens, and is a snapshot of the content."""
        item.done, item.whole = True, whole
        item.item_id = item.item_id or _nonempty(whole.get("id"))
        if item.kind == "tool":
            item.call_id = self._identity(item.call_id, whole, "call_id", "id")
            item.name = self._identity(item.name, whole, "name", "name")
        elif item.kind == "reasoning":
            encrypted = _string(whole.get("encrypted_content"))
            item.encrypted_content = encrypted if encrypted is not None else item.encrypted_content
        item.refused = item.refused or _refuses(item, whole)
        for key, snapshot in _item_parts(item, whole).items():
            item.part(*key).done.append(snapshot)

    def _identity(
        self, current: str | None, whole: dict[str, Any], key: str, label: str
    ) -> str | None:
        """T1/T4 on this wire: a call's identity is output_item.added's; output_item.done
        fills one missing there (a late identity) and never replaces or erases one."""
        value = whole.get(key)
        if current is None:
            if _nonempty(value) is not None:
                self.features.add(f"tool-late-{label}")
            return _nonempty(value)
        if value != current and key in whole:
            if isinstance(value, str) and value:
                self.features.add(f"tool-{label}-conflict")
            else:
                kind = "null" if value is None else ("empty" if value == "" else "nonstring")
                self.features.add(f"tool-{label}-{kind}")
        return current

    def _terminal(self, kind: str, data: dict[str, Any]) -> None:
        self.done = True
        if self.after_terminal:
            self.features.add("rs-after-terminal")
        response = data.get("response")
        response = response if isinstance(response, dict) else {}
        self.usage = map_usage(response.get("usage"))
        if kind == "response.failed":
            self.fail(error_code(response.get("error")), "rs-failed")
            return
        self._snapshot(response)
        if kind == "response.incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            reason = reason if isinstance(reason, str) and reason else None
            self.features.add(f"rs-incomplete-{reason or 'no-reason'}")
            default = ("error", finish_reason_code(reason or ""))
            self.finish = INCOMPLETE_REASONS.get(reason, default)

    def _snapshot(self, response: dict[str, Any]) -> None:
        """RS-C6: the terminal response's output never erases what was streamed; where it
        is empty, null or missing while items were, that is recorded; where it says
        otherwise, recorded too (RS-G4), the streamed items standing."""
        output = response.get("output")
        if not isinstance(output, list) or not output:
            if any(item.canonical() is not None for item in self.items.values()):
                self.features.add("rs-output-empty")
            return
        for index, entry in enumerate(output):
            item = self.items.get(index)
            if not isinstance(entry, dict) or item is None or entry.get("type") != item.type:
                self.features.add("rs-snapshot-conflict")  # an item the stream never opened
                continue
            if _refuses(item, entry) and not item.refused:
                self.features.add("rs-snapshot-conflict")  # a refusal the stream never sent
            for key, snapshot in _item_parts(item, entry).items():
                item.part(*key).output.append(snapshot)
        if len(output) < len(self.items):
            self.features.add("rs-snapshot-conflict")

    def _shown(self, item: _Item) -> None:
        """An item takes its place when it first has content, as a caller first sees it."""
        if item.shown_at is None and item.canonical() is not None:
            item.shown_at = sum(i.shown_at is not None for i in self.items.values())

    def _snapshot_features(self) -> None:
        """RS-G4, RS-C6: how the snapshots compare with the deltas, part by part."""
        for item in self.items.values():
            for part in item.parts.values():
                value = part.value
                if value and "" in part.done:
                    self.features.add("rs-done-empty")
                if any(snapshot and snapshot != value for snapshot in part.done):
                    self.features.add("rs-done-conflict")
                if value and "" in part.output:
                    self.features.add("rs-output-empty")
                if any(snapshot and snapshot != value for snapshot in part.output):
                    self.features.add("rs-snapshot-conflict")

    def result(self, number: int) -> ExpectedAttempt:
        shown = sorted(
            (item for item in self.items.values() if item.shown_at is not None),
            key=lambda item: item.shown_at or 0,
        )
        blocks = tuple(block for block in (item.canonical() for item in shown) if block)
        self._snapshot_features()
        self._block_features(blocks)
        if self.failure is not None:
            return failed_attempt(number, self.failure, blocks, self.usage, self.features)
        calls = any(isinstance(block, ToolCallBlock) for block in blocks)
        reason, code = self.finish or (("tool-calls" if calls else "stop"), None)
        if reason != "error" and any(item.refused for item in self.items.values()):
            reason, code = "error", REFUSAL  # a refusal part: the model declined (RS-C1)
        return ended_attempt(number, Ending(blocks, reason, code, self.usage, False), self.features)

    def _block_features(self, blocks: tuple[Block, ...]) -> None:
        if any(item.refused for item in self.items.values()):
            self.features.add("rs-refusal")
        if sum(item.kind == "tool" for item in self.items.values()) > 1:
            self.features.add("tool-parallel")  # T3: each at its own output_index
        for block in blocks:
            if isinstance(block, ToolCallBlock) and block.item_id not in (None, block.id):
                self.features.add("rs-call-id")  # RS-T2: two ids, the call_id reported
            if isinstance(block, ReasoningBlock) and (block.encrypted_content or block.item_id):
                self.features.add("rs-reasoning-tokens")  # RS-C2


def responses_reading(response: StreamResponse, alt: AltReading | None) -> _Reading:
    """A fresh reading of a Responses stream. ``alt`` is the other reading an ambiguous
    chat quirk leaves open: this dialect has no such quirk, so there is only one."""
    assert alt is None, f"no Responses quirk admits the reading {alt}"
    return _Reading(
        framing_features(response, read_fields=("event",)),
        sends_after(response, TERMINAL_EVENTS),
    )


def map_usage(usage: Any) -> Usage | None:
    """RS-C4: the terminal response's usage, disjoint: input excludes the cached tokens it
    includes on the wire; null is none, counts that are not integers malformed."""
    if usage is None:
        return None
    usage = object_field(usage, "usage")
    input_tokens, output_tokens = count(usage, "input_tokens"), count(usage, "output_tokens")
    if input_tokens is None or output_tokens is None:
        raise MalformedEventError("usage-count")
    cached = count(_details(usage, "input_tokens_details"), "cached_tokens") or 0
    return Usage(
        input_tokens=input_tokens - cached,
        output_tokens=output_tokens,
        cache_read_tokens=cached,
        reasoning_tokens=count(_details(usage, "output_tokens_details"), "reasoning_tokens"),
    )


def error_code(error: Any) -> str:
    """RS-H1: the code of an error object (nested, flat or chat-style): its `code` (or its
    `type`, which the live API sets alike) by
    :data:`~conformance.codes.RESPONSES_ERROR_CODES`; an HTTP status it names
    read as an error body; another code upper-cased; none at all SERVER."""
    if not isinstance(error, dict):
        return SERVER
    for key in ("code", "type"):
        value = error.get(key)
        if isinstance(value, str) and value in RESPONSES_ERROR_CODES:
            return RESPONSES_ERROR_CODES[value]
    for key in ("status", "code"):
        value = error.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return classify_status(value, error_object_detail(error))
    code = re.sub(r"[^A-Za-z0-9]+", "_", text(error.get("code"))).strip("_")
    return finish_reason_code(code) if code[:1].isalpha() else SERVER


def _item_parts(item: _Item, whole: dict[str, Any]) -> dict[PartKey, str]:
    """The content a whole item (output_item.done's, the terminal output's) states, part by
    part; a part the stream had that it leaves out it states as empty."""
    stated: dict[PartKey, str] = {key: "" for key in item.parts}
    if item.kind == "message":
        for index, part in _listed(whole, "content"):
            if part.get("type") == "output_text":
                stated[("content", index)] = text(part.get("text"))
    elif item.kind == "reasoning":
        for index, part in _listed(whole, "summary"):
            stated[("summary", index)] = text(part.get("text"))
        for index, part in _listed(whole, "content"):
            stated[("reasoning", index)] = text(part.get("text"))
    elif item.kind == "tool":
        stated[("arguments", 0)] = _arguments_text(whole)
    return stated


def _refuses(item: _Item, whole: dict[str, Any]) -> bool:
    """Whether a whole message item holds a refusal part."""
    parts = _listed(whole, "content")
    return item.kind == "message" and any(part.get("type") == "refusal" for _, part in parts)


def _listed(whole: dict[str, Any], key: str) -> list[tuple[int, dict[str, Any]]]:
    value = whole.get(key)
    entries = value if isinstance(value, list) else []
    return [(index, entry) for index, entry in enumerate(entries) if isinstance(entry, dict)]


def _part_index(data: dict[str, Any], slot: str) -> int:
    """The part an event writes: its content_index or summary_index (0 when absent)."""
    key = _SLOT_INDEX.get(slot)
    if key is None or data.get(key) is None:
        return 0
    return integer_field(data, key)


def _arguments_text(item: dict[str, Any]) -> str:
    return fragment(item, "arguments")


def _server_input(item: dict[str, Any]) -> str:
    """A server tool's input: its `arguments` text (mcp_call), else its `action` object as
    JSON text (web_search_call's query), else none."""
    arguments = item.get("arguments")
    if isinstance(arguments, str):
        return arguments
    action = item.get("action")
    return json.dumps(action, ensure_ascii=False) if isinstance(action, dict) else ""


def _details(usage: dict[str, Any], key: str) -> dict[str, Any]:
    value = usage.get(key)
    return {} if value is None else object_field(value, "usage-details")


def _nonempty(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None
