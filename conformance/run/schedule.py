"""Several cases in flight (``--jobs``), with the results a serial run would give.

Cases start in a given order (the longest first) and end in any order; their results are
kept by position, so that a run lists them in scenario order whatever order they ended in.

A run also has a budget of kept events (``MAX_RUN_BYTES``): a serial run leaves out each case
that starts once the cases before it have kept the budget. :class:`CaseSchedule` leaves out
the same cases whatever order they run and end in. A case is known to be left out as soon as
every case before it in scenario order has ended (the *frontier* has passed it); one can be
skipped before it starts once the cases the frontier passed have spent the budget. What ended
beyond the frontier is held until the frontier reaches it, so past a budget's worth held, the
schedule starts nothing but the frontier's own case: memory stays bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from enum import Enum


class Wait(Enum):
    WAIT = "wait"  # take(): nothing may start until a case ends


WAIT = Wait.WAIT


class CaseSchedule:
    """Which case starts next, and which the run's byte budget leaves out."""

    def __init__(self, order: Sequence[int], max_bytes: int | None = None) -> None:
        """``order``: the positions 0..n-1 of the cases, in the order they should start;
        ``max_bytes``: the budget of kept events (None: no budget)."""
        if sorted(order) != list(range(len(order))):
            raise ValueError("order must hold each position 0..n-1 once")
        self.size = len(order)
        self._unstarted = list(order)
        self._max_bytes = max_bytes
        self._ended: dict[int, int] = {}  # ended beyond the frontier: position -> kept bytes
        self._held_bytes = 0  # their sum
        self._frontier = 0  # every case before it has ended and been counted
        self._spent = 0  # bytes kept by the counted cases, as a serial run counts them
        self.left_out: set[int] = set()  # the cases a serial run would not have run

    def take(self) -> int | Wait | None:
        """The next case to start; None when every case has started; WAIT when too much is
        held beyond the frontier and the frontier's case is running already."""
        if not self._unstarted:
            return None
        if self._max_bytes is not None and self._held_bytes >= self._max_bytes:
            if self._frontier not in self._unstarted:
                return WAIT
            self._unstarted.remove(self._frontier)
            return self._frontier
        return self._unstarted.pop(0)

    def skips(self, position: int) -> bool:
        """Whether the case at ``position`` is left out without running: the cases before it
        have kept the budget already (what a serial run would see when it came to it)."""
        if not self._budget_spent():
            return False
        self.left_out.add(position)
        return True

    def ended(self, position: int, kept_bytes: int) -> None:
        """Record that the case at ``position`` ended keeping ``kept_bytes`` (0 if skipped);
        a case the frontier passes once the budget is spent joins ``left_out``, run or not."""
        self._ended[position] = kept_bytes
        self._held_bytes += kept_bytes
        while self._frontier in self._ended:
            kept = self._ended.pop(self._frontier)
            self._held_bytes -= kept
            if self._budget_spent():
                self.left_out.add(self._frontier)
            else:
                self._spent += kept
            self._frontier += 1

    def _budget_spent(self) -> bool:
        return self._max_bytes is not None and self._spent >= self._max_bytes


async def run_scheduled(
    schedule: CaseSchedule,
    jobs: int,
    run_case: Callable[[int], Awaitable[int]],
    stop: Awaitable[object] | None = None,
) -> None:
    """Run cases as ``schedule`` hands them out, ``jobs`` at a time (never more than there
    are cases); ``run_case(position)`` returns the bytes the case kept. The first exception
    stops the run; so does ``stop`` once it is done (a signal): the cases in flight are
    cancelled, no more start, and this returns."""
    turn = asyncio.Condition()

    async def next_case() -> int | None:
        async with turn:
            while (position := schedule.take()) is WAIT:
                await turn.wait()
            return position

    async def worker() -> None:
        while (position := await next_case()) is not None:
            kept_bytes = await run_case(position)
            async with turn:
                schedule.ended(position, kept_bytes)
                turn.notify_all()

    async def every_worker() -> None:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(jobs, schedule.size)):
                group.create_task(worker())

    if stop is None:
        await every_worker()
        return
    running = asyncio.ensure_future(every_worker())
    stopping = asyncio.ensure_future(stop)
    try:
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not running.done():
            running.cancel()
            await asyncio.wait({running})
    if not running.cancelled():
        running.result()  # what a case raised
