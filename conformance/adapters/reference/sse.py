"""Incremental `text/event-stream` decoding (WHATWG HTML, "Server-sent events"), bytes in.

Each dispatched event keeps its `data` and its `event` name: a chat-completions client reads
the data only, an Anthropic Messages one needs the name too (a `ping` may have empty data).
`id`, `retry` and unknown fields are parsed and dropped. The decoder is independent of how the
body is split into reads.
"""

import codecs
import re
from dataclasses import dataclass
from typing import ClassVar

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event: its data lines joined by LF, and its `event` field if it had one."""

    data: str
    name: str | None = None


class SSEDecoder:
    """Feed body bytes, get each dispatched event (`SSEEvent`), in order."""

    _line_end: ClassVar[re.Pattern[str]] = _LINE_END  # class-level so a variant can narrow it

    def __init__(self) -> None:
        # utf-8-sig drops one leading BOM even when it is split across reads; invalid bytes
        # become U+FFFD instead of failing the stream, as a browser's decoder does.
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._partial_line = ""
        self._after_cr = False  # a CR ended the last line; an LF right after it is the same break
        self._data_lines: list[str] = []
        self._name: str | None = None  # the pending event's `event` field, the last one wins
        self._truncated = False

    @property
    def truncated(self) -> bool:
        """After close(): the body ended inside a line or inside an event (no blank line yet).

        Such a tail is never dispatched, so e.g. a final `data: [DONE]` without its blank line
        does not count as `[DONE]`.
        """
        return self._truncated

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Decode one read of the body; return the events it completed."""
        return self._consume(self._decoder.decode(data))

    def close(self) -> list[SSEEvent]:
        """End of body. An unterminated event is discarded (WHATWG), so this always returns [];
        it returns a list so that callers can treat it like a final feed()."""
        tail = self._decoder.decode(b"", final=True)  # only U+FFFD for a cut-off character
        self._truncated = bool(self._partial_line or tail or self._data_lines)
        self._partial_line = ""
        self._data_lines = []
        self._name = None
        return []

    def _consume(self, text: str) -> list[SSEEvent]:
        if not text:
            return []  # e.g. the first bytes of a split character: nothing decoded yet
        if self._after_cr and text.startswith("\n"):
            text = text[1:]
        if text and "\n" not in text and "\r" not in text:
            # No line end (they are made of CR and LF): the line goes on. A body split into
            # one-byte reads takes this path for nearly every read.
            self._partial_line += text
            self._after_cr = False
            return []
        buffer = self._partial_line + text
        payloads: list[SSEEvent] = []
        start = 0
        for line_end in self._line_end.finditer(buffer):
            payload = self._take_line(buffer[start : line_end.start()])
            if payload is not None:
                payloads.append(payload)
            start = line_end.end()
        # A CR that ends this read may be the first half of a CRLF split across reads.
        self._after_cr = buffer.endswith("\r")
        self._partial_line = buffer[start:]
        return payloads

    def _take_line(self, line: str) -> SSEEvent | None:
        """Process one complete line; return the event when the line dispatches one."""
        if not line:
            name, self._name = self._name, None  # a name without data goes with its event
            if not self._data_lines:
                return None  # an event with no data (only comments, ids, ...) dispatches nothing
            event = SSEEvent("\n".join(self._data_lines), name)
            self._data_lines = []
            return event
        if line.startswith(":"):
            return None  # comment, e.g. a keep-alive
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data_lines.append(value)
        elif field == "event":
            self._name = value
        return None
