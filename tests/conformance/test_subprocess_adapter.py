"""Tests of the subprocess adapter session (ADAPTER-PROTOCOL.md, "Failure of the adapter itself").

Each hostile behaviour must become the right recorded status for its case, and the next case
must still run: a misbehaving adapter never stops the run, and close() leaves no process behind.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from conformance.adapters.base import AdapterLoadError, CaseRun
from conformance.adapters.case_log import MAX_CASE_BYTES
from conformance.adapters.subprocess import SubprocessAdapterSession, _StderrTail
from conformance.events import End, Finish, RetryPolicy, RunCase, TextDelta

HOSTILE = Path(__file__).parent / "adapters_hostile" / "hostile_adapter.py"
TIMEOUT_S = 0.5
GRACE_S = 0.5  # the suite's grace is 2 s; shorter here to keep the file fast
_T = TypeVar("_T")


def command(*flags: str) -> str:
    return shlex.join([sys.executable, str(HOSTILE), *flags])


def make_case(case_id: str) -> RunCase:
    return RunCase(
        case=case_id,
        base_url=f"http://127.0.0.1:9/{case_id}/v1",  # never contacted by the hostile adapter
        api_key="sk-test",
        request={"model": "fake-model", "stream": True, "messages": []},
        retry=RetryPolicy(max_retries=0, initial_delay_ms=1, max_delay_ms=1, jitter_ratio=0),
        idle_timeout_s=TIMEOUT_S,
        timeout_s=TIMEOUT_S,
    )


def run(body: Callable[[], Awaitable[_T]]) -> _T:
    async def main() -> _T:
        return await body()

    return asyncio.run(main())


async def start(
    *flags: str,
    hello_timeout_s: float = 10.0,
    max_events_per_case: int = 100_000,
    max_case_bytes: int = MAX_CASE_BYTES,
) -> SubprocessAdapterSession:
    return await SubprocessAdapterSession.start(
        command(*flags),
        hello_timeout_s=hello_timeout_s,
        grace_s=GRACE_S,
        max_events_per_case=max_events_per_case,
        max_case_bytes=max_case_bytes,
    )


async def run_cases(session: SubprocessAdapterSession, *case_ids: str) -> list[CaseRun]:
    return [await session.run_case(make_case(case_id), None) for case_id in case_ids]


def is_running(pid: int) -> bool:
    """True while the process exists and is not a zombie (Linux /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, within_s: float = 2.0) -> bool:
    deadline = time.monotonic() + within_s
    while is_running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def assert_completed(result: CaseRun, case_id: str) -> None:
    assert result.status == "completed", result.detail
    assert result.detail == ""
    assert [type(e) for e in result.events] == [Finish, End]
    assert all(e.case == case_id for e in result.events)


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc"),
]


def test_echo_adapter_completes_cases_and_close_reaps_it() -> None:
    async def body() -> tuple[SubprocessAdapterSession, list[CaseRun], int | None]:
        session = await start()
        pid = session.pid
        results = await run_cases(session, "c-1", "c-2")
        assert session.pid == pid  # no restart between good cases
        await session.close()
        return session, results, pid

    session, results, pid = run(body)
    assert session.hello.name == "hostile"
    assert session.hello.protocol == 1
    assert session.hello.capabilities.deltas
    assert_completed(results[0], "c-1")
    assert_completed(results[1], "c-2")
    assert results[0].stderr == ""
    assert pid is not None and wait_gone(pid)
    assert session.pid is None


def test_hang_is_a_timeout_kills_the_process_group_and_restarts() -> None:
    async def body() -> tuple[list[CaseRun], int | None, int | None, float]:
        session = await start()
        first_pid = session.pid
        begun = time.monotonic()
        hung = await session.run_case(make_case("c-hang"), None)
        elapsed = time.monotonic() - begun
        after = await session.run_case(make_case("c-2"), None)
        second_pid = session.pid
        await session.close()
        return [hung, after], first_pid, second_pid, elapsed

    (hung, after), first_pid, second_pid, elapsed = run(body)
    assert hung.status == "timeout"
    assert "no `end` within 1 s" in hung.detail
    assert TIMEOUT_S + GRACE_S <= elapsed < TIMEOUT_S + GRACE_S + 2
    grandchild = int(re.findall(r"grandchild=(\d+)", hung.stderr)[0])
    assert wait_gone(grandchild), "the grandchild sharing the pipes must die with the group"
    assert first_pid is not None and wait_gone(first_pid)
    assert second_pid is not None and second_pid != first_pid
    assert_completed(after, "c-2")
    assert wait_gone(second_pid)


