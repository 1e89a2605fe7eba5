"""What the strategies of the two named-event wires share: an attempt's event steps, each
marked with what it is, and the orders in which parallel lanes of events may arrive."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hypothesis import strategies as st
from pydantic import JsonValue

from ._drawing import BOOLEANS, Step, upto

Mark = tuple[str, int]  # what an event is and the block or item it belongs to (-1: none)
Lane = list[tuple[dict[str, JsonValue], Mark]]  # one block's or item's events, in order


@dataclass
class Events:
    """The event steps of an attempt and what each one is (for breaks placed among them)."""

    steps: list[Step] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)

    def add(self, data: dict[str, JsonValue], mark: Mark) -> None:
        self.steps.append({"event": data})
        self.marks.append(mark)

    def first(self, mark: Mark) -> int:
        return self.marks.index(mark)

    @property
    def content_end(self) -> int:
        """Where the events that end the attempt begin (marked ``("end", 0)``)."""
        return self.marks.index(("end", 0))


def insert_steps(events: Events, position: int, steps: tuple[Step, ...], mark: Mark) -> None:
    for offset, step in enumerate(steps):
        events.steps.insert(position + offset, dict(step))
        events.marks.insert(position + offset, mark)


@st.composite
def lane_orders(draw: st.DrawFn, lanes: list[Lane]) -> Lane:
    """The lanes' events one lane after another, as the real APIs send them, or
    interleaved (T3) with the lanes still opening in index order."""
    if len(lanes) < 2 or not draw(BOOLEANS):
        return list(itertools.chain.from_iterable(lanes))
    waiting = [list(lane) for lane in lanes]
    open_lanes: list[Lane] = []
    out = []
    while waiting or open_lanes:
        # The open lanes first, the next lane to open last: 0 continues the oldest.
        choice = draw(upto(len(open_lanes) - (0 if waiting else 1)))
        if choice == len(open_lanes):
            open_lanes.append(waiting.pop(0))
        lane = open_lanes[choice]
        out.append(lane.pop(0))
        if not lane:
            open_lanes.pop(choice)
    return out
