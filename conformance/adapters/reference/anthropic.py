"""Anthropic Messages SSE events -> protocol events, for one attempt (sans-IO).

Written from the wire (reference dialects.md §2) and the dialect's decisions (DIALECTS.md),
independently of the oracle's reader. An event is identified by its `data.type` (the `event:`
name only tells an empty `ping` apart); blocks are routed by their wire `index`, which maps to
a canonical index in the order the blocks open. Deltas are emitted as they arrive; block ends,
usage and the finish wait for `message_stop`, because only then is the response complete.

Each rule a realistic bug gets wrong sits in a method of its own (`_block_for`, `_start`,
`_fits`, `_read_usage`, `_arguments_of`, `_resolved_finish`, ...), so that the mutants of
`conformance.adapters.mutants.anthropic` can each override exactly one.
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance import codes
from conformance.adapters.reference.blocks import BlockTranslator, OpenBlock
from conformance.adapters.reference.failure import Failure
from conformance.adapters.reference.http_status import classify_anthropic_error
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

# Anthropic block type -> the canonical block it becomes; any other type is skipped.
BLOCK_KINDS: Mapping[str, BlockType] = {
    "text": "text",
    "thinking": "reasoning",
    "redacted_thinking": "reasoning",
    "tool_use": "tool-call",
    "server_tool_use": "server-tool",
}
# Delta type -> the Anthropic block types it may extend. A delta type not listed is skipped
# (a future one, or `compaction_delta` of a skipped block); a listed one elsewhere is refused.
DELTA_FITS: Mapping[str, frozenset[str]] = {
    "text_delta": frozenset({"text"}),
    "citations_delta": frozenset({"text"}),
    "thinking_delta": frozenset({"thinking"}),
    "signature_delta": frozenset({"thinking"}),
    "input_json_delta": frozenset({"tool_use", "server_tool_use"}),
}
# stop_reason -> canonical finish; an error finish's code where the reason is no success.
SUCCESS_FINISHES: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "max-tokens",
    "model_context_window_exceeded": "max-tokens",
}
ERROR_FINISHES: Mapping[str, str] = {"refusal": codes.REFUSAL, "pause_turn": codes.PAUSE_TURN}
# Wire usage counter -> the canonical counter it is.
USAGE_COUNTERS: Mapping[str, str] = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_input_tokens": "cache_read_tokens",
    "cache_creation_input_tokens": "cache_write_tokens",
}


@dataclass
class WireBlock:
    """A block as the wire opened it at one index: its type and what it became, if anything."""

    wire_type: str
    kind: BlockType | None  # None: a type this translator skips
    block: OpenBlock | None = None  # None: skipped, or a text/thinking block not yet shown
    start_input: Any = None  # tool_use / server_tool_use: the start's `input`
    identity: tuple[Any, Any] = (None, None)  # the start's `id` and `name`, as sent
    canonical_index: int | None = None
    stopped: bool = False
    deltas: list[str] = field(default_factory=list)  # raw partial_json fragments


@dataclass
class Counters:
    """The usage the wire stated so far, each counter assigned from its latest value."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