def escaped_pid(result: CaseRun) -> int:
    return int(re.findall(r"escaped=(\d+)", result.stderr)[0])


def test_a_descendant_that_left_the_process_group_dies_at_the_restart() -> None:
    async def body() -> tuple[CaseRun, bool]:
        session = await start()
        hung = await session.run_case(make_case("c-escape-hang"), None)
        await session.run_case(make_case("c-2"), None)  # after the restart
        escaped_gone = wait_gone(escaped_pid(hung))
        await session.close()
        return hung, escaped_gone

    hung, escaped_gone = run(body)
    assert hung.status == "timeout"
    assert escaped_gone, "a double-forked grandchild in a session of its own must die too"


def test_a_descendant_that_left_the_process_group_dies_at_the_end_of_the_run() -> None:
    async def body() -> tuple[CaseRun, bool]:
        session = await start()
        result = await session.run_case(make_case("c-escape"), None)
        still_running = is_running(escaped_pid(result))
        await session.close()
        return result, still_running

    result, running_during_the_run = run(body)
    assert_completed(result, "c-escape")
    assert running_during_the_run
    assert wait_gone(escaped_pid(result))


def test_exit_mid_case_is_a_crash_with_exit_code_and_stderr() -> None:
    async def body() -> tuple[list[CaseRun], int | None, int | None]:
        session = await start()
        first_pid = session.pid
        results = await run_cases(session, "c-exit", "c-2")
        second_pid = session.pid
        await session.close()
        return results, first_pid, second_pid

    (crashed, after), first_pid, second_pid = run(body)
    assert crashed.status == "crash"
    assert "exited with code 3" in crashed.detail
    assert "about to die" in crashed.stderr
    assert [e.type for e in crashed.events] == ["block-start"]  # what came before is kept
    assert first_pid != second_pid
    assert_completed(after, "c-2")


def test_garbage_line_is_a_protocol_error_and_stays_in_sync() -> None:
    async def body() -> tuple[list[CaseRun], set[int | None]]:
        session = await start()
        pids = {session.pid}
        results = await run_cases(session, "c-garbage", "c-2")
        pids.add(session.pid)
        await session.close()
        return results, pids

    (bad, after), pids = run(body)
    assert bad.status == "protocol-error"
    assert "not valid JSON" in bad.detail
    assert "'this is not json {'" in bad.detail
    assert [type(e) for e in bad.events] == [Finish, End]  # read on to the case's end
    assert len(pids) == 1  # still in sync: no restart needed
    assert_completed(after, "c-2")


def test_event_for_another_case_is_a_protocol_error() -> None:
    (bad, after) = run(lambda: _run_and_close(start(), "c-other", "c-2"))
    assert bad.status == "protocol-error"
    assert "event for case 'someone-else'" in bad.detail
    assert all(e.case == "c-other" for e in bad.events)  # the stray event is not kept
    assert_completed(after, "c-2")


def test_huge_line_is_a_protocol_error_not_a_crash() -> None:
    (bad, after) = run(lambda: _run_and_close(start(), "c-huge", "c-2"))
    assert bad.status == "protocol-error"
    assert "line longer than" in bad.detail
    assert len(bad.detail) < 400  # quotes at most 200 characters of the line
    assert [type(e) for e in bad.events] == [Finish, End]
    assert_completed(after, "c-2")


def test_flood_is_capped_then_drained_to_end() -> None:
    session = start(max_events_per_case=1000)
    (bad, after) = run(lambda: _run_and_close(session, "c-flood", "c-2"))
    assert bad.status == "protocol-error"
    assert "more than 1000 events" in bad.detail
    assert len(bad.events) == 1001
    assert isinstance(bad.events[0], TextDelta)
    assert isinstance(bad.events[-1], End)
    assert_completed(after, "c-2")


