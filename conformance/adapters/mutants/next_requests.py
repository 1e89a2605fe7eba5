"""Mutants of the next request the reference builds for a two-turn case.

Each is the reference's own builder (``reference.next_request``) handed the assembled
blocks with one realistic loss: the stream was read right, the history sent back is not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from conformance.adapters.reference.next_request import next_request
from conformance.events import (
    Block,
    FollowUpTurn,
    ProtocolDialect,
    ReasoningBlock,
    ToolCallBlock,
)

_B = TypeVar("_B", ReasoningBlock, ToolCallBlock)


def _each(blocks: Sequence[Block], kind: type[_B], change: Callable[[_B], _B]) -> list[Block]:
    """``blocks`` with every one of ``kind`` changed: one loss, the rest as assembled."""
    return [change(block) if isinstance(block, kind) else block for block in blocks]


def signature_dropped_on_replay(
    dialect: ProtocolDialect, request: dict[str, Any], blocks: Sequence[Block], turn: FollowUpTurn
) -> dict[str, Any]:
    """Thinking blocks go back without their signature (re-serialised history, B1/B2/B8)."""
    unsigned = _each(blocks, ReasoningBlock, lambda b: b.model_copy(update={"signature": None}))
    return next_request(dialect, request, unsigned, turn)


def item_id_as_call_id(
    dialect: ProtocolDialect, request: dict[str, Any], blocks: Sequence[Block], turn: FollowUpTurn
) -> dict[str, Any]:
    """A Responses call is echoed under its item id (fc_…) for its call_id (G17, G18)."""
    echoed = _each(
        blocks,
        ToolCallBlock,
        lambda b: b if b.item_id is None else b.model_copy(update={"id": b.item_id}),
    )
    return next_request(dialect, request, echoed, turn)


def encrypted_content_dropped_on_replay(
    dialect: ProtocolDialect, request: dict[str, Any], blocks: Sequence[Block], turn: FollowUpTurn
) -> dict[str, Any]:
    """Reasoning items go back by id alone, their encrypted_content left out (G24, G25)."""
    bare = _each(blocks, ReasoningBlock, lambda b: b.model_copy(update={"encrypted_content": None}))
    return next_request(dialect, request, bare, turn)


def calls_replayed_twice(
    dialect: ProtocolDialect, request: dict[str, Any], blocks: Sequence[Block], turn: FollowUpTurn
) -> dict[str, Any]:
    """Each tool call is in the replayed turn twice, as a content block and as a call (A18)."""
    # The results still answer each call once: they pair with the first of its copies.
    doubled = [*blocks, *(block for block in blocks if isinstance(block, ToolCallBlock))]
    return next_request(dialect, request, doubled, turn)
