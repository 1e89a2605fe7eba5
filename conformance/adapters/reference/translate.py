"""Chat-completions SSE payloads -> protocol events, for one attempt (sans-IO).

The rules are the invariants of INVARIANTS.md (C, T, E, S) as the harness contract (§a.3, §a.6)
states them, with the tool-call identity note normative where the harness HEAD differs.
Deltas are emitted as they arrive; block ends, usage and the finish wait for `[DONE]`, because
only then is the response known to be complete.
"""

import json
from typing import Any

from conformance import codes
from conformance.adapters.reference.blocks import BlockTranslator, OpenBlock
from conformance.adapters.reference.chunk import (
    MalformedChunkError,
    ToolCallPart,
    WireChunk,
    read_chunk,
)
from conformance.adapters.reference.failure import Failure
from conformance.adapters.reference.http_status import classify_stream_error
from conformance.adapters.reference.sse import SSEEvent
from conformance.events import (
    BlockType,
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)

DONE_SENTINEL = "[DONE]"
_EXCERPT_CHARS = 120  # how much of a bad payload a failure message quotes


def _reject_constant(constant: str) -> Any:
    # Python's json accepts NaN and Infinity; JSON (and the harness's parser) does not.
    raise ValueError(f"{constant} is not JSON")


# The wire's finish reasons that end a turn successfully, as the caller sees them (C5).
CHAT_FINISHES = {"stop": "stop", "tool_calls": "tool-calls", "length": "max-tokens"}


class StreamTranslator(BlockTranslator):
    """Turns the `data` payloads of one attempt into protocol events.

    Feed payloads in order; call `eof()` when the body ends and `failure()` when the transport
    fails. Exactly one `finish` is ever emitted; every call after it returns [].

    Each rule a realistic bug gets wrong sits in a method of its own (`_read_chunk`,
    `_tool_index`, `_accept_identity`, `_has_content`, ...), so that the mutants of
    `conformance.adapters.mutants` can each override exactly one.
    """

    end_name = DONE_SENTINEL

    def __init__(self) -> None:
        super().__init__()
        self._text_index: int | None = None
        self._reasoning_index: int | None = None
        self._tool_indexes: dict[str, int] = {}  # wire tool-call key -> event index
        self._pending_reason: str | None = None

    @property
    def finish_arrived(self) -> bool:
        """The wire sent a finish reason: the response is known to have ended, even if the
        body goes on to end without [DONE]."""
        return self._pending_reason is not None

    def receive(self, event: SSEEvent) -> list[Event]:
        """One SSE event: a chat-completions client reads its data alone."""
        return self.feed(event.data)

    def feed(self, payload: str) -> list[Event]:
        """One SSE `data` payload."""
        if self._finished:
            return []  # nothing after [DONE] or a failure is read (S4)
        if payload == DONE_SENTINEL:
            return self._close()
        if payload.startswith(":"):
            # A keep-alive comment re-wrapped as data by a gateway (anchors I2); carries nothing.
            return []
        try:
            document = json.loads(payload, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            return self._fail(
                codes.MALFORMED_RESPONSE, f"malformed SSE payload: {payload[:_EXCERPT_CHARS]}"
            )
        failure = self._provider_error(document)
        if failure is not None:
            return self._fail(failure.code, failure.message)
        try:
            chunk = self._read_chunk(document)
        except MalformedChunkError as problem:
            return self._fail(
                codes.MALFORMED_RESPONSE,
                f"unexpected chunk shape ({problem}): {payload[:_EXCERPT_CHARS]}",
            )
        return self._apply(chunk)

    def _provider_error(self, document: Any) -> Failure | None:
        """The failure a mid-stream `{"error": ...}` payload reports (S7), or None."""
        if not _is_error_payload(document):
            return None
        return classify_stream_error(document["error"])

    def _read_chunk(self, document: Any) -> WireChunk:
        """A parsed payload's parts; raises MalformedChunkError."""
        return read_chunk(document)

    def eof(self) -> list[Event]:
        """The body ended. Without a complete `[DONE]` event the response is truncated (S5)."""
        return self._fail(codes.STREAM_CLOSED, "SSE stream ended without [DONE]")

    def _apply(self, chunk: WireChunk) -> list[Event]:
        events: list[Event] = []
        for choice in chunk.choices:  # choices merge; their own `index` is not consulted
            if choice.reasoning:
                index = self._reasoning_index
                if index is None:
                    index = self._reasoning_index = self._open_kind("reasoning", events)
                self._blocks[index].fragments.append(choice.reasoning)
                events.append(ReasoningDelta(index=index, text=choice.reasoning))
            if choice.content:
                index = self._text_index
                if index is None:
                    index = self._text_index = self._open_kind("text", events)
                self._blocks[index].fragments.append(choice.content)
                events.append(TextDelta(index=index, text=choice.content))
            for part in choice.tool_calls:
                events.append(self._apply_tool_call(part, events))
            if choice.finish_reason is not None:
                self._pending_reason = choice.finish_reason  # the last one wins
        if chunk.usage is not None:
            self._pending_usage = chunk.usage  # the last one wins
        return events

    def _apply_tool_call(self, part: ToolCallPart, events: list[Event]) -> ToolCallDelta:
        index = self._tool_index(part, events)
        block = self._blocks[index]
        self._accept_identity(block, part)
        block.fragments.append(part.arguments)
        return ToolCallDelta(
            index=index, id=block.call_id, name=block.name, arguments_delta=part.arguments
        )

    def _tool_index(self, part: ToolCallPart, events: list[Event]) -> int:
        """The block of the call `part` belongs to, by wire key; a new key opens one (T3),
        and so does another call announced at a key already in use."""
        index = self._tool_indexes.get(part.key)
        if index is None or self._starts_another_call(self._blocks[index], part):
            index = self._tool_indexes[part.key] = self._open_kind("tool-call", events)
        return index

    def _starts_another_call(self, block: OpenBlock, part: ToolCallPart) -> bool:
        # Two calls sharing an index (T7): once this call has its id and name, a part bringing
        # both a name and another id is the next call, not a conflicting repeat of this one.
        # Ollama puts every parallel call at index 0 and Gemini sends each without an index
        # (anchors C2, E2); merging them would hand over a call neither the model nor the
        # tool meant.
        return (
            block.call_id is not None
            and block.name is not None
            and part.call_id not in (None, block.call_id)
            and part.name is not None
        )

    def _accept_identity(self, block: OpenBlock, part: ToolCallPart) -> None:
        # Identity is set once and never concatenated (T1, T2, T4). A later, different
        # non-empty id without a name is ignored: the first is what earlier deltas already
        # announced (T7 leaves this open).
        if block.call_id is None:
            block.call_id = part.call_id
        if block.name is None:
            block.name = part.name

    def _open_kind(self, kind: BlockType, events: list[Event]) -> int:
        return self._open(OpenBlock(kind), events)

    def _close(self) -> list[Event]:
        return self._succeed(self._resolved_finish())

    def _resolved_finish(self) -> Finish:
        reason = self._pending_reason or "stop"
        mapped = CHAT_FINISHES.get(reason)
        return self._mapped_finish(mapped, codes.finish_reason_code(reason), reason)


def _is_error_payload(document: object) -> bool:
    """A mid-stream provider error: a non-null `error` and no choice to translate (S7).

    `choices: []` counts as none, since a gateway may wrap the error in an empty chunk
    envelope (anchors J2).
    """
    return (
        isinstance(document, dict)
        and document.get("error") is not None
        and not document.get("choices")
    )
