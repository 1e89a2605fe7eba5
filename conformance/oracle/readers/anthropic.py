"""Reading a whole Anthropic Messages body (reference dialects.md §2, DIALECTS.md "Decisions"):
named events routed by block index, into the canonical expected attempt.

Each decision is in docs/decisions.md ("Reading the Anthropic Messages wire"). Where the
harness refuses what interop accepts (a delta that does not fit its block, a repeated start
of another type), the reading goes on as interop reads it, the refusal noted, so that both
readings come from one pass.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from fakeprovider.dialects.anthropic import DELTA_BLOCK_TYPES, ERROR_TYPES
from fakeprovider.scenario import StreamResponse

from ...codes import MALFORMED_RESPONSE, PAUSE_TURN, REFUSAL, SERVER
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

# AN-C6: the canonical finish of each stop_reason (reason, code).
STOP_REASONS: dict[str, tuple[str, str | None]] = {
    "end_turn": ("stop", None),
    "stop_sequence": ("stop", None),
    "tool_use": ("tool-calls", None),
    "max_tokens": ("max-tokens", None),
    "model_context_window_exceeded": ("max-tokens", None),
    "refusal": ("error", REFUSAL),
    "pause_turn": ("error", PAUSE_TURN),
}

# AN-H2: an `error` event's `error.type` stands for the HTTP status Anthropic sends it with
# (its errors documentation, the fake provider's table): the code is that status's (H1),
# with the error's wording read as in an error body. A type not listed is SERVER.
STATUS_OF_ERROR_TYPE: dict[str, int] = {kind: status for status, kind in ERROR_TYPES.items()}

# What each block type is canonically; the delta types that fit each (AN-G3) are the wire's
# (DELTA_BLOCK_TYPES). A block type not listed (a `*_tool_result`, `fallback`,
# `compaction`…) is skipped, deltas and all.
_BLOCK_KINDS = {
    "text": "text",
    "thinking": "thinking",
    "redacted_thinking": "redacted",
    "tool_use": "tool",
    "server_tool_use": "server-tool",
}
_KNOWN_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "error",
    }
)


@dataclass
class _Block:
    """A content block as it is read: at its wire index, in opening order."""

    kind: str | None  # a _BLOCK_KINDS value; None for a type the reading skips
    start: dict[str, Any]
    text: str = ""
    signature: str = ""
    arguments: str = ""
    stopped: bool = False
    restarted: bool = False  # another block was started at its index (AN-G2)
    shown_at: int | None = None  # when it first had content: its place among the blocks

    @property
    def arguments_as_object(self) -> bool:
        """A call whose arguments are the start's ``input`` object, no partial_json."""
        value = self.start.get("input")
        return self.kind in ("tool", "server-tool") and not self.arguments and bool(value)

    def canonical(self) -> Block | None:
        """The block the caller sees, or None for one that is no content: a skipped type,
        a text or thinking block that received nothing (AN-C1, AN-C2)."""
        if self.kind == "text":
            return TextBlock(text=self.text) if self.text else None
        if self.kind == "thinking":
            if not self.text and not self.signature:
                return None
            return ReasoningBlock(text=self.text, signature=self.signature or None)
        if self.kind == "redacted":
            data = self.start.get("data")
            return ReasoningBlock(text="", redacted=data) if text(data) else None
        if self.kind in ("tool", "server-tool"):
            id, name = text(self.start.get("id")), text(self.start.get("name"))
            arguments = self.arguments or _input_json(self.start.get("input"))
            if self.kind == "tool":
                return ToolCallBlock(id=id, name=name, arguments=arguments)
            return ServerToolBlock(id=id, name=name, arguments=arguments)
        return None


