"""Cases in flight on a Python adapter: an async generator ``run`` has them side by side on
its loop, any other ``run`` gets them one at a time (a sync generator is not known to be
safe on several threads at once)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator

from unreachable_case import unreachable_case

from conformance.adapters.base import CaseRun, PythonAdapter, PythonAdapterSession
from conformance.events import Capabilities, End, Finish, Hello, RunCase

HELLO = Hello(protocol=1, name="counted", version="0", capabilities=Capabilities(deltas=True))
CASE_S = 0.1  # long enough for cases started together to overlap


def make_case(case_id: str) -> RunCase:
    return unreachable_case(case_id, 5.0)


class Counted:
    """Counts the cases running at once (from any thread)."""

    hello = HELLO

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self.most = 0

    def enter(self) -> None:
        with self._lock:
            self._running += 1
            self.most = max(self.most, self._running)

    def leave(self) -> None:
        with self._lock:
            self._running -= 1


class AsyncCounted(Counted):
    async def run(self, case: RunCase) -> AsyncIterator[Finish | End]:
        self.enter()
        await asyncio.sleep(CASE_S)
        self.leave()
        yield Finish(reason="stop")


class SyncCounted(Counted):
    def run(self, case: RunCase) -> Iterator[Finish | End]:
        self.enter()
        time.sleep(CASE_S)
        self.leave()
        yield Finish(reason="stop")


def run_four_at_once(adapter: PythonAdapter) -> list[CaseRun]:
    async def body() -> list[CaseRun]:
        session = PythonAdapterSession(adapter)
        try:
            cases = [make_case(f"c-{number}") for number in range(4)]
            return list(await asyncio.gather(*(session.run_case(c, None) for c in cases)))
        finally:
            await session.close()

    return asyncio.run(body())


def test_an_async_adapter_has_its_cases_side_by_side() -> None:
    adapter = AsyncCounted()
    runs = run_four_at_once(adapter)
    assert [run.status for run in runs] == ["completed"] * 4
    assert adapter.most == 4


def test_a_sync_adapter_has_its_cases_one_at_a_time() -> None:
    adapter = SyncCounted()
    runs = run_four_at_once(adapter)
    assert [run.status for run in runs] == ["completed"] * 4
    assert adapter.most == 1
