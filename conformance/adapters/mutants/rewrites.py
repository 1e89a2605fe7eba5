"""Grammar mutants: a rewrite of each event the reference adapter yields.

Bugs in how an adapter *emits* events (rather than how it reads the wire) are simplest to
express after the fact; the retry layer of the reference would hide some of them (it stops
reading an attempt at its first finish).
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.events import (
    BlockEnd,
    BlockStart,
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)

from .core import Emitted, Rewrite

_INDEXED = (BlockStart, TextDelta, ReasoningDelta, ToolCallDelta, BlockEnd)


def repeated(kind: type[Finish] | type[BlockEnd]) -> Rewrite:
    """Every event of `kind` sent twice: once when the wire says so, once more at [DONE]."""

    def rewrite(event: Event) -> Sequence[Emitted]:
        return (event, event) if isinstance(event, kind) else (event,)

    return rewrite


def one_based_indexes(event: Event) -> Sequence[Emitted]:
    """Block indexes counted from 1 (`index = len(blocks)` after the append)."""
    if isinstance(event, _INDEXED):
        return (event.model_copy(update={"index": event.index + 1}),)
    return (event,)


def nulls_written(event: Event) -> Sequence[Emitted]:
    """Events serialised with `model_dump()`, unset optional fields as `null`."""
    return (event.model_dump(mode="json"),)
