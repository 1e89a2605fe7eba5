"""What every dialect's translator shares (sans-IO): the blocks an attempt opened, in opening
order, the usage billed so far, and exactly one finish.

A dialect's translator reads its wire and calls `_open`, `_succeed` and `_fail`; the order of
the events they emit (block-ends, then usage, then the finish; usage before a failure too) and
the rule that a call without an identity is never closed live here once, for every wire.
"""

from dataclasses import dataclass, field

from conformance import codes
from conformance.events import (
    Block,
    BlockEnd,
    BlockStart,
    BlockType,
    Event,
    Finish,
    ReasoningBlock,
    ServerToolBlock,
    TextBlock,
    ToolCallBlock,
    Usage,
)


@dataclass
class OpenBlock:
    """A block opened in this attempt: its fragments so far and, for a call, its identity."""

    kind: BlockType
    fragments: list[str] = field(default_factory=list)
    call_id: str | None = None
    name: str | None = None
    # Reasoning continuity tokens (Anthropic signature and redacted data, Responses
    # encrypted_content): kept verbatim, never made up.
    signature: str | None = None
    redacted: str | None = None
    encrypted_content: str | None = None
    item_id: str | None = None  # Responses: the output item's own id, beside a call's call_id

    @property
    def unidentified(self) -> list[str]:
        """What a call block still lacks of its identity ("id", "name"); [] for other kinds."""
        if self.kind not in ("tool-call", "server-tool"):
            return []
        # None only: a translator maps what its wire sends for "no identity" to None, and a
        # variant that keeps "" closes the call with it (what T6 must see).
        return [
            label for label, value in (("id", self.call_id), ("name", self.name)) if value is None
        ]

    def assembled(self) -> Block:
        joined = "".join(self.fragments)
        if self.kind == "text":
            return TextBlock(text=joined)
        if self.kind == "reasoning":
            return ReasoningBlock(
                text=joined,
                signature=self.signature,
                redacted=self.redacted,
                encrypted_content=self.encrypted_content,
                item_id=self.item_id,
            )
        # Only called once identity is complete (checked before any block-end).
        assert self.call_id is not None and self.name is not None
        if self.kind == "server-tool":
            return ServerToolBlock(id=self.call_id, name=self.name, arguments=joined)
        return ToolCallBlock(
            id=self.call_id, name=self.name, arguments=joined, item_id=self.item_id
        )


class BlockTranslator:
    """The bookkeeping of one attempt's translation; a dialect's translator derives from it.

    `finished` turns true with the one finish; every call after it returns [].
    """

    # How the translator's wire names its end, for failure messages ("[DONE]", "message_stop").
    end_name = "the end"

    def __init__(self) -> None:
        self._blocks: list[OpenBlock] = []  # position == event index, in opening order
        self._pending_usage: Usage | None = None
        self._finished = False

    @property
    def finished(self) -> bool:
        """A finish was emitted; the caller should stop reading the body."""
        return self._finished

    def failure(self, code: str, message: str) -> list[Event]:
        """The attempt failed outside the payloads (transport error, timeout, abort)."""
        return self._fail(code, message)

    def _open(self, block: OpenBlock, events: list[Event]) -> int:
        index = len(self._blocks)
        self._blocks.append(block)
        events.append(BlockStart(index=index, block_type=block.kind))
        return index

    def _succeed(self, finish: Finish) -> list[Event]:
        """The response is complete: every block's end, the usage, then `finish`; or, while a
        call lacks its identity, the usage and a MALFORMED_TOOL_CALL failure instead."""
        self._finished = True
        usage: list[Event] = [] if self._pending_usage is None else [self._pending_usage]
        unidentified = self._first_unidentified_call()
        if unidentified is not None:
            # No block-end at all: closing the other blocks would still report a success-shaped
            # response, and the usage stays visible because it is yielded, not thrown (T5).
            return [*usage, error_finish(codes.MALFORMED_TOOL_CALL, unidentified)]
        block_ends: list[Event] = [
            BlockEnd(index=index, block=block.assembled())
            for index, block in enumerate(self._blocks)
        ]
        return [*block_ends, *usage, finish]

    def _mapped_finish(self, mapped: str | None, code: str, reason: str) -> Finish:
        """The finish of a wire reason: ``mapped`` to a success (stop, tool-calls,
        max-tokens), or None for one that ends the turn as a failure with ``code``. A stop
        with no content is EMPTY_RESPONSE (E1)."""
        if mapped == "stop" and not self._has_content():
            message = "model returned a completed response with no content"
            return error_finish(codes.EMPTY_RESPONSE, message)
        if mapped in ("stop", "tool-calls", "max-tokens"):
            return Finish.model_validate({"reason": mapped})
        return error_finish(code, f"model stopped: {reason}")

    def _has_content(self) -> bool:
        """Whether a stop has content (E1): any block at all, reasoning-only and
        whitespace-only text included (E2, E3), a tool call (E5), a signature or redacted
        block."""
        return bool(self._blocks)

    def _first_unidentified_call(self) -> str | None:
        for index, block in enumerate(self._blocks):
            missing = " or ".join(block.unidentified)
            if missing:
                return f"tool call at index {index} has no {missing} at {self.end_name}"
        return None

    def _fail(self, code: str, message: str) -> list[Event]:
        if self._finished:
            return []
        self._finished = True
        # A usage the wire already sent is billed whatever happens next: it is reported
        # before the failure, as at a success (R9), not lost with the attempt.
        usage: list[Event] = [] if self._pending_usage is None else [self._pending_usage]
        # Open blocks stay open: an error finish may leave them (G6), and closing them would
        # present partial output as complete.
        if code == codes.ABORTED:
            return [*usage, Finish(reason="aborted", code=code, message=message)]
        return [*usage, error_finish(code, message)]


def error_finish(code: str, message: str) -> Finish:
    """The finish of a failed attempt."""
    return Finish(reason="error", code=code, message=message)