def test_a_flood_past_the_byte_cap_keeps_no_more_than_the_cap() -> None:
    session = start(max_case_bytes=100_000)
    (bad, after) = run(lambda: _run_and_close(session, "c-flood", "c-2"))
    assert bad.status == "protocol-error"
    assert bad.detail == "more than 100000 bytes of events in one case (MAX_CASE_BYTES)"
    assert 99_900 < bad.kept_bytes <= 100_100  # up to the cap, and `end` after it
    assert len(bad.events) < 2_000  # of the 20 000 sent
    assert isinstance(bad.events[-1], End)
    assert_completed(after, "c-2")


def test_endless_flood_is_a_bounded_timeout() -> None:
    session = start(max_events_per_case=1000)
    (bad, after) = run(lambda: _run_and_close(session, "c-flood-forever", "c-2"))
    assert bad.status == "protocol-error"  # the first problem decides; the timeout is noted
    assert "more than 1000 events" in bad.detail
    assert "then no `end` within" in bad.detail
    assert len(bad.events) == 1000
    assert_completed(after, "c-2")


def test_protocol_error_does_not_wait_longer_than_the_timeout() -> None:
    begun = time.monotonic()
    (bad, after) = run(lambda: _run_and_close(start(), "c-garbage-hang", "c-2"))
    assert time.monotonic() - begun < TIMEOUT_S + GRACE_S + 3
    assert bad.status == "protocol-error"
    assert "'garbage before a hang'" in bad.detail
    assert "then no `end` within 1 s" in bad.detail
    assert_completed(after, "c-2")


def test_stderr_is_captured_per_case() -> None:
    (noisy, after) = run(lambda: _run_and_close(start(), "c-stderr", "c-2"))
    assert_completed(noisy, "c-stderr")
    assert "stderr-marker-c-stderr" in noisy.stderr
    assert_completed(after, "c-2")
    assert after.stderr == ""


def test_cancelled_case_restarts_the_adapter() -> None:
    async def body() -> tuple[CaseRun, int | None, int | None]:
        session = await start()
        first_pid = session.pid
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(session.run_case(make_case("c-hang"), None), 0.3)
        after = await session.run_case(make_case("c-2"), None)
        second_pid = session.pid
        await session.close()
        return after, first_pid, second_pid

    after, first_pid, second_pid = run(body)
    assert_completed(after, "c-2")
    assert first_pid is not None and wait_gone(first_pid)
    assert second_pid is not None and second_pid != first_pid and wait_gone(second_pid)


def test_close_terminates_an_adapter_that_ignores_stdin_eof() -> None:
    async def body() -> tuple[CaseRun, int | None, float]:
        session = await start("--ignore-eof")
        pid = session.pid
        result = await session.run_case(make_case("c-1"), None)
        begun = time.monotonic()
        await session.close()
        return result, pid, time.monotonic() - begun

    result, pid, closing_s = run(body)
    assert_completed(result, "c-1")
    assert 1.5 < closing_s < 5  # waited for a clean exit, then SIGTERM ended it
    assert pid is not None and wait_gone(pid)


def test_failed_restart_makes_every_remaining_case_a_crash(tmp_path: Path) -> None:
    marker = str(tmp_path / "greeted")

    async def body() -> list[CaseRun]:
        session = await start("--hello-once", marker)
        results = await run_cases(session, "c-exit", "c-2", "c-3")
        await session.close()
        return results

    crashed, second, third = run(body)
    assert crashed.status == "crash"
    for result in (second, third):
        assert result.status == "crash"
        assert "restart failed" in result.detail
        assert "stdout closed before the hello line" in result.detail
        assert result.events == []


def test_missing_hello_is_a_load_error_with_stderr_and_no_leftover() -> None:
    begun = time.monotonic()
    with pytest.raises(AdapterLoadError) as raised:
        run(lambda: start("--no-hello", hello_timeout_s=0.5))
    assert time.monotonic() - begun < 3
    message = str(raised.value)
    assert "no hello line within 0.5 s" in message
    assert "no hello from me" in message  # the stderr tail
    pid = int(re.findall(r"pid=(\d+)", message)[0])
    assert wait_gone(pid)