class AnthropicTranslator(BlockTranslator):
    """Turns the SSE events of one Anthropic Messages attempt into protocol events.

    Feed events with `receive`; call `eof()` when the body ends and `failure()` when the
    transport fails. Exactly one `finish` is ever emitted; every call after it returns [].
    """

    end_name = "message_stop"

    def __init__(self) -> None:
        super().__init__()
        self._wire: dict[int, WireBlock] = {}  # wire index -> block
        self._started = False  # message_start seen
        self._stop_reason: str | None = None
        self._counters = Counters()

    @property
    def finish_arrived(self) -> bool:
        """A `message_delta` sent a stop reason: the response ended, even if the body goes on
        to end without `message_stop`."""
        return self._stop_reason is not None

    def receive(self, event: SSEEvent) -> list[Event]:
        if self._finished:
            return []  # nothing after message_stop or a failure is read (AN-G5)
        try:
            document = self._document(event)
            if document is None:
                return []
            return self._dispatch(document)
        except InvalidEventError as problem:
            return self._fail(codes.MALFORMED_RESPONSE, str(problem))

    def eof(self) -> list[Event]:
        """The body ended. Without `message_stop` the response is truncated (AN-G4)."""
        return self._fail(codes.STREAM_CLOSED, "SSE stream ended without message_stop")

    # --- reading an event -------------------------------------------------------------------

    def _document(self, event: SSEEvent) -> dict[str, Any] | None:
        """The event's JSON object, or None for an event that carries nothing (a ping)."""
        if not event.data.strip():
            if event.name == "ping":
                return None  # a keep-alive; its data may be empty
            raise InvalidEventError(f"event {_event_label(event.name)} has empty data")
        try:
            document = json.loads(event.data, parse_constant=reject_constant)
        except (ValueError, RecursionError):
            raise InvalidEventError(
                f"malformed SSE payload: {event.data[:EXCERPT_CHARS]}"
            ) from None
        if isinstance(document, dict) and event.name == "error" and "type" not in document:
            # A gateway's own error shape ({"code", "message"}) under `event: error`: still
            # the failure its name says (AN-H2), not an unreadable event.
            return {"type": "error", "error": document}
        if not isinstance(document, dict) or not isinstance(document.get("type"), str):
            raise InvalidEventError(f"an event without a type: {event.data[:EXCERPT_CHARS]}")
        return document

    def _dispatch(self, document: dict[str, Any]) -> list[Event]:
        """One event, by its `data.type` whatever its `event:` line says (AN-S2)."""
        kind = document["type"]
        if kind == "error":
            return self._error(document)
        handler = self._handlers().get(kind)
        if handler is None:
            return []  # ping, and event types this translator does not know (AN-G7)
        if kind != "message_start" and not self._started:
            raise InvalidEventError(f"{kind} before message_start")
        return handler(document)

    def _handlers(self) -> Mapping[str, Callable[[dict[str, Any]], list[Event]]]:
        return {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
        }

    def _error(self, document: dict[str, Any]) -> list[Event]:
        """An `event: error` is a failure with its type's code (AN-H2), never a truncated
        success."""
        failure: Failure = classify_anthropic_error(document.get("error"))
        return self._fail(failure.code, failure.message)

    # --- the message --------------------------------------------------------------------------

    def _message_start(self, document: dict[str, Any]) -> list[Event]:
        if self._started:
            return []  # a repeated message_start carries nothing the first did not
        self._started = True
        message = json_object(document.get("message"), "message")
        self._read_usage(message.get("usage"), start=True)
        return []

    def _message_delta(self, document: dict[str, Any]) -> list[Event]:
        delta = json_object(document.get("delta"), "message_delta delta")
        reason = delta.get("stop_reason")
        if isinstance(reason, str) and reason:
            self._stop_reason = reason  # the last one wins; a null never erases one
        self._read_usage(document.get("usage"), start=False)
        return []

    def _read_usage(self, usage: object, *, start: bool) -> None:
        """Each counter present is assigned, never added (AN-C5): the wire's counts are
        cumulative, and `message_delta` repeats those of `message_start`."""
        if usage is None:
            return
        counts = json_object(usage, "usage")
        for wire_key, attribute in USAGE_COUNTERS.items():
            value = count(counts, wire_key)
            if value is not None:
                setattr(self._counters, attribute, value)
        self._pending_usage = self._usage()

    def _usage(self) -> Usage | None:
        """Disjoint usage: the wire's input already excludes cache reads and writes."""
        counters = self._counters
        if counters.input_tokens is None and counters.output_tokens is None:
            return None
        return Usage(
            input_tokens=counters.input_tokens or 0,
            output_tokens=counters.output_tokens or 0,
            cache_read_tokens=counters.cache_read_tokens or 0,
            cache_write_tokens=counters.cache_write_tokens,
        )

    def _message_stop(self, document: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        for wire in self._wire.values():
            if not wire.stopped:
                self._complete_arguments(wire, events)  # a truncated block, closed as it stands
        return events + self._succeed(self._resolved_finish())

    def _resolved_finish(self) -> Finish:
        reason = self._stop_reason
        if reason is None:
            # No stop reason at all: what the blocks say the turn was (AN-C6).
            has_call = any(block.kind == "tool-call" for block in self._blocks)
            reason = "tool_use" if has_call else "end_turn"
        code = ERROR_FINISHES.get(reason, codes.finish_reason_code(reason))
        return self._mapped_finish(SUCCESS_FINISHES.get(reason), code, reason)

    # --- blocks -----------------------------------------------------------------------------

    def _block_start(self, document: dict[str, Any]) -> list[Event]:
        index = _index(document)
        content = json_object(document.get("content_block"), "content_block")
        wire_type = content.get("type")
        if not isinstance(wire_type, str):
            raise InvalidEventError(f"content_block at index {index} has no type")
        if index in self._wire:
            return self._restart(index, wire_type, content)
        events: list[Event] = []
        self._wire[index] = self._start(wire_type, content, events)
        return events

    def _restart(self, index: int, wire_type: str, content: dict[str, Any]) -> list[Event]:
        """A start for an index already used never merges or resets a block (AN-G2): the same
        type and identity again says nothing new and is ignored; any other is refused."""
        known = self._wire[index]
        if (wire_type, _start_identity(content)) == (known.wire_type, known.identity):
            return []
        raise InvalidEventError(f"content_block_start for index {index}, already started")

    def _start(self, wire_type: str, content: dict[str, Any], events: list[Event]) -> WireBlock:
        kind = self._kind_of(wire_type)
        wire = WireBlock(wire_type, kind, identity=_start_identity(content))
        if kind is None:
            return wire  # skipped: it takes no canonical index (AN-G7)
        if wire_type == "redacted_thinking":
            data = content.get("data")
            redacted = data if isinstance(data, str) else ""
            self._show(wire, OpenBlock("reasoning", redacted=redacted), events)
        elif kind in ("tool-call", "server-tool"):
            wire.start_input = content.get("input")
            call_id, name = identity(content.get("id")), identity(content.get("name"))
            self._show(wire, OpenBlock(kind, call_id=call_id, name=name), events)
        else:
            # text and thinking are shown at their first non-empty piece: a text block with no
            # text is no content (AN-C1). A start's own text counts, as the SDKs keep it.
            self._append_text(wire, content.get("text" if kind == "text" else "thinking"), events)
            if kind == "reasoning":
                self._sign(wire, content.get("signature"), events)
        return wire

    def _kind_of(self, wire_type: str) -> BlockType | None:
        """The canonical block an Anthropic block type becomes; None: skipped."""
        return BLOCK_KINDS.get(wire_type)

    def _show(self, wire: WireBlock, block: OpenBlock, events: list[Event]) -> None:
        wire.block = block
        wire.canonical_index = self._open(block, events)

    def _block_delta(self, document: dict[str, Any]) -> list[Event]:
        wire = self._block_for(_index(document), "content_block_delta")
        delta = json_object(document.get("delta"), "delta")
        delta_type = delta.get("type")
        if not isinstance(delta_type, str):
            raise InvalidEventError("a delta without a type")
        if delta_type not in DELTA_FITS or wire.kind is None:
            return []  # an unknown delta type, or any delta of a skipped block
        if not self._fits(delta_type, wire):
            raise InvalidEventError(f"{delta_type} does not fit a {wire.wire_type} block")
        events: list[Event] = []
        if delta_type == "text_delta":
            self._append_text(wire, delta.get("text"), events)
        elif delta_type == "thinking_delta":
            self._append_text(wire, delta.get("thinking"), events)
        elif delta_type == "signature_delta":
            self._sign(wire, delta.get("signature"), events)
        elif delta_type == "input_json_delta":
            self._append_arguments(wire, delta.get("partial_json"), events)
        return events  # citations_delta: the protocol carries no citations

    def _block_for(self, index: int, event: str) -> WireBlock:
        """The open block a delta or stop refers to (AN-G1): never another one."""
        wire = self._wire.get(index)
        if wire is None:
            raise InvalidEventError(f"{event} for index {index}, never started")
        if wire.stopped:
            raise InvalidEventError(f"{event} for index {index}, already stopped")
        return wire

    def _fits(self, delta_type: str, wire: WireBlock) -> bool:
        """Whether a delta may extend this block (AN-G3)."""
        return wire.wire_type in DELTA_FITS[delta_type]

    def _append_text(self, wire: WireBlock, text: object, events: list[Event]) -> None:
        if not isinstance(text, str) or not text:
            return  # "", null and non-strings open nothing
        block, index = self._shown(wire, events)
        block.fragments.append(text)
        if block.kind == "reasoning":
            events.append(ReasoningDelta(index=index, text=text))
        else:
            events.append(TextDelta(index=index, text=text))

    def _sign(self, wire: WireBlock, signature: object, events: list[Event]) -> None:
        if not isinstance(signature, str) or not signature:
            return
        block, _ = self._shown(wire, events)
        block.signature = signature  # assigned: the last one wins, verbatim (AN-C2)

    def _shown(self, wire: WireBlock, events: list[Event]) -> tuple[OpenBlock, int]:
        """The wire block's canonical block, opened now if it was not shown yet."""
        if wire.block is None:
            assert wire.kind is not None
            self._show(wire, OpenBlock(wire.kind), events)
        assert wire.block is not None and wire.canonical_index is not None
        return wire.block, wire.canonical_index

    def _append_arguments(self, wire: WireBlock, fragment: object, events: list[Event]) -> None:
        if not isinstance(fragment, str):
            raise InvalidEventError("input_json_delta without a partial_json string")
        wire.deltas.append(fragment)
        if wire.kind == "tool-call":
            self._emit_arguments(wire, fragment, events)
        # A server tool gets no deltas: its block-end is the whole of it.

    def _emit_arguments(self, wire: WireBlock, fragment: str, events: list[Event]) -> None:
        block, index = self._shown(wire, events)
        block.fragments.append(fragment)
        events.append(
            ToolCallDelta(index=index, id=block.call_id, name=block.name, arguments_delta=fragment)
        )

    def _block_stop(self, document: dict[str, Any]) -> list[Event]:
        wire = self._block_for(_index(document), "content_block_stop")
        wire.stopped = True
        events: list[Event] = []
        self._complete_arguments(wire, events)
        return events

    def _complete_arguments(self, wire: WireBlock, events: list[Event]) -> None:
        """A call's arguments once its deltas are all in (AN-C4); where they are not the
        deltas' own (none, or only ""), they are the call's last delta."""
        block = wire.block
        if block is None or block.kind not in ("tool-call", "server-tool"):
            return
        arguments = self._arguments_of(wire)
        if block.kind == "server-tool":
            block.fragments = [arguments]
        elif not "".join(wire.deltas):
            self._emit_arguments(wire, arguments, events)

    def _arguments_of(self, wire: WireBlock) -> str:
        """The raw concatenation of `partial_json`; with none, or only "", the start's
        `input` as JSON (AN-C4)."""
        joined = "".join(wire.deltas)
        if joined:
            return joined
        start_input = wire.start_input if wire.start_input is not None else {}
        return json.dumps(start_input, ensure_ascii=False)


def _event_label(name: str | None) -> str:
    return "without a name" if name is None else repr(name[:EXCERPT_CHARS])


def _index(document: dict[str, Any]) -> int:
    index = document.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise InvalidEventError(f"{document['type']} without an integer index")
    return index


def _start_identity(content: dict[str, Any]) -> tuple[Any, Any]:
    return content.get("id"), content.get("name")
