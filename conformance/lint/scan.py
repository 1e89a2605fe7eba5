"""An event-stream body as lines and events, each with its line number and byte offset.

Sans-IO and whole-body: the lint reports positions a person can find in a hex dump or an
editor, so it scans bytes rather than decoded text. UTF-8 never puts a CR or LF byte inside
a multi-byte character, so splitting lines on bytes is exact. Event dispatch follows the
WHATWG rules the reference decoder implements: a blank line ends an event, comments and
other fields carry no data, an event still open when the body ends is never dispatched.
The ``event:`` field is kept beside each event (a dialect with named events reads it), and
a named block that never got a data line is kept apart: WHATWG dispatches nothing for it,
but a client that reads names sees an event without data.
"""

from __future__ import annotations

import heapq
import json
import re
from dataclasses import dataclass
from typing import Any

_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Position:
    """Where something starts: a 1-based line of the body and its byte offset."""

    line: int
    offset: int

    def __str__(self) -> str:
        return f"line {self.line}, byte {self.offset}"


@dataclass(frozen=True)
class Event:
    """A dispatched event with data; ``start`` is its first ``data:`` line."""

    start: Position
    data: str
    name: str | None = None  # the last ``event:`` field's value; None: there was none
    opened: Position | None = None  # its first line, if a field line came before the data

    @property
    def at(self) -> Position:
        """Where the event begins: its first ``event:`` or ``data:`` line."""
        return self.opened or self.start


@dataclass(frozen=True)
class Comment:
    start: Position
    text: str


@dataclass(frozen=True)
class Scan:
    events: tuple[Event, ...]
    comments: tuple[Comment, ...]
    end: Position  # just past the last byte: where a missing ending would have been
    unterminated: bool  # the body ended inside a line or an event
    named_without_data: tuple[Event, ...] = ()  # ``event: x`` then a blank line, no data

    def in_order(self) -> list[tuple[Event, bool]]:
        """Every event of the body in the order they came, each with whether it had data
        (the named-event wires read a named block without data as an event too)."""
        with_data = [(event, True) for event in self.events]
        without = [(event, False) for event in self.named_without_data]
        return list(heapq.merge(with_data, without, key=lambda pair: pair[0].at.offset))


def json_object(data: str) -> dict[str, Any] | None:
    """An event's data as a JSON object, or None when it is none."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


def scan(body: bytes) -> Scan:
    """The dispatched data events and the comments of a whole body."""
    events: list[Event] = []
    named_without_data: list[Event] = []
    comments: list[Comment] = []
    data: list[str] = []
    name: str | None = None
    first_data: Position | None = None
    opened: Position | None = None  # the event's first field line, data or not
    start = len(_BOM) if body.startswith(_BOM) else 0
    number = 1
    for line_end in _LINE_END.finditer(body, start):
        here = Position(number, start)
        text = body[start : line_end.start()].decode("utf-8", errors="replace")
        number, start = number + 1, line_end.end()
        if not text:
            if first_data is not None:
                before = opened if opened != first_data else None
                events.append(Event(first_data, "\n".join(data), name, before))
            elif name is not None and opened is not None:
                named_without_data.append(Event(opened, "", name))
            data, name, first_data, opened = [], None, None, None
            continue
        if text.startswith(":"):
            comments.append(Comment(here, text[1:]))
            continue
        field, colon, value = text.partition(":")
        value = value.removeprefix(" ") if colon else ""
        opened = opened or here
        if field == "data":
            data.append(value)
            first_data = first_data or here
        elif field == "event":
            name = value
    unterminated = start < len(body) or opened is not None
    return Scan(
        tuple(events),
        tuple(comments),
        Position(number, len(body)),
        unterminated,
        tuple(named_without_data),
    )
