"""Driving a dialect's reading over a whole body, and what a body that never reached its
terminal event means (S5 for chat, AN-G4 for Anthropic): the same for every dialect."""

from __future__ import annotations

import copy
import dataclasses
from typing import Protocol

from fakeprovider.wire import WirePlan

from ...codes import STREAM_CLOSED, TIMEOUT, TRANSPORT
from ..outcome import ExpectedAttempt
from .sse import SseEvent, sse_events


class StreamReading(Protocol):
    """One attempt's events read in order, as a dialect's reader does it."""

    features: set[str]
    failure: str | None
    done: bool  # the terminal event ([DONE], message_stop) was read
    closed_feature: str  # the wire feature of a body closed before its terminal event

    def read(self, event: SseEvent) -> None: ...
    def is_terminal(self, event: SseEvent) -> bool: ...
    @property
    def finish_arrived(self) -> bool: ...
    def fail(self, code: str, feature: str) -> None: ...
    def result(self, number: int) -> ExpectedAttempt: ...


# How a body that never reached its terminal event ends: the failure code and the wire
# feature (None: the dialect's own, ``closed_feature``).
_UNFINISHED: dict[str, tuple[str, str | None]] = {
    "close": (STREAM_CLOSED, None),
    "reset": (TRANSPORT, "reset"),
    "stall": (TIMEOUT, "stall"),
    "disconnect": (TRANSPORT, "disconnect"),
}


def read_body(reading: StreamReading, plan: WirePlan, number: int) -> ExpectedAttempt:
    """The attempt the provider plays as ``plan``, read by ``reading`` up to its terminal
    event or its first failure."""
    events = sse_events(plan.body)
    for event in events:
        if reading.failure is not None or reading.done:
            break
        reading.read(event)
    if reading.failure is not None or reading.done:
        return reading.result(number)
    # A disconnect in a body without chunked coding is played, and read, as its close.
    flushed = sse_events(plan.body, flush=True)[len(events) :]
    # Under interop a body the wire ended after its finish, closed, reset or cut, may be
    # read as finished: all the provider sent had arrived (H3 and S5 alike).
    ended = plan.ending != "stall"
    finished = _finished_readings(reading, flushed, number) if ended else ()
    code, feature = _UNFINISHED[plan.ending]
    reading.fail(code, feature or reading.closed_feature)
    unfinished = reading.result(number)
    # The terminal event is the harness's duty: the finished readings are the interop
    # ones, with the wire features of the body as it ended.
    readings = tuple(
        dataclasses.replace(r, features=r.features | unfinished.features, interop_readings=())
        for r in finished
    )
    if finished and code == TRANSPORT:
        # Or read as the close it follows, then refused for want of the terminal event.
        readings += (dataclasses.replace(unfinished, code=STREAM_CLOSED),)
    return dataclasses.replace(unfinished, interop_readings=readings)


def _finished_readings(
    reading: StreamReading, unterminated: list[SseEvent], number: int
) -> tuple[ExpectedAttempt, ...]:
    """The attempt as if the terminal event had followed, where the wire's finish had come,
    each with its own relaxed readings: with an event the body left unterminated discarded
    (WHATWG) or read (parsers that flush at the end of the body)."""
    found: list[ExpectedAttempt] = []
    pending_events = [event for event in unterminated if not reading.is_terminal(event)]
    for pending in ([], pending_events):
        finished = copy.deepcopy(reading)
        for event in pending:
            finished.read(event)
        if not finished.finish_arrived or finished.failure is not None:
            continue
        finished.done = True
        attempt = finished.result(number)
        found += [r for r in (attempt, *attempt.interop_readings) if r not in found]
    return tuple(found)
