"""The attempt reader both shells drive: body bytes in, events out, however the body is split."""

import json
from typing import Any

import pytest

from conformance.adapters.mutants.translators import EofIsDone
from conformance.adapters.reference import AttemptReader, Failure, SSEDecoder
from conformance.adapters.reference.sse import SSEEvent
from conformance.events import (
    BlockEnd,
    BlockStart,
    Event,
    Finish,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
)


def sse(*payloads: dict[str, Any] | str, newline: bytes = b"\n") -> bytes:
    frames = (p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads)
    return b"".join(b"data: " + f.encode() + newline + newline for f in frames)


def text(value: str) -> dict[str, Any]:
    return {"choices": [{"delta": {"content": value}}]}


TOOL_CALL = {
    "choices": [
        {
            "delta": {
                "tool_calls": [
                    {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{}"}}
                ]
            },
            "finish_reason": "tool_calls",
        }
    ]
}
USAGE = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
BODY = sse(text("hé"), text("llo 😀"), TOOL_CALL, USAGE, "[DONE]", newline=b"\r\n")


def read(*reads: bytes, failure: Failure | None = None) -> list[Event]:
    reader = AttemptReader()
    events: list[Event] = []
    for data in reads:
        events += reader.receive_data(data)
    return events + reader.end(failure)


def test_a_whole_body_reads_to_its_finish() -> None:
    assert read(BODY) == [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="hé"),
        TextDelta(index=0, text="llo 😀"),
        BlockStart(index=1, block_type="tool-call"),
        ToolCallDelta(index=1, id="call_1", name="f", arguments_delta="{}"),
        BlockEnd(index=0, block=TextBlock(text="héllo 😀")),
        BlockEnd(index=1, block=ToolCallBlock(id="call_1", name="f", arguments="{}")),
        Usage(input_tokens=5, output_tokens=2, cache_read_tokens=0),
        Finish(reason="tool-calls"),
    ]


def test_one_byte_reads_give_the_events_of_one_read() -> None:
    assert read(*(BODY[i : i + 1] for i in range(len(BODY)))) == read(BODY)


def test_every_two_way_split_gives_the_events_of_one_read() -> None:
    whole = read(BODY)
    for cut in range(len(BODY) + 1):
        assert read(BODY[:cut], BODY[cut:]) == whole, cut


def test_finished_after_done_and_nothing_after_it_is_read() -> None:
    reader = AttemptReader()
    events = reader.receive_data(sse(text("a")))
    assert not reader.finished
    events += reader.receive_data(sse("[DONE]"))
    assert reader.finished
    assert events[-1] == Finish(reason="stop")
    assert reader.receive_data(sse(text("late"), "[DONE]")) == []
    assert reader.end() == []
    assert reader.end(Failure("TRANSPORT", "reset")) == []


def test_finished_after_an_in_stream_error() -> None:
    reader = AttemptReader()
    events = reader.receive_data(sse({"error": {"message": "overloaded", "code": 529}}))
    assert reader.finished
    assert isinstance(events[-1], Finish) and events[-1].reason == "error"


def test_a_clean_close_without_done_is_stream_closed_with_blocks_left_open() -> None:
    assert read(sse(text("par"), USAGE)) == [
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="par"),
        Usage(input_tokens=5, output_tokens=2, cache_read_tokens=0),  # billed: reported (R9)
        Finish(reason="error", code="STREAM_CLOSED", message="SSE stream ended without [DONE]"),
    ]


def test_done_without_its_blank_line_is_not_done() -> None:
    events = read(sse(text("x")) + b"data: [DONE]\n")
    assert events[-1] == Finish(
        reason="error", code="STREAM_CLOSED", message="SSE stream ended without [DONE]"
    )


@pytest.mark.parametrize("code", ["TRANSPORT", "TIMEOUT"])
def test_a_failure_ends_the_attempt_with_its_code_and_blocks_left_open(code: str) -> None:
    events = read(sse(text("par"), USAGE), failure=Failure(code, "cut"))
    assert events[-2:] == [
        Usage(input_tokens=5, output_tokens=2, cache_read_tokens=0),
        Finish(reason="error", code=code, message="cut"),
    ]
    assert not any(isinstance(event, BlockEnd) for event in events)


def test_a_failure_before_any_byte_is_the_only_event() -> None:
    assert AttemptReader().end(Failure("RATE_LIMIT", "429", status=429)) == [
        Finish(reason="error", code="RATE_LIMIT", message="429")
    ]


def test_the_translator_is_injectable() -> None:
    reader = AttemptReader(translator=EofIsDone)  # a mutant: the end of the body is [DONE]
    reader.receive_data(sse(text("x")))
    assert reader.end()[-1] == Finish(reason="stop")


class _TailDispatched(SSEDecoder):
    """A decoder whose close() dispatches the unterminated event, as some clients do."""

    def close(self) -> list[SSEEvent]:
        tail = self._partial_line.removeprefix("data: ")
        super().close()
        return [SSEEvent(tail)] if tail else []


def test_the_decoder_is_injectable_and_its_close_is_a_final_feed() -> None:
    reader = AttemptReader(decoder=_TailDispatched)
    reader.receive_data(sse(text("x")) + b"data: [DONE]")
    assert reader.end()[-1] == Finish(reason="stop")
