"""Lone surrogates in parsed fixture or upload data: a JSON or YAML escape (``"\\ud800"``)
makes a string Python holds but no UTF-8 can carry, so the stream could not be encoded nor
the scenario saved. Found where the data is parsed, to be refused naming the field.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\[uU]0{0,4}[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(_SURROGATE_ESCAPE.pattern.encode())


def lone_surrogate_at(data: Any, source: str | bytes) -> tuple[str | int, ...] | None:
    """Where ``data``, parsed from ``source`` (JSON or YAML text), holds a lone surrogate
    in a key or a string, which no UTF-8 can carry (the stream could not be encoded, nor
    the scenario saved); None if nowhere. Only an escape (``"\\ud800"``) makes one, so
    ``data`` is walked only when ``source`` has such an escape."""
    escape = _SURROGATE_ESCAPE_BYTES if isinstance(source, bytes) else _SURROGATE_ESCAPE
    if not escape.search(source):  # type: ignore[arg-type]  # str with str, bytes with bytes
        return None
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        location, value = stack.pop()
        if isinstance(value, str) and _SURROGATE.search(value):
            return location
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return (*location, key)
                stack.append(((*location, key), item))
        elif isinstance(value, list):
            stack += [((*location, position), item) for position, item in enumerate(value)]
    return None


LONE_SURROGATE = (
    "a lone surrogate (an escape such as \\ud800 without its pair), which no UTF-8 text can "
    "carry: write the character itself, or both halves of its pair"
)
"""Why a lone surrogate is refused, for a person to act on."""
