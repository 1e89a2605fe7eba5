"""A stream response as the server writes it: scripted, and coalesced for the load mode."""

from __future__ import annotations

import itertools

from fakeprovider.build import ScenarioBuilder, StreamBuilder, stream
from fakeprovider.playback import Playback, prepare
from fakeprovider.sends import BYTES_PER_TURN, WRITES_PER_TURN, Run, coalesced, scripted
from fakeprovider.wire import LAST_CHUNK, WirePlan, frame_chunk

HEAD = b"HTTP/1.1 200 OK\r\n\r\n"


def playback_of(body: StreamBuilder) -> Playback:
    played = prepare(ScenarioBuilder("s").attempt(body).build().attempts[0])
    assert isinstance(played, Playback)
    return played


def writes_of(runs: list[Run]) -> list[bytes]:
    return [data for run in runs for data in run.writes]


def test_scripted_is_the_head_each_write_framed_and_the_last_chunk_alone() -> None:
    plan = WirePlan(b"abcdef", splits=[2], delays={4: 30.0}, final_delay_ms=5.0)

    assert list(scripted(HEAD, plan, chunked=True)) == [
        Run(0.0, (HEAD, frame_chunk(b"ab"), frame_chunk(b"cd"))),
        Run(30.0, (frame_chunk(b"ef"),)),
        Run(5.0, (LAST_CHUNK,), ends=True),
    ]


def test_scripted_unframed_or_cut_short_has_no_last_chunk() -> None:
    plan = WirePlan(b"abcd", splits=[2])
    assert list(scripted(HEAD, plan, chunked=False))[-1] == Run(0.0, (), ends=True)
    reset = WirePlan(b"abcd", ending="reset", final_delay_ms=7.0)
    assert list(scripted(HEAD, reset, chunked=True))[-1] == Run(7.0, ())
    assert list(scripted(HEAD, WirePlan(b"ab", ending="stall"), chunked=True)) == [
        Run(0.0, (HEAD, frame_chunk(b"ab")))
    ]


def test_a_long_run_is_cut_into_pieces_of_bounded_writes_and_bytes() -> None:
    byte_by_byte = WirePlan(b"x" * 1000, splits=range(1, 1000))
    pieces = list(scripted(HEAD, byte_by_byte, chunked=True))[:-1]
    assert [len(run.writes) for run in pieces] == [WRITES_PER_TURN] * 3 + [1001 - 3 * 256]
    large = WirePlan(b"y" * (3 * BYTES_PER_TURN), splits=range(1024, 3 * BYTES_PER_TURN, 1024))
    pieces = list(scripted(HEAD, large, chunked=False))[:-1]
    sizes = [sum(map(len, run.writes)) for run in pieces]
    assert sizes == [len(HEAD) + BYTES_PER_TURN, BYTES_PER_TURN, BYTES_PER_TURN]
    assert all(run.delay_ms == 0 for run in pieces)


def test_coalesced_joins_the_writes_between_pauses_the_head_and_last_chunk_included() -> None:
    plan = WirePlan(b"abcdef", splits=[1, 2, 3, 5], delays={4: 30.0})
    runs = list(scripted(HEAD, plan, chunked=True))

    assert list(coalesced(runs)) == [
        Run(0.0, (HEAD + b"".join(map(frame_chunk, [b"a", b"b", b"c", b"d"])),)),
        Run(30.0, (frame_chunk(b"e") + frame_chunk(b"f") + LAST_CHUNK,), ends=True),
    ]


def test_a_final_pause_keeps_the_last_chunk_apart() -> None:
    plan = WirePlan(b"abcd", splits=[2], final_delay_ms=40.0)
    assert list(coalesced(scripted(HEAD, plan, chunked=True))) == [
        Run(0.0, (HEAD + frame_chunk(b"ab") + frame_chunk(b"cd"),)),
        Run(40.0, (LAST_CHUNK,), ends=True),
    ]
    reset = WirePlan(b"ab", ending="reset", final_delay_ms=7.0)
    assert list(coalesced(scripted(HEAD, reset, chunked=True)))[-1] == Run(7.0, ())


def test_a_coalesced_write_holds_at_most_max_bytes_unless_one_write_is_larger() -> None:
    runs = [Run(0.0, (b"a" * 4, b"b" * 4, b"c" * 9)), Run(0.0, (b"d",))]
    assert writes_of(list(coalesced(runs, max_bytes=8))) == [b"aaaabbbb", b"c" * 9, b"d"]


def test_coalescing_a_body_sent_byte_by_byte_makes_its_writes_as_it_goes() -> None:
    plan = WirePlan(b"x" * 10_000_000, splits=range(1, 10_000_000))
    first = next(coalesced(scripted(HEAD, plan, chunked=True), max_bytes=1024))
    assert first.writes[0].startswith(HEAD + b"1\r\nx\r\n")
    assert len(first.writes[0]) <= 1024


def test_a_playback_keeps_its_runs_once_made_when_its_plan_keeps_its_writes() -> None:
    few = playback_of(stream().text("hi").done())
    assert few.runs() is few.runs()
    assert few.runs(coalesce=True) is few.runs(coalesce=True)
    assert b"".join(writes_of(list(few.runs(coalesce=True)))) == b"".join(
        writes_of(list(few.runs()))
    )
    many = playback_of(stream().split("byte").raw("x" * 5000))
    assert many.runs() is not many.runs()  # made as it is played, each time
    first = next(iter(itertools.islice(many.runs(), 1)))
    assert first.writes[:2] == (many.head, frame_chunk(b"d"))
