"""Cases in flight (conformance.run.schedule): whatever order cases start and end in, the run's
byte budget leaves out the cases a serial run leaves out, and what is held stays bounded."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, strategies as st

from conformance.run.schedule import CaseSchedule, run_scheduled


def serially_left_out(kept: list[int], max_bytes: int) -> set[int]:
    """A serial run: a case starts only while the cases before it kept less than the budget."""
    spent, left_out = 0, set()
    for position, size in enumerate(kept):
        if spent >= max_bytes:
            left_out.add(position)
        else:
            spent += size
    return left_out


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[int], int, list[int], int, st.DataObject]:
    kept = draw(st.lists(st.integers(0, 10), max_size=12))
    order = draw(st.permutations(range(len(kept))))
    return kept, draw(st.integers(1, 30)), order, draw(st.integers(1, 4)), draw(st.data())


@given(runs())
def test_any_order_leaves_out_what_a_serial_run_leaves_out(
    run: tuple[list[int], int, list[int], int, st.DataObject],
) -> None:
    kept, max_bytes, order, jobs, data = run
    schedule = CaseSchedule(order, max_bytes)
    running: list[int] = []
    ended: set[int] = set()
    ran: set[int] = set()
    while True:
        position = None
        if len(running) < jobs and (not running or data.draw(st.booleans())):
            position = schedule.take()
            if position is None and not running:
                break
        if isinstance(position, int):
            if schedule.skips(position):
                schedule.ended(position, 0)
                ended.add(position)
            else:
                running.append(position)
                ran.add(position)
            continue
        assert running, "the schedule waits with nothing running"
        done = running.pop(data.draw(st.integers(0, len(running) - 1)))
        schedule.ended(done, kept[done])
        ended.add(done)
        frontier = min(set(range(len(kept))) - ended, default=len(kept))
        held = sum(kept[p] for p in ended if p > frontier)
        assert held < max_bytes + jobs * 10, "held past the budget and the cases in flight"
    assert schedule.left_out == serially_left_out(kept, max_bytes)
    if jobs == 1 and order == sorted(order):
        assert not ran & schedule.left_out, "one at a time in order: nothing runs for nothing"


def test_without_a_budget_nothing_is_left_out_and_cases_start_in_order() -> None:
    schedule = CaseSchedule([2, 0, 1])
    assert [schedule.take(), schedule.take(), schedule.take(), schedule.take()] == [2, 0, 1, None]
    for position in (2, 0, 1):
        assert not schedule.skips(position)
        schedule.ended(position, 10**9)
    assert schedule.left_out == set()


def test_an_order_must_name_each_case_once() -> None:
    with pytest.raises(ValueError, match="each position"):
        CaseSchedule([0, 0, 2])


def test_run_scheduled_keeps_jobs_in_flight_and_no_more() -> None:
    in_flight, most = 0, 0

    async def run_case(position: int) -> int:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.01 * (position % 3))
        in_flight -= 1
        return 0

    asyncio.run(run_scheduled(CaseSchedule(range(10)), 3, run_case))
    assert most == 3
    most = 0
    asyncio.run(run_scheduled(CaseSchedule(range(2)), 8, run_case))
    assert most == 2  # never more than there are cases
