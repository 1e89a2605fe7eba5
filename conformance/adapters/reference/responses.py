"""OpenAI Responses SSE events -> protocol events, for one attempt (sans-IO).

Written from the wire (reference dialects.md §3) and the dialect's decisions (DIALECTS.md),
independently of the oracle's reader. An event is identified by its `data.type`; item-scoped
events are routed by `output_index` alone (an `item_id` that differs from the item's `id` is
tolerated: GitHub Copilot rotates it on every event, RS-G3), and an output item becomes a
canonical block in the order the items are first shown. Deltas are emitted as they arrive;
block ends, usage and the finish wait for the terminal event (`response.completed`,
`.incomplete` or `.failed`). The streamed deltas are the answer: the terminal `output` and the
`.done` payloads are never read back over them (RS-C6, RS-G4).

Each rule a realistic bug gets wrong sits in a method of its own (`_item_event`,
`_identity_of`, `_seal`, `_terminal`, `_resolved_finish`, `_error`, ...), so that the mutants of
`conformance.adapters.mutants.responses` can each override exactly one.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance import codes
from conformance.adapters.reference.blocks import BlockTranslator, OpenBlock
from conformance.adapters.reference.http_status import classify_responses_error
from conformance.adapters.reference.payload import (
    EXCERPT_CHARS,
    InvalidEventError,
    count,
    identity,
    json_object,
    reject_constant,
)
from conformance.adapters.reference.sse import SSEEvent
from conformance.events import (
    BlockType,
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)

# Output item type -> the canonical block it becomes; any other type is skipped (RS-G6).
ITEM_KINDS: Mapping[str, BlockType] = {
    "message": "text",
    "reasoning": "reasoning",
    "function_call": "tool-call",
}
# Items of tools the provider runs itself -> the name their server-tool block takes where the
# item has none (DIALECTS.md: a server tool is never a client call).
SERVER_TOOL_ITEMS: Mapping[str, str] = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "code_interpreter_call": "code_interpreter",
    "image_generation_call": "image_generation",
    "mcp_call": "mcp",
}
# Item-scoped event -> (the item type it fits, the part it writes, the field of its text).
# A delta appends to the part; a `.done` says the part whole, read only where no delta did.
DELTA_EVENTS: Mapping[str, tuple[str, str, str]] = {
    "response.output_text.delta": ("message", "content", "delta"),
    "response.refusal.delta": ("message", "refusal", "delta"),
    "response.function_call_arguments.delta": ("function_call", "arguments", "delta"),
    "response.reasoning_summary_text.delta": ("reasoning", "summary", "delta"),
    "response.reasoning_text.delta": ("reasoning", "reasoning", "delta"),
}
DONE_EVENTS: Mapping[str, tuple[str, str, str]] = {
    "response.output_text.done": ("message", "content", "text"),
    "response.refusal.done": ("message", "refusal", "refusal"),
    "response.function_call_arguments.done": ("function_call", "arguments", "arguments"),
    "response.reasoning_summary_text.done": ("reasoning", "summary", "text"),
    "response.reasoning_text.done": ("reasoning", "reasoning", "text"),
}
# Part events -> the item type they fit; their `part` object is a snapshot of one part.
PART_EVENTS: Mapping[str, str] = {
    "response.content_part.added": "message",
    "response.content_part.done": "message",
    "response.reasoning_summary_part.added": "reasoning",
    "response.reasoning_summary_part.done": "reasoning",
}
# The field that numbers a part of each kind (arguments are one part).
PART_INDEX_FIELDS: Mapping[str, str] = {
    "content": "content_index",
    "refusal": "content_index",
    "summary": "summary_index",
    "reasoning": "content_index",
}
LIFECYCLE_EVENTS = frozenset({"response.in_progress", "response.queued"})
# Item-scoped events routed (RS-G2) but carrying nothing this translator emits.
UNREAD_ITEM_EVENTS = frozenset({"response.output_text.annotation.added"})
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
# `incomplete_details.reason` -> canonical finish; an error finish's code where it is no success.
INCOMPLETE_FINISHES: Mapping[str, str] = {"max_output_tokens": "max-tokens"}
INCOMPLETE_ERRORS: Mapping[str, str] = {"content_filter": codes.CONTENT_FILTER}
DONE_DATA = "[DONE]"  # no part of the wire, but gateways add it

PartKey = tuple[str, int]  # (part kind, its content_index or summary_index)


@dataclass
class OutputItem:
    """An output item as `output_item.added` opened it at one `output_index`."""

    wire_type: str
    kind: BlockType | None  # None: a type this translator skips
    item_id: str | None
    added: dict[str, Any]  # the item as `added` sent it
    block: OpenBlock | None = None  # None: skipped, or a message/reasoning not yet shown
    canonical_index: int | None = None
    done: bool = False  # output_item.done seen: no event may extend it any more
    refused: bool = False  # a message with a refusal part: the turn ends in REFUSAL
    filled: set[PartKey] = field(default_factory=set)  # parts that have their text


class ResponsesTranslator(BlockTranslator):
    """Turns the SSE events of one OpenAI Responses attempt into protocol events.

    Feed events with `receive`; call `eof()` when the body ends and `failure()` when the
    transport fails. Exactly one `finish` is ever emitted; every call after it returns [].
    """

    end_name = "the terminal event"

    def __init__(self) -> None:
        super().__init__()
        self._items: dict[int, OutputItem] = {}  # output_index -> item
        self._started = False  # response.created seen

    @property
    def finish_arrived(self) -> bool:
        """The terminal event is the finish and emits it at once: nothing arrives between."""
        return self._finished

    def receive(self, event: SSEEvent) -> list[Event]:
        if self._finished:
            return []  # nothing after the terminal event or a failure is read (RS-G1)
        try:
            return self._dispatch(*self._document(event))
        except InvalidEventError as problem:
            return self._fail(codes.MALFORMED_RESPONSE, str(problem))

    def eof(self) -> list[Event]:
        """The body ended. Without a terminal event the response is truncated (RS-G5)."""
        return self._fail(codes.STREAM_CLOSED, "SSE stream ended without a terminal event")

    # --- reading an event -------------------------------------------------------------------

    def _document(self, event: SSEEvent) -> tuple[str | None, dict[str, Any]]:
        """What the event is (its data's `type`, else its `event:` name) and its JSON."""
        if event.data == DONE_DATA:
            # A gateway's sentinel, before any terminal event: the response never ended well.
            return DONE_DATA, {}
        try:
            document = json.loads(event.data, parse_constant=reject_constant)
        except (ValueError, RecursionError):
            raise InvalidEventError(
                f"malformed SSE payload: {event.data[:EXCERPT_CHARS]}"
            ) from None
        if not isinstance(document, dict):
            raise InvalidEventError(f"an event that is no object: {event.data[:EXCERPT_CHARS]}")
        kind = document.get("type")
        return (kind if isinstance(kind, str) else event.name), document

    def _dispatch(self, kind: str | None, document: dict[str, Any]) -> list[Event]:
        if kind == DONE_DATA:
            return self._fail(codes.STREAM_CLOSED, "[DONE] before a terminal event (RS-G5)")
        if kind == "error":
            return self._error(document)
        if not isinstance(document.get("type"), str) and document.get("error") is not None:
            return self._error(document)  # a chat-style `{"error": {...}}` payload (RS-H1)
        if kind == "keepalive":
            return []
        if kind == "response.created":
            if self._started:
                raise InvalidEventError("a second response.created")
            self._started = True
            return []
        if kind is None or not self._known(kind):
            return []  # event types this translator does not know (RS-G6)
        if not self._started:
            raise InvalidEventError(f"{kind} before response.created (RS-G1)")
        if kind in TERMINAL_EVENTS:
            return self._terminal(kind, _response_of(document))
        if kind in LIFECYCLE_EVENTS:
            return []
        if kind == "response.output_item.added":
            return self._item_added(document)
        return self._item_event(kind, document)

    def _known(self, kind: str) -> bool:
        return (
            kind in TERMINAL_EVENTS
            or kind in LIFECYCLE_EVENTS
            or kind in DELTA_EVENTS
            or kind in DONE_EVENTS
            or kind in PART_EVENTS
            or kind in UNREAD_ITEM_EVENTS
            or kind in ("response.output_item.added", "response.output_item.done")
        )

    def _error(self, document: dict[str, Any]) -> list[Event]:
        """An `error` event is a failure with its code (RS-H1): the live API nests the error
        (`error: {code, message}`), the documentation puts `code` and `message` at the top."""
        error = document.get("error")
        failure = classify_responses_error(error if isinstance(error, dict) else document)
        return self._fail(failure.code, failure.message)

    # --- output items -----------------------------------------------------------------------

    def _item_added(self, document: dict[str, Any]) -> list[Event]:
        index = _output_index(document)
        item = json_object(document.get("item"), "output item")
        wire_type = item.get("type")
        if not isinstance(wire_type, str):
            raise InvalidEventError(f"output item at output_index {index} has no type")
        if index in self._items:
            # One item per index: a second never merges with nor replaces the first (RS-G2).
            raise InvalidEventError(f"output_item.added for output_index {index}, already open")
        events: list[Event] = []
        self._items[index] = self._open_item(wire_type, item, events)
        return events

    def _open_item(self, wire_type: str, item: dict[str, Any], events: list[Event]) -> OutputItem:
        kind = ITEM_KINDS.get(wire_type) or (
            "server-tool" if wire_type in SERVER_TOOL_ITEMS else None
        )
        opened = OutputItem(wire_type, kind, identity(item.get("id")), item)
        if kind == "tool-call":
            # A call shows at once, with the identity `added` gave it (RS-T1).
            _text(item, "arguments")  # a non-string arguments value is malformed
            call_id, name = self._identity_of(item)
            self._show(opened, OpenBlock(kind, call_id=call_id, name=name), events)
        elif kind == "server-tool":
            self._show(opened, OpenBlock(kind, call_id=opened.item_id, fragments=[""]), events)
            self._state_server_tool(opened, item)
        elif kind == "reasoning":
            self._seal(opened, item.get("encrypted_content"), events)
        return opened  # a message shows at its first non-empty text (C1)

    def _identity_of(self, item: dict[str, Any]) -> tuple[str | None, str | None]:
        """A function call's (tool-call id, name): the id is `call_id`, the one the next turn
        echoes in `function_call_output`; the item's `id` is kept beside it (RS-T2)."""
        return identity(item.get("call_id")), identity(item.get("name"))

    def _state_server_tool(self, opened: OutputItem, item: dict[str, Any]) -> None:
        """A provider-run tool's block is the whole of it: its name (the item's, else its
        type's) and its input (`arguments`, else the `action` object as JSON)."""
        assert opened.block is not None
        opened.block.name = identity(item.get("name")) or SERVER_TOOL_ITEMS[opened.wire_type]
        arguments, action = item.get("arguments"), item.get("action")
        if isinstance(arguments, str):
            opened.block.fragments = [arguments]
        elif isinstance(action, dict):
            opened.block.fragments = [json.dumps(action, ensure_ascii=False)]
        else:
            opened.block.fragments = [""]

    def _item_event(self, kind: str, document: dict[str, Any]) -> list[Event]:
        """An event inside an item, routed by its `output_index` alone (RS-G3)."""
        opened = self._item_for(_output_index(document), kind)
        if opened.kind is None or kind in UNREAD_ITEM_EVENTS:
            return []  # a skipped item's events are skipped with it (RS-G6)
        events: list[Event] = []
        if kind == "response.output_item.done":
            self._item_done(opened, json_object(document.get("item"), "output item"), events)
        elif kind in PART_EVENTS:
            self._fits(opened, PART_EVENTS[kind], kind)
            whole = json_object(document.get("part"), "part")
            index = _part_index(document, "content" if opened.kind == "text" else "summary")
            self._part_event(opened, kind, whole, index, events)
        else:
            fits, part, key = DELTA_EVENTS.get(kind) or DONE_EVENTS[kind]
            self._fits(opened, fits, kind)
            piece = _text(document, key)
            index = _part_index(document, part)
            if part == "refusal":
                opened.refused = True  # a refusal is no text (RS-C1)
            elif kind in DELTA_EVENTS:
                self._append(opened, (part, index), piece, events)
            else:
                self._fill(opened, (part, index), piece, events)
        return events

    def _item_for(self, index: int, event: str) -> OutputItem:
        """The open item at `index`; an event for an index never added, or already done,
        is refused: it never attaches to another item (RS-G2)."""
        opened = self._items.get(index)
        if opened is None:
            raise InvalidEventError(f"{event} for output_index {index}, never added")
        if opened.done:
            raise InvalidEventError(f"{event} for output_index {index}, already done")
        return opened

    def _fits(self, opened: OutputItem, wire_type: str, event: str) -> None:
        """An event of one item type for an item of another (text into a function call) is
        never appended to it (RS-G2)."""
        if opened.wire_type != wire_type:
            raise InvalidEventError(f"{event} for a {opened.wire_type[:EXCERPT_CHARS]!r} item")

    def _part_event(
        self, opened: OutputItem, kind: str, part: dict[str, Any], index: int, events: list[Event]
    ) -> None:
        """A part's `added` or `done`: a refusal part marks the message; a done part's text
        fills a part no delta wrote."""
        if opened.kind == "text" and part.get("type") == "refusal":
            opened.refused = True
        elif not kind.endswith(".done"):
            return
        elif opened.kind == "text" and part.get("type") == "output_text":
            self._fill(opened, ("content", index), _text(part, "text"), events)
        elif opened.kind == "reasoning":
            self._fill(opened, ("summary", index), _text(part, "text"), events)

    def _item_done(self, opened: OutputItem, item: dict[str, Any], events: list[Event]) -> None:
        """output_item.done: the item whole. It fills an identity `added` lacked (never
        replacing one), the continuity token, and says the parts no delta wrote."""
        opened.done = True
        opened.item_id = opened.item_id or identity(item.get("id"))
        block = opened.block
        if block is not None and block.kind != "text":
            block.item_id = opened.item_id
        if opened.kind == "tool-call" and block is not None:
            call_id, name = self._identity_of(item)
            block.call_id = block.call_id or call_id
            block.name = block.name or name
            self._fill(opened, ("arguments", 0), _text(item, "arguments"), events)
        elif opened.kind == "server-tool" and block is not None:
            block.call_id = block.call_id or opened.item_id
            self._state_server_tool(opened, item)
        elif opened.kind == "reasoning":
            self._seal(opened, item.get("encrypted_content"), events)
            for key, piece in _listed_parts(item, {"summary": "summary", "content": "reasoning"}):
                self._fill(opened, key, piece, events)
        elif opened.kind == "text":
            for (part, index), piece, part_type in _message_parts(item):
                if part_type == "refusal":
                    opened.refused = True
                elif part_type == "output_text":
                    self._fill(opened, (part, index), piece, events)

    def _show(self, opened: OutputItem, block: OpenBlock, events: list[Event]) -> None:
        block.item_id = opened.item_id if block.kind != "text" else None
        opened.block = block
        opened.canonical_index = self._open(block, events)

    def _shown(self, opened: OutputItem, events: list[Event]) -> tuple[OpenBlock, int]:
        """The item's canonical block, opened now if it was not shown yet."""
        if opened.block is None:
            assert opened.kind is not None
            self._show(opened, OpenBlock(opened.kind), events)
        assert opened.block is not None and opened.canonical_index is not None
        return opened.block, opened.canonical_index

    def _seal(self, opened: OutputItem, encrypted: object, events: list[Event]) -> None:
        """A reasoning item's `encrypted_content`, verbatim (RS-C2): it shows the item."""
        if not isinstance(encrypted, str):
            return
        block, _ = self._shown(opened, events)
        block.encrypted_content = encrypted

    # --- text -------------------------------------------------------------------------------

    def _append(self, opened: OutputItem, key: PartKey, piece: str, events: list[Event]) -> None:
        """A delta: emitted as it arrives; "" shows nothing."""
        if not piece:
            return
        opened.filled.add(key)
        block, index = self._shown(opened, events)
        block.fragments.append(piece)
        if block.kind == "tool-call":
            events.append(
                ToolCallDelta(index=index, id=block.call_id, name=block.name, arguments_delta=piece)
            )
        elif block.kind == "reasoning":
            events.append(ReasoningDelta(index=index, text=piece))
        else:
            events.append(TextDelta(index=index, text=piece))

    def _fill(self, opened: OutputItem, key: PartKey, piece: str, events: list[Event]) -> None:
        """A `.done` payload or a done item's part: the part's text where no delta gave it
        any (RS-G4), emitted as its delta so that the block-end equals them. A payload that
        differs from the deltas changes nothing: the deltas are the answer."""
        if key not in opened.filled:
            self._append(opened, key, piece, events)

    def _complete_arguments(self, opened: OutputItem, events: list[Event]) -> None:
        """A call that no delta nor `.done` gave arguments takes those of its added item
        (RS-C3), as its last delta."""
        if opened.kind == "tool-call":
            self._fill(opened, ("arguments", 0), _text(opened.added, "arguments"), events)

    # --- the end ----------------------------------------------------------------------------

    def _terminal(self, kind: str, response: dict[str, Any]) -> list[Event]:
        """The response's end: its usage, whatever its status (RS-C4), and its finish. The
        terminal `output` is not read: the streamed items are the answer (RS-C6)."""
        self._read_usage(response.get("usage"))
        if kind == "response.failed":
            failure = classify_responses_error(response.get("error"))
            return self._fail(failure.code, failure.message)
        events: list[Event] = []
        for opened in self._items.values():
            self._complete_arguments(opened, events)
        return events + self._succeed(self._resolved_finish(kind, response))

    def _resolved_finish(self, kind: str, response: dict[str, Any]) -> Finish:
        mapped, code, reason = self._status_of(kind, response)
        if mapped is not None and any(opened.refused for opened in self._items.values()):
            mapped, code, reason = None, codes.REFUSAL, "refusal"  # the model declined (RS-C1)
        return self._mapped_finish(mapped, code, reason)

    def _status_of(self, kind: str, response: dict[str, Any]) -> tuple[str | None, str, str]:
        """(the success it is or None, the error code otherwise, the wire's reason)."""
        if kind == "response.incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            if not isinstance(reason, str) or not reason:
                reason = "max_output_tokens"  # truncated, for no stated reason
            code = INCOMPLETE_ERRORS.get(reason, codes.finish_reason_code(reason))
            return INCOMPLETE_FINISHES.get(reason), code, reason
        has_call = any(opened.kind == "tool-call" for opened in self._items.values())
        return ("tool-calls" if has_call else "stop"), codes.SERVER, kind

    def _read_usage(self, usage: object) -> None:
        """Disjoint usage (C4): the wire's `input_tokens` include the cached ones."""
        if usage is None:
            return
        counts = json_object(usage, "usage")
        input_details = _details(counts, "input_tokens_details")
        output_details = _details(counts, "output_tokens_details")
        input_tokens, output_tokens = count(counts, "input_tokens"), count(counts, "output_tokens")
        if input_tokens is None or output_tokens is None:
            raise InvalidEventError("usage without input_tokens and output_tokens")
        cached = count(input_details, "cached_tokens") or 0
        self._pending_usage = Usage(
            input_tokens=input_tokens - cached,
            output_tokens=output_tokens,
            cache_read_tokens=cached,
            reasoning_tokens=count(output_details, "reasoning_tokens"),
        )


def _output_index(document: dict[str, Any]) -> int:
    index = document.get("output_index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise InvalidEventError(f"{document['type']} without an integer output_index")
    return index


def _details(counts: dict[str, Any], key: str) -> dict[str, Any]:
    details = counts.get(key)
    return {} if details is None else json_object(details, f"usage {key}")


def _response_of(document: dict[str, Any]) -> dict[str, Any]:
    response = document.get("response")
    return response if isinstance(response, dict) else {}


def _text(container: dict[str, Any], key: str) -> str:
    """A text field: absent or null is none, anything but a string malformed."""
    value = container.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidEventError(f"{key} is not a string")
    return value


def _part_index(document: dict[str, Any], part: str) -> int:
    """The part an event writes: its content_index or summary_index (0 when absent)."""
    key = PART_INDEX_FIELDS.get(part)
    value = None if key is None else document.get(key)
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidEventError(f"{key} is not an integer")
    return value


def _listed(item: dict[str, Any], key: str) -> list[tuple[int, dict[str, Any]]]:
    value = item.get(key)
    entries = value if isinstance(value, list) else []
    return [(index, entry) for index, entry in enumerate(entries) if isinstance(entry, dict)]


def _listed_parts(item: dict[str, Any], lists: Mapping[str, str]) -> list[tuple[PartKey, str]]:
    """The text of each part a whole item lists: `lists` maps its list key to the part kind."""
    return [
        ((part, index), _text(entry, "text"))
        for key, part in lists.items()
        for index, entry in _listed(item, key)
    ]


def _message_parts(item: dict[str, Any]) -> list[tuple[PartKey, str, object]]:
    return [
        (("content", index), _text(entry, "text"), entry.get("type"))
        for index, entry in _listed(item, "content")
    ]
