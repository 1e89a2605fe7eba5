"""A recorded body's whole SSE events as event steps, where that keeps every byte (pure).

A recording of an Anthropic Messages or OpenAI Responses upstream is most useful as named
events a person can read and edit: ``event: content_block_delta`` beside its data object, a
data-only event or a name that disagrees with the data's ``type`` recorded as exactly that.
On a wire that numbers its events, an event keeps the ``sequence_number`` it was sent with
(written as sent, where it was sent), and one sent without is recorded ``numbered: false``,
so the scenario does not number it on replay. An event step is
only a faithful record when the encoder gives back the bytes the upstream sent, so each
recorded event is parsed, written as a step, and kept as one only if the stream's framing
re-encodes it byte for byte; anything else (a comment, an ``id:`` line, a data object split
over lines, JSON spaced unlike the rest, an event cut by a pause) stays a literal step.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue, ValidationError

from .dialects.named_events import EventStep
from .dialects.responses import SEQUENCE_FIELD
from .scenario import Framing, LiteralStep, Step
from .wire import dump_json

LineEnding = Literal["lf", "cr", "crlf"]
Separators = Literal["compact", "spaced"]
_LINE_ENDINGS: dict[str, LineEnding] = {"\r\n": "crlf", "\n": "lf", "\r": "cr"}
_LINE = re.compile(r"([^\r\n]*)(\r\n|\n|\r)")


@dataclass(frozen=True)
class _Style:
    """The framing options one event's bytes were written with."""

    line_ending: LineEnding
    data_space: bool
    json_separators: Separators
    ensure_ascii: bool


_LINE_ENDING_ORDER: tuple[LineEnding, ...] = ("lf", "crlf", "cr")
_SEPARATORS_ORDER: tuple[Separators, ...] = ("compact", "spaced")
_STYLES = tuple(
    _Style(line_ending, data_space, separators, ensure_ascii)
    for line_ending, data_space, separators, ensure_ascii in itertools.product(
        _LINE_ENDING_ORDER, (True, False), _SEPARATORS_ORDER, (False, True)
    )
)
"""Every style, the encoder's defaults first: of styles that fit equally many events, the
first is chosen, so the same recording always gives the same fixture."""


@dataclass(frozen=True)
class _Parsed:
    step: EventStep
    styles: frozenset[_Style]  # every framing that encodes ``step`` to the event's bytes


def with_event_steps(
    steps: Sequence[Step], framing: Framing, *, numbered: bool = False
) -> tuple[Framing, tuple[Step, ...]]:
    """``steps`` (a recording's literals, pauses and ending) with each literal that is one
    whole SSE event replaced by its event step, and the framing that encodes them.

    The framing is the one most of the events were written with; an event written
    otherwise stays literal. A leading BOM becomes ``bom``. ``numbered``: the wire numbers
    its events, so a step whose data has no ``sequence_number`` says ``numbered: false``.
    """
    original, steps = tuple(steps), list(steps)
    # Only a BOM the body starts with: the encoder writes ``bom`` before any step, so a wait
    # before the first byte would move after it (that BOM stays in its literal instead).
    first = steps[0] if steps else None
    bom = isinstance(first, LiteralStep) and first.literal.startswith("\ufeff")
    if bom:
        assert isinstance(first, LiteralStep)
        steps[0] = LiteralStep(literal=first.literal.removeprefix("\ufeff"))
    parsed = {
        position: found
        for position, step in enumerate(steps)
        if isinstance(step, LiteralStep) and (found := _parse(step.literal, numbered)) is not None
    }
    votes = Counter(style for found in parsed.values() for style in found.styles)
    if not votes:
        return framing, original
    style = max(_STYLES, key=lambda candidate: votes[candidate])  # the first of equals wins
    chosen = framing.model_copy(
        update={
            "bom": bom,
            "line_ending": style.line_ending,
            "data_space": style.data_space,
            "json_separators": style.json_separators,
            "ensure_ascii": style.ensure_ascii,
        }
    )
    return chosen, tuple(
        found.step if (found := parsed.get(position)) and style in found.styles else step
        for position, step in enumerate(steps)
    )


def _parse(text: str, numbered: bool) -> _Parsed | None:
    """The event step ``text`` is, if it is one whole event: an optional ``event:`` line,
    one ``data:`` line holding a JSON object, then a blank line (or the end of the body)."""
    lines = [(match[1], match[2]) for match in _LINE.finditer(text)]
    if sum(len(line) + len(end) for line, end in lines) != len(text) or not lines:
        return None  # the text does not end with a line break
    if len({end for _, end in lines}) != 1:
        return None
    line_ending = _LINE_ENDINGS[lines[0][1]]
    event_end = lines[-1][0] == ""
    fields = [line for line, _ in (lines[:-1] if event_end else lines)]
    name: str | None = None
    if len(fields) == 2 and fields[0].startswith("event:"):
        name = fields[0].removeprefix("event:")
        fields = fields[1:]
    if len(fields) != 1 or not fields[0].startswith("data:"):
        return None
    payload = fields[0].removeprefix("data:")
    data_space = payload.startswith(" ")
    if data_space:
        payload = payload[1:]
    if name is not None:
        name = _event_name(name, data_space)
        if name is None:
            return None
    event = _object(payload)
    if event is None:
        return None
    step = _step(event, name, event_end, numbered=not numbered or SEQUENCE_FIELD in event)
    if step is None:
        return None
    styles = frozenset(
        style
        for style in _STYLES
        if (style.line_ending, style.data_space) == (line_ending, data_space)
        and _dumped(event, style) == payload
    )
    return _Parsed(step, styles) if styles else None


def _event_name(rest: str, data_space: bool) -> str | None:
    """The name the encoder writes as ``event:`` + ``rest`` under ``data_space``: it puts a
    space before a non-empty name exactly when it puts one after ``data:``."""
    if not rest:
        return ""
    if data_space:
        return rest[1:] if rest.startswith(" ") and len(rest) > 1 else None
    return None if rest.startswith(" ") else rest


def _object(payload: str) -> dict[str, JsonValue] | None:
    try:
        value = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _step(
    event: dict[str, JsonValue], name: str | None, event_end: bool, *, numbered: bool
) -> EventStep | None:
    """The step sending ``event`` under ``name`` (None: a data-only event), recorded as
    simply as it reads: no ``name`` when it is the data's ``type``, ``numbered`` only when
    false (an event a numbering wire sent without its number)."""
    unnumbered: dict[str, bool] = {} if numbered else {"numbered": False}
    try:
        if name is None:
            return EventStep(event=event, event_line=False, event_end=event_end, **unnumbered)
        if name == event.get("type"):
            return EventStep(event=event, event_end=event_end, **unnumbered)
        return EventStep(event=event, name=name, event_end=event_end, **unnumbered)
    except ValidationError:
        return None  # e.g. an empty name the vocabulary cannot say apart from a data-only one


def _dumped(event: dict[str, JsonValue], style: _Style) -> str:
    framing = Framing(json_separators=style.json_separators, ensure_ascii=style.ensure_ascii)
    return dump_json(event, framing)