def test_wrong_protocol_version_is_a_load_error() -> None:
    with pytest.raises(AdapterLoadError, match="protocol 2, the suite speaks 1"):
        run(lambda: start("--protocol", "2"))


@pytest.mark.parametrize(
    ("bad_command", "message"),
    [
        ("", "empty"),
        ("'unclosed", "cannot parse"),
        ("/nonexistent/adapter --flag", "cannot start"),
    ],
)
def test_unstartable_command_is_a_load_error(bad_command: str, message: str) -> None:
    with pytest.raises(AdapterLoadError, match=message):
        run(lambda: SubprocessAdapterSession.start(bad_command))


async def run_together(session: SubprocessAdapterSession, *case_ids: str) -> list[CaseRun]:
    return list(
        await asyncio.gather(*(session.run_case(make_case(case_id), None) for case_id in case_ids))
    )


def pid_of(result: CaseRun) -> int:
    """The pid a `whoami` case reports on its stderr."""
    return int(re.findall(r"pid=(\d+)", result.stderr)[0])


def test_cases_in_flight_run_in_a_pool_of_processes_that_restart_each_on_its_own() -> None:
    async def body() -> tuple[list[CaseRun], tuple[int, ...], list[CaseRun], list[CaseRun]]:
        session = await start()
        try:
            first = await run_together(session, "c-whoami-1", "c-whoami-2", "c-whoami-3")
            pool = session.pids
            hung = await run_together(session, "c-hang", "c-whoami-4", "c-whoami-5")
            after = await run_together(session, "c-whoami-6", "c-whoami-7", "c-whoami-8")
        finally:
            await session.close()
        assert session.pids == ()
        return first, pool, hung, after

    first, pool, hung, after = run(body)
    assert all(result.status == "completed" for result in [*first, *after])
    pids = {pid_of(result) for result in first}
    assert len(pids) == 3 and set(pool) == pids  # three in flight: three processes
    assert hung[0].status == "timeout" and [r.status for r in hung[1:]] == ["completed"] * 2
    # Only the process that hung was replaced; the other two served on.
    survivors = {pid_of(result) for result in hung[1:]}
    again = {pid_of(result) for result in after}
    assert len(again) == 3 and again & pids == survivors and len(survivors) == 2
    assert all(wait_gone(pid) for pid in pids | again)


def test_a_pool_never_has_more_processes_than_cases_in_flight() -> None:
    async def body() -> tuple[int, ...]:
        session = await start()
        try:
            await run_cases(session, "c-whoami-1", "c-whoami-2", "c-whoami-3")
            return session.pids
        finally:
            await session.close()

    assert len(run(body)) == 1


def test_a_command_that_cannot_run_twice_keeps_a_pool_of_one(tmp_path: Path) -> None:
    marker = str(tmp_path / "greeted")  # only the first process greets

    async def body() -> list[CaseRun]:
        session = await start("--hello-once", marker)
        try:
            return await run_together(session, "c-whoami-1", "c-whoami-2", "c-whoami-3")
        finally:
            await session.close()

    results = run(body)
    assert [result.status for result in results] == ["completed"] * 3
    assert len({pid_of(result) for result in results}) == 1


def test_stderr_tail_is_bounded_and_per_mark() -> None:
    tail = _StderrTail(keep=10)
    tail.append(b"before")
    mark = tail.mark()
    tail.append(b"0123456789abcdef")
    assert tail.since(mark) == "[6 earlier bytes dropped]\n6789abcdef"
    assert tail.since(tail.mark()) == ""
    assert tail.tail(4) == "cdef"


async def _run_and_close(
    starting: Awaitable[SubprocessAdapterSession], *case_ids: str
) -> list[CaseRun]:
    """Run the cases, close the session, and check that no adapter process survived it."""
    session = await starting
    pids = {session.pid}
    results = []
    try:
        for case_id in case_ids:
            results.append(await session.run_case(make_case(case_id), None))
            pids.add(session.pid)
    finally:
        await session.close()
    assert session.pid is None
    assert all(wait_gone(pid) for pid in pids if pid is not None)
    return results
