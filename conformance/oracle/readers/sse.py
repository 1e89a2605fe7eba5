"""The event stream of a whole body (WHATWG), shared by every dialect's reader."""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple


class SseEvent(NamedTuple):
    """One dispatched event: its ``event:`` name (None where the event had no such line,
    which WHATWG calls ``message``) and its data."""

    name: str | None
    data: str


def sse_events(body: bytes, *, flush: bool = False) -> list[SseEvent]:
    """The complete events of a whole body, each with its name and data (WHATWG event
    stream: an event with no data line is not dispatched, and its name is forgotten).

    An event still unterminated at the end of the body is not dispatched; with ``flush`` it
    is, as parsers that flush at the end of the body do.
    """
    text = body.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = re.split(r"\r\n|\r|\n", text)
    tail = lines.pop()  # the text after the last line break is an unterminated line
    if flush:
        lines += [tail, ""]
    events: list[SseEvent] = []
    data: list[str] = []
    name: str | None = None
    for line in lines:
        if not line:
            if data:
                events.append(SseEvent(name, "\n".join(data)))
            data, name = [], None
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
    return events


def sse_payloads(body: bytes, *, flush: bool = False) -> list[str]:
    """The data of :func:`sse_events`: what a reader that ignores event names reads."""
    return [event.data for event in sse_events(body, flush=flush)]


def payload_json(data: str) -> Any:
    """An event's data as JSON; NaN and Infinity, which JSON has not, raise ValueError."""
    return json.loads(data, parse_constant=_not_json)


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")
