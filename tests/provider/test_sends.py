"""A stream response as the server writes it: scripted, and coalesced for the load mode."""

from __future__ import annotations

import itertools

from fakeprovider.build import ScenarioBuilder, StreamBuilder, stream
from fakeprovider.playback import Playback, prepare
from fakeprovider.sends import Send, coalesced, scripted
from fakeprovider.wire import LAST_CHUNK, WirePlan, Write, frame_chunk

HEAD = b"HTTP/1.1 200 OK\r\n\r\n"


def playback_of(body: StreamBuilder) -> Playback:
    played = prepare(ScenarioBuilder("s").attempt(body).build().attempts[0])
    assert isinstance(played, Playback)
    return played


def test_scripted_is_the_head_each_write_framed_and_the_last_chunk_after_the_final_wait() -> None:
    plan = WirePlan(b"abcdef", splits=[2], delays={4: 30.0}, final_delay_ms=5.0)

    assert list(scripted(HEAD, plan, chunked=True)) == [
        Send(0.0, HEAD),
        Send(0.0, frame_chunk(b"ab")),
        Send(0.0, frame_chunk(b"cd")),
        Send(30.0, frame_chunk(b"ef")),
        Send(5.0, LAST_CHUNK, ends=True),
    ]


def test_scripted_unframed_or_cut_short_has_no_last_chunk() -> None:
    plan = WirePlan(b"abcd", splits=[2])
    assert list(scripted(HEAD, plan, chunked=False))[-1] == Send(0.0, b"", ends=True)
    reset = WirePlan(b"abcd", ending="reset", final_delay_ms=7.0)
    assert list(scripted(HEAD, reset, chunked=True))[-1] == Send(7.0, b"", ends=False)


def test_coalesced_joins_each_run_between_pauses_the_head_and_last_chunk_included() -> None:
    plan = WirePlan(b"abcdef", splits=[1, 2, 3, 5], delays={4: 30.0})
    writes = list(scripted(HEAD, plan, chunked=True))

    assert list(coalesced(writes)) == [
        Send(0.0, b"".join(data for _, data, _ in writes[:5])),
        Send(30.0, b"".join(data for _, data, _ in writes[5:]), ends=True),
    ]


def test_a_final_pause_keeps_the_last_chunk_apart() -> None:
    plan = WirePlan(b"abcd", splits=[2], final_delay_ms=40.0)
    joined = list(coalesced(scripted(HEAD, plan, chunked=True)))
    assert joined == [
        Send(0.0, HEAD + frame_chunk(b"ab") + frame_chunk(b"cd")),
        Send(40.0, LAST_CHUNK, ends=True),
    ]


def test_a_coalesced_write_holds_at_most_max_bytes_unless_one_write_is_larger() -> None:
    writes = [Send(0.0, b"a" * 4), Send(0.0, b"b" * 4), Send(0.0, b"c" * 9), Send(0.0, b"d")]
    assert [send.data for send in coalesced(writes, max_bytes=8)] == [
        b"aaaabbbb",
        b"c" * 9,
        b"d",
    ]


def test_coalescing_a_body_sent_byte_by_byte_makes_its_writes_as_it_goes() -> None:
    plan = WirePlan(b"x" * 10_000_000, splits=range(1, 10_000_000))
    first = next(iter(coalesced(scripted(HEAD, plan, chunked=True), max_bytes=1024)))
    assert first.data.startswith(HEAD + b"1\r\nx\r\n")
    assert len(first.data) <= 1024


def test_a_playback_keeps_its_sends_once_made_when_its_plan_keeps_its_writes() -> None:
    few = playback_of(stream().text("hi").done())
    assert few.sends() is few.sends()
    assert few.sends(coalesce=True) is few.sends(coalesce=True)
    assert [send.data for send in few.sends(coalesce=True)] == [
        b"".join(send.data for send in few.sends())
    ]
    many = playback_of(stream().split("byte").raw("x" * 5000))
    assert many.sends() is not many.sends()  # made as it is played, each time
    assert list(itertools.islice(many.sends(), 2))[1] == Send(0.0, frame_chunk(b"d"))
    assert Write(b"d") == next(iter(many.plan.iter_writes()))
