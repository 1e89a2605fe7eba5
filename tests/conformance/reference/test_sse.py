"""Byte-level tests of the reference adapter's SSE decoder (invariants S1-S3, S5 framing)."""

import pytest

from conformance.adapters.reference import SSEDecoder
from conformance.adapters.reference.sse import SSEEvent


def data_of(events: list[SSEEvent]) -> list[str]:
    return [event.data for event in events]


def decode(*reads: bytes) -> list[str]:
    decoder = SSEDecoder()
    payloads: list[str] = []
    for read in reads:
        payloads += data_of(decoder.feed(read))
    return payloads + data_of(decoder.close())


def decode_bytewise(stream: bytes) -> list[str]:
    return decode(*(stream[i : i + 1] for i in range(len(stream))))


CANONICAL = (
    b'data: {"choices":[{"delta":{"content":"h\xc3\xa9llo \xf0\x9f\x98\x80"}}]}\n\n'
    b": keep-alive\n\n"
    b"event: message\nid: 7\nretry: 5\ndata: \xe4\xb8\xad\xe6\x96\x87\n\n"
    b"data: [DONE]\n\n"
)
CANONICAL_PAYLOADS = ['{"choices":[{"delta":{"content":"héllo 😀"}}]}', "中文", "[DONE]"]


def test_single_event() -> None:
    assert decode(b'data: {"a":1}\n\n') == ['{"a":1}']


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_line_endings_are_equivalent(newline: bytes) -> None:
    assert decode(CANONICAL.replace(b"\n", newline)) == CANONICAL_PAYLOADS


def test_mixed_line_endings_in_one_stream() -> None:
    assert decode(b"data: a\r\n\rdata: b\n\r\ndata: c\r\r") == ["a", "b", "c"]


def test_one_byte_reads_including_split_multibyte_characters() -> None:
    assert decode_bytewise(CANONICAL) == CANONICAL_PAYLOADS


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_every_two_way_split_gives_the_same_payloads(newline: bytes) -> None:
    stream = CANONICAL.replace(b"\n", newline)
    for cut in range(len(stream) + 1):
        assert decode(stream[:cut], stream[cut:]) == CANONICAL_PAYLOADS, cut


def test_cr_and_lf_split_across_reads_are_one_line_ending() -> None:
    # Were the LF a second line ending, it would be a blank line dispatching "a" alone.
    assert decode(b"data: a\r", b"\ndata: b\r\n\r\n") == ["a\nb"]


def test_cr_at_end_of_read_ends_the_line_immediately() -> None:
    decoder = SSEDecoder()
    assert data_of(decoder.feed(b"data: a\r\r")) == ["a"]
    assert data_of(decoder.feed(b"\ndata: b\n\n")) == ["b"]  # this LF only completes the second CR


def test_empty_reads_do_not_disturb_a_pending_cr() -> None:
    assert decode(b"data: a\r", b"", b"\ndata: b\n\n") == ["a\nb"]


def test_comments_are_ignored() -> None:
    assert decode(b": keep-alive\n:\n: OPENROUTER PROCESSING\ndata: x\n\n") == ["x"]


def test_blank_line_after_only_comments_and_ids_dispatches_nothing() -> None:
    assert decode(b"id: 1\n\n: ping\n\nevent: x\nretry: 10\n\ndata: y\n\n") == ["y"]


def test_event_id_retry_and_unknown_fields_do_not_change_the_payload() -> None:
    stream = b"event: error\nid: 9\nretry: 1000\nfoo: bar\nnocolon\ndata: z\nData: ignored\n\n"
    assert decode(stream) == ["z"]


@pytest.mark.parametrize(
    ("line", "payload"),
    [
        (b"data: x", "x"),
        (b"data:x", "x"),
        (b"data:  x", " x"),  # exactly one space is stripped
        (b"data: x ", "x "),
        (b"data:", ""),
        (b"data", ""),  # a field name alone has an empty value
    ],
)
def test_data_value_strips_exactly_one_leading_space(line: bytes, payload: str) -> None:
    assert decode(line + b"\n\n") == [payload]


def test_multiple_data_lines_join_with_newline() -> None:
    stream = b'data: {"choices":[{"delta":\ndata: {"content":"x"}}]}\n\n'
    assert decode(stream) == ['{"choices":[{"delta":\n{"content":"x"}}]}']


def test_leading_bom_is_ignored() -> None:
    assert decode(b"\xef\xbb\xbfdata: x\n\n") == ["x"]


def test_leading_bom_split_across_reads_is_ignored() -> None:
    assert decode(b"\xef", b"\xbb", b"\xbfdata: x\n\n") == ["x"]


def test_only_one_leading_bom_is_ignored() -> None:
    # The second BOM belongs to the field name, which is then not "data".
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == ["y"]


def test_invalid_utf8_becomes_replacement_character() -> None:
    assert decode(b"data: a\xffb\n\n") == ["a\ufffdb"]


def test_complete_stream_is_not_truncated() -> None:
    decoder = SSEDecoder()
    assert data_of(decoder.feed(b"data: [DONE]\n\n: trailing comment\n")) == ["[DONE]"]
    assert decoder.close() == []
    assert not decoder.truncated


@pytest.mark.parametrize(
    "stream",
    [
        b"data: [DONE]",  # no line ending at all
        b"data: [DONE]\n",  # line complete, blank line missing
        b"data: [DONE]\r\n",
        b'data: {"a"',  # cut mid-event
        b"data: \xe4\xb8",  # cut inside a character
    ],
)
def test_unterminated_event_is_never_dispatched(stream: bytes) -> None:
    decoder = SSEDecoder()
    assert decoder.feed(stream) == []
    assert decoder.close() == []
    assert decoder.truncated


def test_events_after_done_are_still_decoded_for_the_caller_to_ignore() -> None:
    # Stopping at [DONE] is the translator's job (S4); the decoder stays a plain parser.
    assert decode(b"data: [DONE]\n\ndata: late\n\n") == ["[DONE]", "late"]


def test_an_event_keeps_its_name_and_a_name_never_outlives_its_event() -> None:
    decoder = SSEDecoder()
    stream = b"event: ping\ndata:\n\nevent: lost\n\ndata: {}\n\nevent: a\nevent: b\ndata: x\n\n"
    assert decoder.feed(stream) == [SSEEvent("", "ping"), SSEEvent("{}"), SSEEvent("x", "b")]
