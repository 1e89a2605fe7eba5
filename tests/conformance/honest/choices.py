"""The deliberate, lossless choices real libraries make, each as one piece of the reference.

A choice swaps or adds the smallest piece that holds it: a translator (payloads → events)
layered over the reference's, the attempt (the httpx shell), or a rewrite of each event the
adapter yields, and the capabilities its hello declares. Choices compose: translators and
attempts by inheritance (each calls ``super()``), rewrites one after another.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from typing_extensions import override

from conformance import codes
from conformance.adapters.mutants.translators import EmptyStopSucceeds
from conformance.adapters.reference.shell import AttemptStream
from conformance.adapters.reference.translate import StreamTranslator
from conformance.events import (
    BlockEnd,
    BlockStart,
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    Thrown,
    ToolCallDelta,
)

# A rewrite of one event the adapter yields: the events it becomes (none to drop it).
Rewrite = Callable[[Event], Sequence[Event]]

NO_ARGUMENTS = "{}"


class EmptyArgumentsAsObject(StreamTranslator):
    """``arguments or "{}"``: a call streamed with no arguments is handed over as ``{}``, the
    empty object its tool is called with either way. The ``{}`` goes out as a last delta, so
    that the block still holds what its deltas said."""

    @override
    def _close(self) -> list[Event]:
        filled: list[Event] = []
        for index, block in enumerate(self._blocks):
            if block.kind == "tool-call" and not "".join(block.fragments):
                block.fragments.append(NO_ARGUMENTS)
                filled.append(
                    ToolCallDelta(
                        index=index, id=block.call_id, name=block.name, arguments_delta=NO_ARGUMENTS
                    )
                )
        return [*filled, *super()._close()]


class NoFinishReason(StreamTranslator):
    """A library whose answer carries no finish reason (a bare message, a list of items):
    its caller runs the tools when calls came back and takes the answer as complete
    otherwise. So a success is ``tool-calls`` exactly when a call was handed over, ``stop``
    else (a ``tool_calls`` reason with no call streamed included). A truncation
    (``max-tokens``) and a refusal still surface: they are not a finish *reason* but an
    incomplete answer, which such libraries flag."""

    @override
    def _resolved_finish(self) -> Finish:
        finish = super()._resolved_finish()
        if finish.reason not in ("stop", "tool-calls"):
            return finish
        called = any(block.kind == "tool-call" for block in self._blocks)
        return Finish(reason="tool-calls" if called else "stop")


class FinishWithoutDoneComplete(StreamTranslator):
    """A body that ends after its finish reason, without ``[DONE]``, is a complete answer:
    the finish said so (most SDKs stop at the finish chunk)."""

    @override
    def eof(self) -> list[Event]:
        if self.finish_arrived and not self.finished:
            return self._close()
        return super().eof()


class SyntheticCallId(StreamTranslator):
    """A call that never got an id is handed over with a unique one of the library's making,
    as many do (``call_<uuid>``), rather than refused. A call without a name is still
    refused: a name cannot be made up."""

    @override
    def _close(self) -> list[Event]:
        for block in self._blocks:
            if block.kind == "tool-call" and block.call_id is None and block.name is not None:
                block.call_id = f"call_{uuid.uuid4().hex}"
        return super()._close()


class ResetAfterFinishAsClose(AttemptStream):
    """A connection reset once the finish reason arrived reads as the end of the body, as
    a client that cannot tell a reset from a close reads it: the body's end decides, not
    a TRANSPORT failure."""

    @override
    def _fail(self, code: str, message: str) -> None:
        if code == codes.TRANSPORT and self._reader.finish_arrived:
            return  # the reader's end reads it as a body that ended there
        super()._fail(code, message)


class StreamError(Exception):
    """The typed exception a library raises, carrying the canonical code."""


def raised_with_code(event: Event) -> Sequence[Event]:
    """An error finish raised as a typed exception with the same code (usage, reported
    before it, stays: the exception carries it)."""
    if isinstance(event, Finish) and event.reason == "error":
        assert event.code is not None  # an error finish always has one
        message = f"{StreamError.__name__}[{event.code}]: {event.message or event.code}"
        return (Thrown(message=message, code=event.code),)
    return (event,)


_DELTAS = (BlockStart, TextDelta, ReasoningDelta, ToolCallDelta)


def assembled_only(event: Event) -> Sequence[Event]:
    """No deltas: each block handed over whole once the answer is complete, as a
    ``block-start`` and its ``block-end``; a failed attempt's unfinished blocks not at all."""
    if isinstance(event, _DELTAS):
        return ()
    if isinstance(event, BlockEnd):
        return (BlockStart(index=event.index, block_type=event.block.type), event)
    return (event,)


@dataclass(frozen=True)
class Choice:
    """One deliberate choice: the pieces of the reference it takes the place of."""

    name: str
    choice: str  # one line: what the library does
    translator: type[StreamTranslator] | None = None  # layered over the reference's
    attempt: type[AttemptStream] | None = None
    rewrite: Rewrite | None = None
    capabilities: Mapping[str, bool] = field(default_factory=dict)


CHOICES = (
    Choice(
        "empty_arguments_as_object",
        'A no-argument call\'s "" arguments are handed over as "{}".',
        translator=EmptyArgumentsAsObject,
    ),
    Choice(
        "raises_with_code",
        "Failures are raised as typed exceptions carrying the canonical code.",
        rewrite=raised_with_code,
    ),
    Choice(
        "no_finish_reason",
        "No finish reason is exposed: tool-calls when calls came back, else stop.",
        translator=NoFinishReason,
    ),
    Choice(
        "reset_after_finish_as_close",
        "A reset after the finish reason is read as the body's clean end.",
        attempt=ResetAfterFinishAsClose,
    ),
    Choice(
        "assembled_only",
        "Blocks are handed over assembled (block-start + block-end), no deltas.",
        rewrite=assembled_only,
        capabilities={"deltas": False},
    ),
    Choice(
        "empty_stop_accepted",
        "A stop with no content is an empty, successful answer (no EMPTY_RESPONSE).",
        translator=EmptyStopSucceeds,
    ),
    Choice(
        "synthetic_call_id",
        "A call that never got an id gets a unique synthetic one instead of a refusal.",
        translator=SyntheticCallId,
    ),
    Choice(
        "finish_without_done_complete",
        "A body that ends after its finish reason without [DONE] is complete.",
        translator=FinishWithoutDoneComplete,
    ),
)
