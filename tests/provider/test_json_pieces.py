"""JSON parsed a value at a time gives json.loads' value, or raises its error."""

from __future__ import annotations

import json

import pytest

from fakeprovider.json_pieces import DESCENDED_LEVELS, loads

BODIES = [
    b"{}",
    b"[]",
    b' { "a" : [1, 2.5, {"b": [ ] }], "c": {"d": {"e": {"f": {"g": [1, null]}}}} } ',
    b'{"a": 1, "a": 2}',
    b'"x"',
    b"[NaN, -Infinity, true, false]",
    b"\xef\xbb\xbf{}",  # json.loads takes a BOM in bytes
    b'["\\ud800", "\\u00e9", "\xc3\xa9"]',
    b"[" * 3 * DESCENDED_LEVELS + b"]" * 3 * DESCENDED_LEVELS,
    b"[1,]",
    b'{"a":1,}',
    b'{"a" 1}',
    b"[1 2]",
    b"{1: 2}",
    b'{"a": 1}x',
    b"",
    b"[" + b"9" * 5000 + b"]",
    b'["unterminated]',
    b"\xff",
]


def _outcome(parse: object, body: bytes) -> tuple[str, object]:
    try:
        return "value", parse(body)  # type: ignore[operator]
    except (ValueError, RecursionError) as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize("body", BODIES)
def test_the_value_or_the_error_is_json_loads_own(body: bytes) -> None:
    assert _outcome(loads, body) == _outcome(json.loads, body)


def test_a_body_of_many_values_parses_to_the_same_data() -> None:
    data = {"attempts": [{"stream": {"steps": [{"pause_ms": -1}, "done"] * 5000}}]}
    assert loads(json.dumps(data).encode()) == data
