"""Single-defect adapters the mutants do not already provide: the reference adapter with
one realistic bug, each owned by one invariant (``--adapter single_defect:NAME``).

The mutants' bugs are caught in cases that complete; these send events with a field that
fails validation, or read lone CRs wrong, which real clients do too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from typing_extensions import override

from conformance.adapters.mutants.core import Emitted, Mutant, MutantAdapter
from conformance.adapters.reference.sse import SSEDecoder, SSEEvent
from conformance.events import BlockEnd, Event, Finish, ToolCallBlock, ToolCallDelta
from conformance.options import RunOptions


class LoneCrIsNoLineEnd(SSEDecoder):
    """`split("\\n")` then `rstrip("\\r")`: LF and CRLF streams read, CR-only ones never
    dispatch."""

    _line_end = re.compile(r"\r?\n")

    @override
    def _consume(self, text: str) -> list[SSEEvent]:
        payloads = super()._consume(text)
        self._after_cr = False  # a CR is only half of a line end: nothing to skip after it
        return payloads


def ids_as_numbers(event: Event) -> Sequence[Emitted]:
    """A tool call's id handed over as the number it looks like (`call_0` → 0)."""
    if isinstance(event, ToolCallDelta) and event.id:
        return ({**event.model_dump(exclude_none=True), "id": len(event.id)},)
    return (event,)


def arguments_as_objects(event: Event) -> Sequence[Emitted]:
    """A finished call's arguments handed over parsed, as an object."""
    if isinstance(event, BlockEnd) and isinstance(event.block, ToolCallBlock):
        try:
            parsed = json.loads(event.block.arguments)
        except ValueError:
            return (event,)
        dumped = event.model_dump(exclude_none=True)
        return ({**dumped, "block": {**dumped["block"], "arguments": parsed}},)
    return (event,)


def error_codes_emptied(event: Event) -> Sequence[Emitted]:
    """A failure finished with an empty code."""
    if isinstance(event, Finish) and event.reason == "error":
        return ({**event.model_dump(exclude_none=True), "code": ""},)
    return (event,)


DEFECTS = {
    "lone_cr_no_line_end": Mutant(
        "lone_cr_no_line_end", "A lone CR is no line end.", ("S1",), decoder=LoneCrIsNoLineEnd
    ),
    "numeric_id": Mutant(
        "numeric_id", ids_as_numbers.__doc__ or "", ("T1",), rewrite=ids_as_numbers
    ),
    "object_arguments": Mutant(
        "object_arguments",
        arguments_as_objects.__doc__ or "",
        ("C3",),
        rewrite=arguments_as_objects,
    ),
    "empty_error_code": Mutant(
        "empty_error_code", error_codes_emptied.__doc__ or "", ("C5",), rewrite=error_codes_emptied
    ),
}


def __getattr__(name: str) -> Callable[[RunOptions], MutantAdapter]:
    """``single_defect:<name>``: the factory of the adapter with that defect."""
    if name not in DEFECTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return DEFECTS[name].factory
