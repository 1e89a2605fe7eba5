"""Absent, null, empty and wrong-typed values survive from the builder to the bytes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakeprovider.build import ABSENT, ScenarioBuilder, StreamBuilder, stream, tool_call_entry
from fakeprovider.scenario import StreamAttempt
from fakeprovider.wire import encode_stream


def sent_chunk(builder: StreamBuilder) -> Any:
    attempt = ScenarioBuilder("s").attempt(builder).build().attempts[0]
    assert isinstance(attempt, StreamAttempt)
    body = encode_stream(attempt.stream).body
    assert body.startswith(b"data: ") and body.endswith(b"\n\n")
    return json.loads(body[6:-2]), body


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (ABSENT, b'"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]'),
        (None, b'"tool_calls":[{"index":0,"id":null,"function":{"arguments":"{}"}}]'),
        ("", b'"tool_calls":[{"index":0,"id":"","function":{"arguments":"{}"}}]'),
        (7, b'"tool_calls":[{"index":0,"id":7,"function":{"arguments":"{}"}}]'),
        ({"x": [1]}, b'"id":{"x":[1]}'),
    ],
    ids=["absent", "null", "empty", "number", "object"],
)
def test_tool_call_id_value_reaches_the_bytes(value: Any, fragment: bytes) -> None:
    _, body = sent_chunk(stream().tool_call(0, id=value, arguments="{}"))
    assert fragment in body


@pytest.mark.parametrize("value", [ABSENT, None, "", 42, ["get_", "weather"]])
def test_function_name_value_reaches_the_bytes(value: Any) -> None:
    chunk, _ = sent_chunk(stream().tool_call(0, name=value))
    entry = chunk["choices"][0]["delta"]["tool_calls"][0]
    if value is ABSENT:
        assert "function" not in entry
    else:
        assert entry["function"] == {"name": value}


@pytest.mark.parametrize("value", [ABSENT, None, "", "  ", 3.5])
def test_content_value_reaches_the_bytes(value: Any) -> None:
    chunk, _ = sent_chunk(stream().text(value))
    delta = chunk["choices"][0]["delta"]
    assert ("content" not in delta) if value is ABSENT else (delta["content"] == value)


def test_finish_reason_absent_versus_null() -> None:
    absent, _ = sent_chunk(stream().delta(content="x", finish_reason=ABSENT))
    null, _ = sent_chunk(stream().delta(content="x"))
    assert "finish_reason" not in absent["choices"][0]
    assert null["choices"][0]["finish_reason"] is None


def test_arguments_object_is_sent_as_an_object_not_a_string() -> None:
    chunk, _ = sent_chunk(stream().tool_call(0, arguments={"city": "Oslo"}))  # type: ignore[arg-type]
    assert chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] == {
        "city": "Oslo"
    }


def test_usage_chunk_shapes() -> None:
    chunk, _ = sent_chunk(stream().usage(10, 5, cached_tokens=3, reasoning_tokens=2))
    assert chunk["choices"] == []
    assert chunk["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 3},
        "completion_tokens_details": {"reasoning_tokens": 2},
    }


def test_tool_call_entry_key_order_is_wire_order() -> None:
    entry = tool_call_entry(1, id="c", type="function", name="n", arguments="")
    assert list(entry) == ["index", "id", "type", "function"]


def test_role_chunk_is_the_first_chunk_signature() -> None:
    chunk, _ = sent_chunk(stream().role(reasoning_content=""))
    assert chunk["choices"][0] == {
        "index": 0,
        "delta": {"role": "assistant", "content": None, "reasoning_content": ""},
        "finish_reason": None,
    }


def test_envelope_none_sends_bare_chunks() -> None:
    chunk, _ = sent_chunk(stream().envelope(None).text("x"))
    assert list(chunk) == ["choices"]
