"""SSE decoder mutants: `SSEDecoder` with one framing rule broken."""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING

from typing_extensions import override

from conformance.adapters.reference.sse import SSEDecoder, SSEEvent

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class LineFeedOnly(SSEDecoder):
    """`body.split("\\n")`: a CR is not a line end, so CRLF and CR streams never dispatch."""

    _line_end = re.compile(r"\n")


class _EachReadDecoded(codecs.BufferedIncrementalDecoder):
    """`data.decode("utf-8", errors="replace")` on every read: nothing is kept between reads."""

    @override
    def _buffer_decode(self, input: ReadableBuffer, errors: str, final: bool) -> tuple[str, int]:
        data = bytes(input)  # all consumed: a cut-off character is replaced, not carried over
        # utf-8-sig as in the reference: only the state between reads differs.
        return data.decode("utf-8-sig", errors), len(data)


class Utf8DecodedPerRead(SSEDecoder):
    """Each network read decoded on its own: a character split across reads becomes U+FFFD."""

    def __init__(self) -> None:
        super().__init__()
        self._decoder = _EachReadDecoded(errors="replace")


class PartialLineDropped(SSEDecoder):
    """Each read parsed as whole lines: a line (an event) split across reads is lost."""

    @override
    def feed(self, data: bytes) -> list[SSEEvent]:
        payloads = super().feed(data)
        self._partial_line = ""
        return payloads


class DataNeedsSpace(SSEDecoder):
    """`if line.startswith("data: ")`: a `data:` field without its space is not data."""

    @override
    def _take_line(self, line: str) -> SSEEvent | None:
        if line.startswith("data:") and not line.startswith("data: "):
            return None
        return super()._take_line(line)
