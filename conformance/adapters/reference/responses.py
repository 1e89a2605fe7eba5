"""OpenAI Responses SSE events -> protocol events, for one attempt (sans-IO).

Written from the wire (reference dialects.md §3) and the dialect's decisions (DIALECTS.md),
independently of the oracle's reader. An event is identified by its `data.type`; item-scoped
events are routed by `output_index` alone (an `item_id` that differs from the item's `id` is
tolerated: GitHub Copilot rotates it on every event, RS-G3), and an output item becomes a
canonical block in the order the items are first shown. Deltas are emitted as they arrive;
block ends, usage and the finish wait for the terminal event (`response.completed`,
`.incomplete` or `.failed`). The streamed deltas are the answer: the terminal `output` and the
`.done` payloads are never read back over them (RS-C6, RS-G4).

Each rule a realistic bug gets wrong sits in a method of its own (`_item_for`, `_identity_of`,
`_terminal`, `_resolved_finish`, `_read_usage`, `_error`, ...), so that the mutants of
`conformance.adapters.mutants.responses` can each override exactly one.
"""

import json
from collections.abc import Callable, Mapping
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
# Item-scoped delta event -> the item type it may extend (RS-G2). Other item-scoped events
# (`.done`, parts, annotations, tool kinds this translator skips) change nothing it emits.
DELTA_FITS: Mapping[str, str] = {
    "response.output_text.delta": "message",
    "response.refusal.delta": "message",
    "response.function_call_arguments.delta": "function_call",
    "response.reasoning_summary_text.delta": "reasoning",
    "response.reasoning_text.delta": "reasoning",
}
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
# `incomplete_details.reason` -> canonical finish; an error finish's code where it is no success.
INCOMPLETE_FINISHES: Mapping[str, str] = {"max_output_tokens": "max-tokens"}
INCOMPLETE_ERRORS: Mapping[str, str] = {"content_filter": codes.CONTENT_FILTER}
DONE_DATA = "[DONE]"  # no part of the wire, but gateways add it


