"""JSON parsed a value at a time, for a worker thread beside the event loop.

``json.loads`` is one C call, which keeps the GIL to the end: 200 000 steps held the
server's streams 0.15-0.25 s. Here the outer containers (to DESCENDED_LEVELS) are walked in
Python and each value inside them is parsed by the json module's own scanner, so the GIL
changes hands between values; the result is the same. Any input it does not take (an
error, a lone surrogate...) is left to ``json.loads``, for its exact error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .errors import FakeProviderError

DESCENDED_LEVELS = 5
"""Containers walked in Python: a scenario's steps are values at the fifth level."""

# The decoder's scanner (the C one where built): the value at an index, and its end.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_SPACE = re.compile(r"[ \t\n\r]*")


class _NotTakenError(FakeProviderError):
    """Input this parser leaves to ``json.loads``."""


def loads(body: bytes) -> Any:
    """``json.loads(body)`` for a UTF-8 body, a value at a time; raises as it does."""
    try:
        text = body.decode("utf-8")
        value, end = _value(text, _space(text, 0), 0)
        if _space(text, end) != len(text):
            _not_taken()
    except (_NotTakenError, StopIteration, IndexError, UnicodeDecodeError):
        return json.loads(body)
    return value


def _value(text: str, at: int, level: int) -> tuple[Any, int]:
    opening = text[at : at + 1]
    if level >= DESCENDED_LEVELS or opening not in ("[", "{"):
        return _SCAN(text, at)
    closing = "]" if opening == "[" else "}"
    items: list[Any] = []
    members: dict[str, Any] = {}
    at = _space(text, at + 1)
    if text[at] == closing:
        return (items if opening == "[" else members), at + 1
    while True:
        if opening == "{":
            key, at = _SCAN(text, at) if text[at] == '"' else _not_taken()
            at = _space(text, at)
            if text[at] != ":":
                _not_taken()
            member, at = _value(text, _space(text, at + 1), level + 1)
            members[key] = member
        else:
            item, at = _value(text, at, level + 1)
            items.append(item)
        at = _space(text, at)
        if text[at] == closing:
            return (items if opening == "[" else members), at + 1
        if text[at] != ",":
            _not_taken()
        at = _space(text, at + 1)


def _space(text: str, at: int) -> int:
    spaces = _SPACE.match(text, at)
    assert spaces is not None  # it matches the empty string
    return spaces.end()


def _not_taken() -> Any:
    raise _NotTakenError
