"""Anthropic Messages translator mutants: `AnthropicTranslator` with one rule overridden.

Each class overrides the smallest method of the reference translator that holds the rule it
breaks, and says in its docstring which real-world code it imitates (reference dialects.md
§2.10 and §4).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from typing_extensions import override

from conformance.adapters.reference.anthropic import USAGE_COUNTERS, AnthropicTranslator, WireBlock
from conformance.adapters.reference.blocks import OpenBlock
from conformance.adapters.reference.payload import count
from conformance.adapters.reference.sse import SSEEvent
from conformance.events import BlockType, Event, Finish

# --- AN-G: which block an event belongs to ----------------------------------------------


class DeltaToLastBlock(AnthropicTranslator):
    """`content.at(index) ?? content.at(-1)`: a delta or stop for an index never started
    lands in the block opened last (LiteLLM's latest-tool routing, the TS SDK's `.at(-1)`)."""

    @override
    def _block_for(self, index: int, event: str) -> WireBlock:
        if index not in self._wire and self._wire:
            return list(self._wire.values())[-1]
        return super()._block_for(index, event)


class RestartReroutes(AnthropicTranslator):
    """A `content_block_start` for a used index opens another block there: the first is left
    as it stood and the index's later deltas go to the new one (both SDKs append a repeated
    start, ignoring its index, and route deltas by it, reference §2.10)."""

    @override
    def _restart(self, index: int, wire_type: str, content: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        self._wire[index] = self._start(wire_type, content, events)
        return events


class TextIntoToolBlock(AnthropicTranslator):
    """Every `text_delta` is appended to its block, whatever the block is (LiteLLM passes
    it through as text)."""

    @override
    def _fits(self, delta_type: str, wire: WireBlock) -> bool:
        return delta_type == "text_delta" or super()._fits(delta_type, wire)


class UnknownBlockShifts(AnthropicTranslator):
    """A block of a type it does not know becomes an empty text block: every later block's
    index moves by one (a client that numbers blocks by wire position)."""

    @override
    def _start(self, wire_type: str, content: dict[str, Any], events: list[Event]) -> WireBlock:
        wire = super()._start(wire_type, content, events)
        if wire.kind is None:
            self._show(wire, OpenBlock("text"), events)
        return wire


class ReadsPastMessageStop(AnthropicTranslator):
    """`message_stop` is noted and the body read to its end: what follows it is applied
    (both SDKs accumulate events after it)."""

    _stop_seen = False

    @override
    def _message_stop(self, document: dict[str, Any]) -> list[Event]:
        self._stop_seen = True
        return []

    @override
    def eof(self) -> list[Event]:
        if self._stop_seen and not self.finished:
            return super()._message_stop({"type": "message_stop"})
        return super().eof()


class TruncatedCallCallable(AnthropicTranslator):
    """`max_tokens` with a tool block never stopped is read as the turn's tool call: the
    truncated call is handed over to run (finish tool-calls)."""

    @override
    def _resolved_finish(self) -> Finish:
        truncated = any(
            wire.kind == "tool-call" and not wire.stopped for wire in self._wire.values()
        )
        if self._stop_reason == "max_tokens" and truncated:
            return Finish(reason="tool-calls")
        return super()._resolved_finish()


# --- AN-C: what a block holds ----------------------------------------------------------------


class UsageSummed(AnthropicTranslator):
    """Each usage is added to the last: `message_delta`'s cumulative counts are counted
    twice with `message_start`'s (reference §4.D)."""

    @override
    def _read_usage(self, usage: object, *, start: bool) -> None:
        before = replace(self._counters)
        super()._read_usage(usage, start=start)
        if start or not isinstance(usage, dict):
            return
        for wire_key, attribute in USAGE_COUNTERS.items():
            earlier = getattr(before, attribute)
            if count(usage, wire_key) is not None and earlier is not None:
                setattr(self._counters, attribute, earlier + getattr(self._counters, attribute))
        self._pending_usage = self._usage()


class SignatureDropped(AnthropicTranslator):
    """`signature_delta` is not read: the thinking block goes back without its signature and
    the next turn is refused (reference §4.B)."""

    @override
    def _sign(self, wire: WireBlock, signature: object, events: list[Event]) -> None:
        return None


class RedactedDropped(AnthropicTranslator):
    """`redacted_thinking` is an unknown block type, skipped (older LiteLLM, reference §4.B)."""

    @override
    def _kind_of(self, wire_type: str) -> BlockType | None:
        return None if wire_type == "redacted_thinking" else super()._kind_of(wire_type)


class EmptyPartialJsonResets(AnthropicTranslator):
    """A call whose `partial_json` deltas are all `""` has arguments `{}`, even when its start
    carried an input (the TS SDK's `withLazyInput`, reference §2.10)."""

    @override
    def _arguments_of(self, wire: WireBlock) -> str:
        if wire.deltas and not "".join(wire.deltas):
            return "{}"
        return super()._arguments_of(wire)


class PauseTurnAsStop(AnthropicTranslator):
    """`pause_turn` ends the turn as a plain stop: the caller never continues it."""

    @override
    def _resolved_finish(self) -> Finish:
        if self._stop_reason == "pause_turn":
            return Finish(reason="stop")
        return super()._resolved_finish()


class RefusalAsStop(AnthropicTranslator):
    """`refusal` is a plain stop: the caller sees a completed, possibly blank answer."""

    @override
    def _resolved_finish(self) -> Finish:
        if self._stop_reason == "refusal":
            return Finish(reason="stop")
        return super()._resolved_finish()


# --- AN-T, AN-H, AN-S -------------------------------------------------------------------------


class ServerToolAsClientCall(AnthropicTranslator):
    """`server_tool_use` is read as `tool_use`: the caller is handed a provider-run tool to
    execute itself (reference §4.B13)."""

    @override
    def _kind_of(self, wire_type: str) -> BlockType | None:
        return "tool-call" if wire_type == "server_tool_use" else super()._kind_of(wire_type)


class ErrorEventAsTruncatedSuccess(AnthropicTranslator):
    """`event: error` ends the stream as if it were complete: what arrived is the answer
    (the Python SDK's snapshot, reference §2.10 and §4.E)."""

    @override
    def _error(self, document: dict[str, Any]) -> list[Event]:
        return self._message_stop(document)


class TruncatedAsComplete(AnthropicTranslator):
    """A body that ends before `message_stop` is the message so far: the Python SDK hands
    the cut snapshot over as complete (reference §2.10)."""

    @override
    def eof(self) -> list[Event]:
        return self._message_stop({"type": "message_stop"})


class DataOnlyEventsDropped(AnthropicTranslator):
    """Events are dispatched by their `event:` name: one without an event line is dropped
    (both official SDKs, reference §2.10)."""

    @override
    def receive(self, event: SSEEvent) -> list[Event]:
        if event.name is None:
            return []
        return super().receive(event)