@dataclass
class OutputItem:
    """An output item as `output_item.added` opened it at one `output_index`."""

    wire_type: str
    kind: BlockType | None  # None: a type this translator skips
    item_id: str | None
    block: OpenBlock | None = None  # None: skipped, or a message/reasoning not yet shown
    canonical_index: int | None = None
    done: bool = False  # output_item.done seen: no event may extend it any more
    refused: bool = False  # a message with a refusal part: the turn ends in REFUSAL
    snapshot_arguments: object = None  # a call's `arguments` as added / done said them
    deltas: list[str] = field(default_factory=list)  # raw argument deltas


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
            document = self._document(event)
            if document is None:
                return []
            return self._dispatch(document)
        except InvalidEventError as problem:
            return self._fail(codes.MALFORMED_RESPONSE, str(problem))

    def eof(self) -> list[Event]:
        """The body ended. Without a terminal event the response is truncated (RS-G5)."""
        return self._fail(codes.STREAM_CLOSED, "SSE stream ended without a terminal event")

    # --- reading an event -------------------------------------------------------------------

    def _document(self, event: SSEEvent) -> dict[str, Any] | None:
        """The event's JSON object, or None for an event that carries nothing (a keepalive)."""
        data = event.data.strip()
        if not data:
            if event.name == "keepalive":
                return None
            raise InvalidEventError("an event with empty data")
        if data == DONE_DATA:
            # A gateway's sentinel before any terminal event ends nothing well (RS-G5).
            return {"type": DONE_DATA}
        try:
            document = json.loads(data, parse_constant=reject_constant)
        except (ValueError, RecursionError):
            raise InvalidEventError(f"malformed SSE payload: {data[:EXCERPT_CHARS]}") from None
        if not isinstance(document, dict):
            raise InvalidEventError(f"an event that is no object: {data[:EXCERPT_CHARS]}")
        if "type" not in document and "error" in document:
            # A chat-style `{"error": {...}}` payload: the failure it says (RS-H1).
            return {"type": "error", **document}
        if not isinstance(document.get("type"), str):
            raise InvalidEventError(f"an event without a type: {data[:EXCERPT_CHARS]}")
        return document

    def _dispatch(self, document: dict[str, Any]) -> list[Event]:
        """One event, by its `data.type` whatever its `event:` line says."""
        kind = document["type"]
        if kind == "error":
            return self._error(document)
        if kind == DONE_DATA:
            return self._fail(codes.STREAM_CLOSED, "[DONE] before a terminal event")
        if kind == "response.created":
            self._started = True
            return []
        if kind == "keepalive":
            return []
        if not self._started:
            raise InvalidEventError(f"{kind} before response.created")
        if kind in TERMINAL_EVENTS:
            return self._terminal(kind, json_object(document.get("response"), "response"))
        handler = self._handlers().get(kind)
        if handler is not None:
            return handler(document)
        if kind in DELTA_FITS:
            return self._delta(kind, document)
        return []  # lifecycle, `.done`, parts, and event types this translator skips (RS-G6)

    def _handlers(self) -> Mapping[str, Callable[[dict[str, Any]], list[Event]]]:
        return {
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.content_part.added": self._part_added,
        }

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
        known = self._items.get(index)
        if known is not None:
            if (wire_type, identity(item.get("id"))) == (known.wire_type, known.item_id):
                return []  # a repeat of the same item says nothing new
            raise InvalidEventError(f"output_item.added for output_index {index}, already open")
        events: list[Event] = []
        self._items[index] = self._open_item(wire_type, item, events)
        return events

    def _open_item(self, wire_type: str, item: dict[str, Any], events: list[Event]) -> OutputItem:
        kind = ITEM_KINDS.get(wire_type)
        opened = OutputItem(wire_type, kind, item_id=identity(item.get("id")))
        if kind == "tool-call":
            # A call shows at once, with the identity `added` gave it (RS-T1).
            opened.snapshot_arguments = item.get("arguments")
            call_id, name = self._identity_of(item)
            self._show(opened, OpenBlock(kind, call_id=call_id, name=name), events)
        elif kind == "reasoning":
            self._seal(opened, item.get("encrypted_content"), events)
        return opened  # a message shows at its first non-empty text (C1)

    def _identity_of(self, item: dict[str, Any]) -> tuple[str | None, str | None]:
        """A function call's (tool-call id, name): the id is `call_id`, the one the next turn
        echoes in `function_call_output`; the item's `id` is kept beside it (RS-T2)."""
        return identity(item.get("call_id")), identity(item.get("name"))

    def _item_done(self, document: dict[str, Any]) -> list[Event]:
        opened = self._item_for(_output_index(document), "response.output_item.done")
        item = document.get("item")
        item = item if isinstance(item, dict) else {}
        opened.done = True
        events: list[Event] = []
        block = opened.block
        if opened.kind == "tool-call" and block is not None:
            # What `added` lacked may be filled now; nothing it gave is replaced (T4).
            call_id, name = self._identity_of(item)
            block.call_id = block.call_id or call_id
            block.name = block.name or name
            if "arguments" in item:
                opened.snapshot_arguments = item.get("arguments")
            self._complete_arguments(opened, events)
        elif opened.kind == "reasoning":
            self._seal(opened, item.get("encrypted_content"), events)
        return events

    def _part_added(self, document: dict[str, Any]) -> list[Event]:
        opened = self._item_for(_output_index(document), "response.content_part.added")
        part = document.get("part")
        if isinstance(part, dict) and part.get("type") == "refusal" and opened.kind == "text":
            opened.refused = True
        return []

    def _item_for(self, index: int, event: str) -> OutputItem:
        """The open item at `index`; an event for an index never added, or already done,
        is refused: it never attaches to another item (RS-G2)."""
        opened = self._items.get(index)
        if opened is None:
            raise InvalidEventError(f"{event} for output_index {index}, never added")
        if opened.done:
            raise InvalidEventError(f"{event} for output_index {index}, already done")
        return opened

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
        if not isinstance(encrypted, str) or not encrypted:
            return
        block, _ = self._shown(opened, events)
        block.encrypted_content = encrypted

    # --- deltas -----------------------------------------------------------------------------

    def _delta(self, kind: str, document: dict[str, Any]) -> list[Event]:
        opened = self._item_for(_output_index(document), kind)
        if opened.wire_type != DELTA_FITS[kind]:
            raise InvalidEventError(
                f"{kind} for output_index {_output_index(document)}, a {opened.wire_type!r} item"
            )
        piece = document.get("delta")
        if not isinstance(piece, str):
            raise InvalidEventError(f"{kind} without a delta string")
        events: list[Event] = []
        if kind == "response.refusal.delta":
            opened.refused = True  # a refusal is no text (RS-C1)
        elif kind == "response.function_call_arguments.delta":
            opened.deltas.append(piece)
            self._emit_arguments(opened, piece, events)
        elif piece:
            block, index = self._shown(opened, events)
            block.fragments.append(piece)
            if block.kind == "reasoning":
                events.append(ReasoningDelta(index=index, text=piece))
            else:
                events.append(TextDelta(index=index, text=piece))
        return events

    def _emit_arguments(self, opened: OutputItem, piece: str, events: list[Event]) -> None:
        block, index = self._shown(opened, events)
        block.fragments.append(piece)
        events.append(
            ToolCallDelta(index=index, id=block.call_id, name=block.name, arguments_delta=piece)
        )

    def _complete_arguments(self, opened: OutputItem, events: list[Event]) -> None:
        """A call with no argument deltas (or only "") takes the `arguments` of its done or
        added item (RS-C3), as its last delta: its block-end still equals its deltas."""
        if opened.kind != "tool-call" or "".join(opened.deltas):
            return
        arguments = opened.snapshot_arguments
        if isinstance(arguments, str) and arguments:
            opened.deltas.append(arguments)
            self._emit_arguments(opened, arguments, events)

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
            if not opened.done:
                self._complete_arguments(opened, events)  # a cut item, closed as it stands
        return events + self._succeed(self._resolved_finish(kind, response))

    def _resolved_finish(self, kind: str, response: dict[str, Any]) -> Finish:
        if any(opened.refused for opened in self._items.values()):
            return self._mapped_finish(None, codes.REFUSAL, "refusal")
        if kind == "response.incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            if not isinstance(reason, str) or not reason:
                reason = "max_output_tokens"  # truncated, for no stated reason
            code = INCOMPLETE_ERRORS.get(reason, codes.finish_reason_code(reason))
            return self._mapped_finish(INCOMPLETE_FINISHES.get(reason), code, reason)
        has_call = any(opened.kind == "tool-call" for opened in self._items.values())
        return self._mapped_finish("tool-calls" if has_call else "stop", codes.SERVER, kind)

    def _read_usage(self, usage: object) -> None:
        """Disjoint usage (C4): the wire's `input_tokens` include the cached ones."""
        if usage is None:
            return
        counts = json_object(usage, "usage")
        input_details = _details(counts, "input_tokens_details")
        output_details = _details(counts, "output_tokens_details")
        input_tokens, output_tokens = count(counts, "input_tokens"), count(counts, "output_tokens")
        if input_tokens is None and output_tokens is None:
            return
        cached = count(input_details, "cached_tokens") or 0
        self._pending_usage = Usage(
            input_tokens=(input_tokens or 0) - cached,
            output_tokens=output_tokens or 0,
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