@dataclass
class _Reading:
    """State while reading one attempt's events, in order."""

    features: set[str]
    after_stop: bool = False  # the body sends events after its message_stop (AN-G5)
    started: bool = False  # message_start was read
    blocks: dict[int, _Block] = field(default_factory=dict)  # by wire index, opening order
    stop_reason: str | None = None
    input_counts: dict[str, int] = field(default_factory=dict)
    output_tokens: int | None = None
    done: bool = False
    failure: str | None = None
    # A refusal the harness owes that interop does not (AN-G2, AN-G3): the reading goes on
    # as interop reads the stream.
    harness_refusal: str | None = None

    closed_feature = "an-no-message-stop"

    def fail(self, code: str, feature: str) -> None:
        self.failure = code
        self.features.add(feature)

    def refuse_in_harness(self, feature: str) -> None:
        self.harness_refusal = MALFORMED_RESPONSE
        self.features.add(feature)

    @property
    def finish_arrived(self) -> bool:
        return self.stop_reason is not None

    def is_terminal(self, event: SseEvent) -> bool:
        return event_type(event, parsed(event.data)) == "message_stop"

    def read(self, event: SseEvent) -> None:
        data = parsed(event.data)
        kind = event_type(event, data)
        if kind == "ping":
            if data is UNPARSED:
                self.features.add("an-ping-no-json")
            return  # AN-G7: anywhere, whatever its data
        if event.data == "" or data is UNPARSED:
            self.fail(MALFORMED_RESPONSE, "non-json")  # AN-S3 is S6's: no JSON to read
            return
        if not isinstance(data, dict):
            self.fail(MALFORMED_RESPONSE, "an-malformed-event")
            return
        self._name_features(event, data)
        if kind not in _KNOWN_EVENTS:
            self.features.add("an-unknown-event")  # AN-G7
            return
        try:
            self._read_event(kind, data)
        except MalformedEventError as error:
            self.fail(MALFORMED_RESPONSE, f"an-malformed-{error}")

    def _name_features(self, event: SseEvent, data: dict[str, Any]) -> None:
        """AN-S2: the event is what its data's type says; a missing or disagreeing name
        is read past, and is a feature of the wire."""
        if not isinstance(data.get("type"), str):
            return
        if not event.name:
            self.features.add("an-data-only")
        elif event.name != data["type"]:
            self.features.add("an-name-mismatch")

    def _read_event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "error":
            self.fail(_error_code(data.get("error")), "an-error-event")
            return
        if not self.started and kind != "message_start":
            self.fail(MALFORMED_RESPONSE, "an-before-message-start")  # AN-G6
            return
        if kind == "message_start":
            self._message_start(data)
        elif kind == "content_block_start":
            self._block_start(data)
        elif kind == "content_block_delta":
            self._block_delta(data)
        elif kind == "content_block_stop":
            self._block_stop(data)
        elif kind == "message_delta":
            self._message_delta(data)
        else:
            self.done = True
            if self.after_stop:
                self.features.add("an-after-stop")

    def _message_start(self, data: dict[str, Any]) -> None:
        if self.started:
            self.fail(MALFORMED_RESPONSE, "an-message-start-repeated")
            return
        self.started = True
        message = object_field(data.get("message"), "message")
        self._count_usage(object_field(message.get("usage"), "usage"))

    def _block_start(self, data: dict[str, Any]) -> None:
        index = integer_field(data, "index")
        block = object_field(data.get("content_block"), "content_block")
        block_type = block.get("type")
        if not isinstance(block_type, str):
            raise MalformedEventError("content_block")
        kind = _BLOCK_KINDS.get(block_type)
        known = self.blocks.get(index)
        if known is not None:
            self._repeated_start(known, kind, block)
            return
        if kind is None:
            self.features.add("an-unknown-block")
        elif kind == "server-tool":
            self.features.add("an-server-tool")
        elif kind == "redacted":
            self.features.add("an-redacted")
        self.blocks[index] = _Block(kind, block)
        self._shown(self.blocks[index])

    def _shown(self, block: _Block) -> None:
        """A block takes its place when it first has content, as a caller first sees it: a
        text block opened empty and written after a later call started comes after it."""
        if block.shown_at is None and block.canonical() is not None:
            block.shown_at = sum(b.shown_at is not None for b in self.blocks.values())

    def _repeated_start(self, known: _Block, kind: str | None, block: dict[str, Any]) -> None:
        """AN-G2: a start for an index already used never merges two blocks nor changes an
        identity: the first block stands. The same type and identity again may be ignored
        (the reading) or refused; another one is refused under harness, recorded under
        interop (DIALECTS.md "A repeated start")."""
        identity = ("id", "name")
        same = kind == known.kind and all(block.get(k) == known.start.get(k) for k in identity)
        if same:
            self.features.add("an-start-repeated")
        else:
            known.restarted = True
            self.refuse_in_harness("an-start-conflict")

    def _block_delta(self, data: dict[str, Any]) -> None:
        block = self._routed(data, "delta")
        if block is None:
            return
        delta = object_field(data.get("delta"), "delta")
        delta_type = delta.get("type")
        if block.kind is None or delta_type not in DELTA_BLOCK_TYPES:
            return  # a skipped block's deltas, or a delta type of no block yet (AN-G7)
        if block.start.get("type") not in DELTA_BLOCK_TYPES[delta_type]:
            # AN-G3: never appended; after a conflicting start, the deltas of the block it
            # started are that start's consequence (AN-G2's), not a misfit of their own.
            if not block.restarted:
                self.refuse_in_harness("an-delta-misfit")
            return
        if delta_type == "text_delta":
            block.text += fragment(delta, "text")
        elif delta_type == "thinking_delta":
            block.text += fragment(delta, "thinking")
        elif delta_type == "signature_delta":
            block.signature += fragment(delta, "signature")
            self.features.add("an-signature")
        elif delta_type == "input_json_delta":
            block.arguments += fragment(delta, "partial_json")
        self._shown(block)

    def _block_stop(self, data: dict[str, Any]) -> None:
        block = self._routed(data, "stop")
        if block is not None:
            block.stopped = True

    def _routed(self, data: dict[str, Any], what: str) -> _Block | None:
        """AN-G1: the open block a delta or stop is for; at an index never started or
        already stopped the attempt fails, and nothing attaches to another block."""
        block = self.blocks.get(integer_field(data, "index"))
        if block is None:
            self.fail(MALFORMED_RESPONSE, f"an-{what}-unknown-index")
        elif block.stopped:
            self.fail(MALFORMED_RESPONSE, f"an-{what}-after-stop")
            return None
        return block

    def _message_delta(self, data: dict[str, Any]) -> None:
        delta = object_field(data.get("delta"), "delta")
        reason = delta.get("stop_reason")
        if isinstance(reason, str) and reason:
            self.stop_reason = reason  # a null one never erases an earlier reason
        usage = data.get("usage")
        if usage is not None:
            self._count_usage(object_field(usage, "usage"))

    def _count_usage(self, usage: dict[str, Any]) -> None:
        """AN-C5: every counter is cumulative, so each one received is assigned, never
        added; a counter left out or null keeps its value."""
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            value = count(usage, key)
            if value is not None:
                self.input_counts[key] = value
        output = count(usage, "output_tokens")
        if output is not None:
            self.output_tokens = output

    def _usage(self) -> Usage | None:
        if not self.input_counts and self.output_tokens is None:
            return None
        counts = self.input_counts
        return Usage(
            input_tokens=counts.get("input_tokens", 0),  # cache reads are not in it (§2.5)
            output_tokens=self.output_tokens or 0,
            cache_read_tokens=counts.get("cache_read_input_tokens", 0),
            cache_write_tokens=counts.get("cache_creation_input_tokens"),
        )

    def result(self, number: int) -> ExpectedAttempt:
        shown = sorted(
            (b for b in self.blocks.values() if b.shown_at is not None),
            key=lambda b: b.shown_at or 0,
        )
        opened = [block.canonical() for block in shown]
        blocks = tuple(block for block in opened if block is not None)
        if any(block.arguments_as_object for block in self.blocks.values()):
            # JSON the start carried as an object has no raw text a client could keep: any
            # text of its value is the raw one (C3).
            self.features.add("tool-arguments-object")
        usage = self._usage()
        if self.failure is not None:
            return failed_attempt(number, self.failure, blocks, usage, self.features)
        if any(not block.stopped for block in self.blocks.values()):
            # Truncation: a block never stopped is closed as it stands (DIALECTS.md).
            self.features.add("an-block-unstopped")
        ended = ended_attempt(number, self._ending(blocks, usage), self.features)
        if self.harness_refusal is None:
            return ended
        # Refusing what does not fit is the harness's duty: the interop readings are the
        # stream read past it, with what did not fit left out.
        refused = failed_attempt(number, self.harness_refusal, blocks, usage, self.features)
        relaxed = (dataclasses.replace(ended, interop_readings=()), *ended.interop_readings)
        return dataclasses.replace(refused, interop_readings=relaxed)

    def _ending(self, blocks: tuple[Block, ...], usage: Usage | None) -> Ending:
        if self.stop_reason is None:
            # AN-C6: no stop reason at all reads as the blocks say, and is recorded.
            self.features.add("an-stop-reason-null")
            calls = any(isinstance(block, ToolCallBlock) for block in blocks)
            reason, code = ("tool-calls" if calls else "stop"), None
        else:
            reason, code = STOP_REASONS.get(self.stop_reason, ("error", self.stop_reason.upper()))
            self.features.add(f"an-stop-{self.stop_reason.replace('_', '-')}")
        return Ending(blocks, reason, code, usage, finish_absent=self.stop_reason is None)


def anthropic_reading(response: StreamResponse, alt: AltReading | None) -> _Reading:
    """A fresh reading of an Anthropic stream. ``alt`` is the other reading an ambiguous
    chat quirk leaves open: this dialect has no such quirk yet, so there is only one."""
    assert alt is None, f"no Anthropic quirk admits the reading {alt}"
    features = framing_features(response, read_fields=("event",))
    return _Reading(features, sends_after(response, ("message_stop",)))


def _input_json(value: Any) -> str:
    """AN-C4: a tool block with no non-empty partial_json has the start's input as its
    arguments, as JSON text; none at all is no arguments."""
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _error_code(error: Any) -> str:
    """AN-H2: the code of an ``error`` event, read as an HTTP error of the status its
    ``error.type`` stands for; a body of another shape is still a SERVER failure."""
    if not isinstance(error, dict):
        return SERVER
    status = STATUS_OF_ERROR_TYPE.get(text(error.get("type")))
    return SERVER if status is None else classify_status(status, error_object_detail(error))
