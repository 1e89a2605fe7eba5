"""Translator mutants: `StreamTranslator` with one rule overridden.

Each class overrides the smallest method of the reference translator that holds the rule
it breaks, and says in its docstring which real-world code it imitates.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from typing_extensions import override

from conformance import codes
from conformance.adapters.reference.blocks import OpenBlock
from conformance.adapters.reference.chunk import ChoicePart, ToolCallPart, WireChunk
from conformance.adapters.reference.failure import Failure
from conformance.adapters.reference.translate import DONE_SENTINEL, StreamTranslator
from conformance.events import BlockEnd, BlockStart, Event, Finish

# --- reading the raw chunk --------------------------------------------------------------


def _with_raw_deltas(
    chunk: WireChunk, document: Any, rewrite: Callable[[ChoicePart, dict[str, Any]], ChoicePart]
) -> WireChunk:
    """Rewrite each choice with its raw wire `delta` beside it.

    Only called after the reference read the document, so its shape is already checked.
    """
    deltas = [choice.get("delta") or {} for choice in document.get("choices") or ()]
    choices = [rewrite(c, d) for c, d in zip(chunk.choices, deltas, strict=True)]
    return replace(chunk, choices=choices)


def _defined(holder: dict[str, Any], key: str, parsed: str | None) -> str | None:
    """The pre-fix harness reading: any value that is present counts, "" and null too."""
    if key not in holder:
        return None
    return parsed or ""


def _any_defined_identity(choice: ChoicePart, delta: dict[str, Any]) -> ChoicePart:
    entries = delta.get("tool_calls") or ()
    parts = [
        replace(
            part,
            call_id=_defined(entry, "id", part.call_id),
            name=_defined(entry.get("function") or {}, "name", part.name),
        )
        for part, entry in zip(choice.tool_calls, entries, strict=True)
    ]
    return replace(choice, tool_calls=parts)


# --- T: tool-call identity ----------------------------------------------------------------


def _assign_identity(
    block: OpenBlock, part: ToolCallPart, combine: Callable[[str | None, str], str]
) -> None:
    """Every id or name the part carries updates the block (the reference sets them once)."""
    if part.call_id is not None:
        block.call_id = combine(block.call_id, part.call_id)
    if part.name is not None:
        block.name = combine(block.name, part.name)


class IdentityOnAnyDefinedValue(StreamTranslator):
    """`if "id" in entry: call.id = entry["id"] or ""`: the harness before the identity note.

    A continuation's `""` or `null` overwrites the established id and name.
    """

    @override
    def _read_chunk(self, document: Any) -> WireChunk:
        return _with_raw_deltas(super()._read_chunk(document), document, _any_defined_identity)

    @override
    def _accept_identity(self, block: OpenBlock, part: ToolCallPart) -> None:
        _assign_identity(block, part, lambda _, value: value)


class IdentityConcatenated(StreamTranslator):
    """Identity accumulated like arguments: `call.name += delta.name`."""

    @override
    def _accept_identity(self, block: OpenBlock, part: ToolCallPart) -> None:
        _assign_identity(block, part, lambda current, value: (current or "") + value)


class ArgumentsToLastCall(StreamTranslator):
    """A delta without an id continues the most recently opened call, whatever its index."""

    @override
    def _tool_index(self, part: ToolCallPart, events: list[Event]) -> int:
        if part.call_id is None and self._tool_indexes:
            return max(self._tool_indexes.values())
        return super()._tool_index(part, events)


class LateIdentityRefused(StreamTranslator):
    """Identity is read from the delta that opens the call only; later ones are ignored."""

    @override
    def _accept_identity(self, block: OpenBlock, part: ToolCallPart) -> None:
        if not block.fragments:  # no arguments appended yet: this is the opening delta
            super()._accept_identity(block, part)


class IdentityFromLastDelta(StreamTranslator):
    """`call.id = delta.id or ""`: each delta's identity replaces the call's, absent or not,
    so a canonical stream (continuations without id or name) closes the call with "" ids."""

    @override
    def _accept_identity(self, block: OpenBlock, part: ToolCallPart) -> None:
        block.call_id = part.call_id or ""
        block.name = part.name or ""


class UnidentifiedClosedEmpty(StreamTranslator):
    """A call still missing its id or name at [DONE] is closed with "" (harness HEAD)."""

    @override
    def _close(self) -> list[Event]:
        for block in self._blocks:
            if block.kind == "tool-call":
                block.call_id = block.call_id or ""
                block.name = block.name or ""
        return super()._close()


# --- E: empty completions -------------------------------------------------------------


class EmptyStopSucceeds(StreamTranslator):
    """No emptiness check: a stop with nothing in it is a successful, blank reply."""

    @override
    def _has_content(self) -> bool:
        return True


class ReasoningIsNotContent(StreamTranslator):
    """Only text and tool calls count, so a reasoning-only answer is EMPTY_RESPONSE."""

    @override
    def _has_content(self) -> bool:
        return any(block.kind != "reasoning" for block in self._blocks)


class WhitespaceIsEmpty(StreamTranslator):
    """Emptiness judged on stripped text: `if not text.strip()`."""

    @override
    def _has_content(self) -> bool:
        return any(
            block.kind == "tool-call" or "".join(block.fragments).strip() for block in self._blocks
        )


class ToolCallIsNotContent(StreamTranslator):
    """Only text and reasoning count, so a stop carrying a tool call is EMPTY_RESPONSE."""

    @override
    def _has_content(self) -> bool:
        return any(block.kind != "tool-call" for block in self._blocks)


class EmptyLengthIsEmptyResponse(StreamTranslator):
    """Emptiness checked for every finish, so `length` with no blocks is EMPTY_RESPONSE."""

    @override
    def _resolved_finish(self) -> Finish:
        if self._pending_reason == "length" and not self._has_content():
            return Finish(reason="error", code=codes.EMPTY_RESPONSE, message="no content")
        return super()._resolved_finish()


# --- C: content, usage, finish ------------------------------------------------------------


class NullContentAsNone(StreamTranslator):
    """`str(delta.get("content", ""))`: a `null` content becomes the text "None"."""

    @override
    def _read_chunk(self, document: Any) -> WireChunk:
        return _with_raw_deltas(
            super()._read_chunk(document),
            document,
            lambda choice, delta: replace(choice, content=str(delta.get("content", ""))),
        )


class ReasoningAsText(StreamTranslator):
    """`reasoning_content` streamed into the answer text."""

    @override
    def _read_chunk(self, document: Any) -> WireChunk:
        chunk = super()._read_chunk(document)
        choices = [
            replace(choice, reasoning="", content=choice.reasoning + choice.content)
            for choice in chunk.choices
        ]
        return replace(chunk, choices=choices)


class ArgumentsReserialised(StreamTranslator):
    """Arguments parsed and re-serialised at [DONE], compactly as `JSON.stringify` does."""

    @override
    def _close(self) -> list[Event]:
        for block in self._blocks:
            if block.kind == "tool-call":
                try:
                    parsed = json.loads("".join(block.fragments))
                except ValueError:
                    continue  # invalid JSON is left alone
                block.fragments = [json.dumps(parsed, separators=(",", ":"))]
        return super()._close()


class FirstUsageWins(StreamTranslator):
    """The first usage object is kept; later, final counts are dropped."""

    @override
    def _read_chunk(self, document: Any) -> WireChunk:
        chunk = super()._read_chunk(document)
        return chunk if self._pending_usage is None else replace(chunk, usage=None)


class CachedTokensInInput(StreamTranslator):
    """`input_tokens = prompt_tokens`: cached prompt tokens are counted twice."""

    @override
    def _read_chunk(self, document: Any) -> WireChunk:
        chunk = super()._read_chunk(document)
        usage = chunk.usage
        if usage is None:
            return chunk
        total = usage.input_tokens + (usage.cache_read_tokens or 0)
        return replace(chunk, usage=usage.model_copy(update={"input_tokens": total}))


class LengthAsStop(StreamTranslator):
    """`length` mapped to `stop`: a truncated answer passes for a complete one."""

    @override
    def _resolved_finish(self) -> Finish:
        if self._pending_reason == "length":
            return Finish(reason="stop")
        return super()._resolved_finish()


# --- S: what is read, and when the stream is over -----------------------------------------


class ReadsPastDone(StreamTranslator):
    """`if data == "[DONE]": continue`: the sentinel is skipped and the body read to its end."""

    _done_seen = False

    @override
    def feed(self, payload: str) -> list[Event]:
        if payload == DONE_SENTINEL:
            self._done_seen = True
            return []
        return super().feed(payload)

    @override
    def eof(self) -> list[Event]:
        if self._done_seen and not self.finished:
            return self._close()
        return super().eof()


class EofIsDone(StreamTranslator):
    """The end of the body is taken as the end of the response, [DONE] or not."""

    @override
    def eof(self) -> list[Event]:
        return [] if self.finished else self._close()


class MalformedPayloadSkipped(StreamTranslator):
    """A payload that does not parse is logged and skipped, not a failure."""

    @override
    def _fail(self, code: str, message: str) -> list[Event]:
        if code == codes.MALFORMED_RESPONSE:
            return []
        return super()._fail(code, message)


class ProviderErrorIgnored(StreamTranslator):
    """An `{"error": ...}` payload is read as a chunk without choices (harness HEAD)."""

    @override
    def _provider_error(self, document: Any) -> Failure | None:
        return None


# --- G: the event grammar, as the translator emits it ----------------------------------------


class UsageTwice(StreamTranslator):
    """Usage yielded as soon as it arrives, and again before the finish."""

    @override
    def _apply(self, chunk: WireChunk) -> list[Event]:
        events = super()._apply(chunk)
        return events if chunk.usage is None else [*events, chunk.usage]


class DeltaBeforeBlockStart(StreamTranslator):
    """The block-start is announced after the delta that opened the block."""

    @override
    def _apply(self, chunk: WireChunk) -> list[Event]:
        events = super()._apply(chunk)
        position = 0
        while position < len(events) - 1:
            if isinstance(events[position], BlockStart):
                # `_open` always appends the start right before the delta that opened it.
                events[position], events[position + 1] = events[position + 1], events[position]
                position += 1
            position += 1
        return events


class FinishBeforeBlockEnds(StreamTranslator):
    """The finish goes out first, and a consumer stops reading there: no block-end arrives."""

    @override
    def _close(self) -> list[Event]:
        return sorted(super()._close(), key=lambda event: isinstance(event, BlockEnd))


class BlockEndLastFragment(StreamTranslator):
    """`block.text = delta.text` instead of `+=`: a block ends as its last fragment."""

    @override
    def _close(self) -> list[Event]:
        for block in self._blocks:
            block.fragments = block.fragments[-1:]
        return super()._close()
