"""A Python adapter is under the watchdog a subprocess adapter is under: a case past its
deadline is a ``timeout`` whose producer is stopped and whose later output is not kept, a
coroutine that blocks its event loop cannot stall the run (the next case runs on a fresh
loop, with a fresh provider), and a flood is cut at the case's byte cap (and the producer
stopped there)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from unreachable_case import unreachable_case

from conformance.adapters.base import CaseRun, PythonAdapterSession
from conformance.adapters.reference import ReferenceAdapter
from conformance.events import Capabilities, End, Event, Finish, Hello, RunCase, TextDelta
from conformance.options import RunOptions, Transport, bundled_fixtures
from conformance.results import RunResult
from conformance.run.runner import run_suite
from fakeprovider.fixtures import load_fixtures

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]

HELLO = Hello(protocol=1, name="watched", version="0", capabilities=Capabilities(deltas=True))
TIMEOUT_S = 0.3
GRACE_S = 0.2
WAIT_S = 10.0  # how long a test waits for something that should happen at once


def make_case(case_id: str) -> RunCase:
    return unreachable_case(case_id, TIMEOUT_S)


def delta(text: str = "a") -> TextDelta:
    return TextDelta(index=0, text=text)


class Trickling:
    """A sync adapter that yields an event every few milliseconds, for ever."""

    hello = HELLO

    def __init__(self) -> None:
        self.yielded = 0
        self.stopped = threading.Event()  # its generator was closed

    def run(self, case: RunCase) -> Iterator[TextDelta]:
        try:
            while True:
                self.yielded += 1
                yield delta()
                time.sleep(0.005)
        finally:
            self.stopped.set()


def test_a_sync_case_past_its_deadline_is_stopped_and_its_later_output_dropped() -> None:
    adapter = Trickling()

    async def body() -> tuple[CaseRun, int, bool]:
        session = PythonAdapterSession(adapter, grace_s=GRACE_S)
        timed_out = await session.run_case(make_case("c-trickle"), None)
        kept = len(timed_out.events)
        # The runner's loop goes on (as in a run): the producer must stop by itself.
        stopped = await asyncio.to_thread(adapter.stopped.wait, WAIT_S)
        await session.close()
        return timed_out, kept, stopped

    timed_out, kept, stopped = asyncio.run(body())
    assert timed_out.status == "timeout"
    assert timed_out.detail == f"no end within {TIMEOUT_S + GRACE_S:g} s"
    assert stopped, "the generator of a timed-out case must be closed"
    assert len(timed_out.events) == kept  # nothing was added after the deadline
    assert adapter.yielded <= kept + 1  # one more at most: the event that was refused


class BlockingTheLoop:
    """An async adapter whose first case blocks its event loop (a sync wait in a coroutine)
    until released; later cases are fine."""

    hello = HELLO

    def __init__(self) -> None:
        self.release = threading.Event()

    async def run(self, case: RunCase) -> AsyncIterator[TextDelta | Finish]:
        yield delta("before")
        if case.case == "c-block":
            self.release.wait(WAIT_S)  # blocks whatever loop runs this coroutine
        yield Finish(reason="stop")


def test_an_async_case_that_blocks_its_loop_is_a_timeout_and_the_run_goes_on() -> None:
    adapter = BlockingTheLoop()

    async def body() -> tuple[CaseRun, CaseRun, bool]:
        session = PythonAdapterSession(adapter, grace_s=GRACE_S)
        blocked = await session.run_case(make_case("c-block"), None)
        after = await session.run_case(make_case("c-after"), None)
        still_blocked = not adapter.release.is_set()
        adapter.release.set()
        await session.close()
        return blocked, after, still_blocked

    blocked, after, still_blocked = asyncio.run(body())
    assert blocked.status == "timeout"
    assert [event.type for event in blocked.events] == ["text-delta"]
    assert still_blocked  # the next case ran while the first one's loop was still blocked
    assert after.status == "completed", after.detail
    assert [event.type for event in after.events] == ["text-delta", "finish", "end"]


class Flooding:
    """Yields 1 KiB events for ever, from a sync or an async generator."""

    hello = HELLO

    def __init__(self, asynchronous: bool) -> None:
        self.asynchronous = asynchronous
        self.stopped = threading.Event()

    def run(self, case: RunCase) -> Iterator[TextDelta] | AsyncIterator[TextDelta]:
        return self._async_run() if self.asynchronous else self._sync_run()

    def _sync_run(self) -> Iterator[TextDelta]:
        try:
            while True:
                yield delta("x" * 1024)
        finally:
            self.stopped.set()

    async def _async_run(self) -> AsyncIterator[TextDelta]:
        try:
            while True:
                yield delta("x" * 1024)
        finally:
            self.stopped.set()


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_flood_is_cut_at_the_case_byte_cap_and_its_producer_stopped(asynchronous: bool) -> None:
    adapter = Flooding(asynchronous)
    session = PythonAdapterSession(adapter, max_case_bytes=100_000)

    run = asyncio.run(session.run_case(make_case("c-flood"), None))

    assert run.status == "protocol-error"
    assert run.detail == "more than 100000 bytes of events in one case (MAX_CASE_BYTES)"
    assert 100_000 - 1100 < run.kept_bytes <= 100_000
    assert adapter.stopped.wait(WAIT_S)
    asyncio.run(session.close())


class BlockingReference:
    """The reference adapter, except that its case "c-block" first blocks its loop."""

    def __init__(self) -> None:
        self.reference = ReferenceAdapter()
        self.hello = self.reference.hello
        self.release = threading.Event()

    async def run(
        self, case: RunCase, http_client: httpx.AsyncClient | None = None
    ) -> AsyncIterator[Event]:
        if case.case == "c-block":
            self.release.wait(WAIT_S)
        async for event in self.reference.run(case, http_client=http_client):
            yield event


@pytest.mark.parametrize("transport", ["loopback", "in-process"])
def test_after_a_blocked_loop_the_run_goes_on_with_a_provider_on_the_fresh_loop(
    transport: Transport,
) -> None:
    corpus = {scenario.id: scenario for scenario in load_fixtures([bundled_fixtures()])}
    normal = [corpus["tool-cont-null-id-name"], corpus["utf8-byte-split"]]
    scenarios = [normal[0].model_copy(update={"id": "c-block"}), *normal]
    adapter = BlockingReference()

    async def body() -> RunResult:
        session = PythonAdapterSession(adapter, grace_s=GRACE_S)
        try:
            options = RunOptions(timeout_s=1.0, transport=transport)
            return await run_suite(session, scenarios, options)
        finally:
            adapter.release.set()
            await session.close()

    result = asyncio.run(body())
    blocked, *after = result.cases
    assert blocked.status == "timeout"
    for case in after:
        assert case.status == "completed", case.detail
        assert not [v for v in case.verdicts.values() if v.verdict in ("fail", "non-strict")]


def test_a_blocked_loop_with_cases_in_flight_times_them_out_and_the_run_goes_on() -> None:
    """Cases in flight share the adapter's loop: those beside the one that blocks it time out
    with it; each abandons that loop once, and the cases after run on one fresh loop."""
    corpus = {scenario.id: scenario for scenario in load_fixtures([bundled_fixtures()])}
    normal = corpus["tool-cont-null-id-name"]
    ids = ["c-block", "beside-1", "beside-2", "after-1", "after-2", "after-3"]
    scenarios = [normal.model_copy(update={"id": case_id}) for case_id in ids]
    adapter = BlockingReference()

    async def body() -> RunResult:
        session = PythonAdapterSession(adapter, grace_s=GRACE_S)
        try:
            return await run_suite(session, scenarios, RunOptions(timeout_s=1.0), jobs=3)
        finally:
            adapter.release.set()
            await session.close()

    result = asyncio.run(body())
    statuses = {case.case: case.status for case in result.cases}
    assert statuses == dict.fromkeys(ids[:3], "timeout") | dict.fromkeys(ids[3:], "completed")


class GoingOnAfterEnd:
    """Yields a finished case, then more events for ever."""

    hello = HELLO

    def __init__(self) -> None:
        self.stopped = threading.Event()

    def run(self, case: RunCase) -> Iterator[TextDelta | Finish | End]:
        try:
            yield Finish(reason="stop")
            yield End()
            while True:
                yield delta()
        finally:
            self.stopped.set()


def test_a_case_is_over_at_its_end_event() -> None:
    adapter = GoingOnAfterEnd()
    session = PythonAdapterSession(adapter)

    run = asyncio.run(session.run_case(make_case("c-end"), None))

    assert run.status == "completed", run.detail
    assert [event.type for event in run.events] == ["finish", "end"]
    assert adapter.stopped.is_set()
    asyncio.run(session.close())
