"""The sans-IO encoder, byte for byte."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.scenario import StreamResponse
from fakeprovider.wire import (
    MAX_STREAM_BODY_BYTES,
    EncodeError,
    Write,
    encode_head,
    encode_stream,
    error_body,
    escape_bytes,
    frame_chunk,
    stream_headers,
)


def plan_of(builder: object) -> StreamResponse:
    scenario = ScenarioBuilder("s").attempt(builder).build()  # type: ignore[arg-type]
    attempt = scenario.attempts[0]
    assert hasattr(attempt, "stream")
    return attempt.stream


def test_chunk_gets_envelope_first_and_keeps_key_order() -> None:
    response = plan_of(stream().chunk({"choices": [], "model": "m2", "z": 1, "a": 2}))
    assert encode_stream(response).body == (
        b'data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,'
        b'"model":"m2","choices":[],"z":1,"a":2}\n\n'
    )


def test_chunk_without_envelope_is_sent_exactly() -> None:
    response = plan_of(stream().chunk({"b": None, "a": ""}, envelope=False))
    assert encode_stream(response).body == b'data: {"b":null,"a":""}\n\n'


@pytest.mark.parametrize(("line_ending", "eol"), [("lf", b"\n"), ("cr", b"\r"), ("crlf", b"\r\n")])
def test_line_endings(line_ending: str, eol: bytes) -> None:
    response = plan_of(stream(line_ending=line_ending).comment(" ping").raw("x").done())
    assert encode_stream(response).body == (
        b": ping" + eol + eol + b"data: x" + eol + eol + b"data: [DONE]" + eol + eol
    )


def test_bom_data_space_and_done_without_blank_line() -> None:
    response = plan_of(stream(bom=True, data_space=False).raw("x").done(event_end=False))
    assert encode_stream(response).body == b"\xef\xbb\xbfdata:x\n\ndata:[DONE]\n"


def test_multiline_data_splits_json_into_data_lines_that_join_back() -> None:
    response = plan_of(stream(multiline_data=True).chunk({"a": [1, {"b": "\n"}]}, envelope=False))
    body = encode_stream(response).body.decode()
    lines = [line for line in body.split("\n") if line]
    assert len(lines) > 1 and all(line.startswith("data: ") for line in lines)
    assert json.loads("\n".join(line[6:] for line in lines)) == {"a": [1, {"b": "\n"}]}


def test_raw_payload_with_line_breaks_becomes_several_data_lines() -> None:
    response = plan_of(stream().raw("a\r\nb\nc"))
    assert encode_stream(response).body == b"data: a\ndata: b\ndata: c\n\n"


def test_fields_comments_and_literals() -> None:
    response = plan_of(
        stream().field("event", "message").field("id", "7").raw("x").literal("data\n\n").comment()
    )
    assert encode_stream(response).body == b"event: message\nid: 7\ndata: x\n\ndata\n\n:\n\n"


def test_event_split_gives_one_write_per_step_and_pauses_delay_the_next_write() -> None:
    plan = encode_stream(plan_of(stream().raw("a").pause(5).pause(2).raw("b").pause(9).reset()))
    assert plan.writes == (Write(b"data: a\n\n"), Write(b"data: b\n\n", delay_ms=7.0))
    assert plan.ending == "reset"
    assert plan.final_delay_ms == 9.0


def test_byte_split_cuts_inside_a_multibyte_character() -> None:
    plan = encode_stream(plan_of(stream().split("byte").raw("é")))
    assert [w.data for w in plan.writes] == [bytes([b]) for b in "data: é\n\n".encode()]


def test_fixed_and_offset_splits() -> None:
    fixed = encode_stream(plan_of(stream().split("fixed", size=4).raw("abcdef")))
    assert [w.data for w in fixed.writes] == [b"data", b": ab", b"cdef", b"\n\n"]
    offsets = encode_stream(plan_of(stream().split("offsets", offsets=[2, 7]).raw("abc")))
    assert [w.data for w in offsets.writes] == [b"da", b"ta: a", b"bc\n\n"]


def test_pause_cuts_even_in_fixed_mode() -> None:
    plan = encode_stream(plan_of(stream().split("fixed", size=100).raw("a").pause(3).raw("b")))
    assert plan.writes == (Write(b"data: a\n\n"), Write(b"data: b\n\n", 3.0))


def test_offset_past_the_end_is_a_clear_error() -> None:
    with pytest.raises(EncodeError, match="split offset 99 is not inside the 9-byte body"):
        encode_stream(plan_of(stream().split("offsets", offsets=[99]).raw("a")))


def test_pauses_at_the_start_and_end_and_a_byte_split_make_the_same_writes_as_ever() -> None:
    plan = encode_stream(plan_of(stream().split("byte").pause(4).raw("a").pause(6)))
    assert plan.writes[0] == Write(b"d", 4.0)
    assert b"".join(write.data for write in plan.writes) == b"data: a\n\n" == plan.body
    assert len(plan.writes) == len(plan.body)
    assert plan.final_delay_ms == 6.0


def test_a_body_sent_byte_by_byte_is_held_once_not_as_a_write_per_byte() -> None:
    response = plan_of(stream().split("byte").raw("x" * 1_000_000))
    tracemalloc.start()
    try:
        plan = encode_stream(response)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(plan.body) > 1_000_000
    assert held < 3 * len(plan.body)  # a Write per byte held 125 times the body


def test_a_body_over_the_cap_is_an_encode_error_naming_it() -> None:
    piece = "x" * (1024 * 1024)
    response = plan_of(stream().raw(piece).raw(piece).split("event"))
    assert len(encode_stream(response).body) < MAX_STREAM_BODY_BYTES
    too_large = plan_of(stream().raw(piece * 8).raw(piece * 8).raw("never encoded"))
    message = f"the body is more than {MAX_STREAM_BODY_BYTES} bytes by step 1"
    with pytest.raises(EncodeError, match=message):
        encode_stream(too_large)


def test_stall_and_explicit_end() -> None:
    assert encode_stream(plan_of(stream().raw("a").stall())).ending == "stall"
    assert encode_stream(plan_of(stream().raw("a").end())).ending == "close"


def test_encoding_is_deterministic() -> None:
    response = plan_of(stream(bom=True).split("byte").role().text("Hi").pause(1).done())
    assert encode_stream(response) == encode_stream(response)


def test_stream_headers_defaults_and_overrides() -> None:
    response = plan_of(stream().header("Content-Type", "text/plain").raw("x"))
    assert stream_headers(response) == [
        ("cache-control", "no-cache"),
        ("transfer-encoding", "chunked"),
        ("Content-Type", "text/plain"),
    ]
    close = plan_of(stream(transfer="close").raw("x"))
    assert ("connection", "close") in stream_headers(close)


def test_http_framing_helpers() -> None:
    assert frame_chunk(b"hello") == b"5\r\nhello\r\n"
    assert encode_head(429, [("retry-after", "1")]) == (
        b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\n\r\n"
    )


def test_error_body_default_is_openai_shaped() -> None:
    from fakeprovider.build import http_error

    body = json.loads(error_body(http_error(503).error))
    assert body["error"]["type"] == "server_error"
    assert error_body(http_error(400, raw_body="nope").error) == b"nope"


def test_escape_bytes_shows_invisible_characters() -> None:
    assert escape_bytes(b"\xef\xbb\xbfa\\b\r\n\t\x00") == "\\xef\\xbb\\xbfa\\\\b\\r\\n\\t\\x00"


def test_disconnect_ending() -> None:
    assert encode_stream(plan_of(stream().raw("a").disconnect())).ending == "disconnect"


def test_envelope_is_ordered_and_may_carry_extra_fields() -> None:
    builder = stream().envelope({"id": "x", "system_fingerprint": "fp", "model": "m"})
    response = plan_of(builder.chunk({"choices": [], "model": "m2"}))
    assert encode_stream(response).body == (
        b'data: {"id":"x","system_fingerprint":"fp","model":"m2","choices":[]}\n\n'
    )
