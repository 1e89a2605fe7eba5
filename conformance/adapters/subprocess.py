"""The subprocess adapter: any program speaking the JSON Lines protocol of ADAPTER-PROTOCOL.md.

The suite starts the command, reads its ``hello``, then for each case writes one ``run`` line
and reads event lines until that case's ``end``; cases run at once run in a pool of such
processes, one case per process at a time. Whatever the program does — hang, exit,
print garbage, flood — becomes a recorded :class:`CaseRun` status (``timeout``, ``crash``,
``protocol-error``), never an exception that stops the run. After a timeout or a crash the
process is killed with its whole tree (``process_tree``: descendants that left its process
group too) and a fresh one is started, with a new handshake, before the next case; at the end
of the run the same kill follows the adapter's exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal

import httpx

from ..codes import ConformanceError
from ..events import (
    End,
    EventDecodeError,
    EventFieldError,
    Hello,
    RunCase,
    parse_event_line,
    parse_hello_line,
)
from .base import GRACE_S, AdapterLoadError, CaseRun
from .case_log import MAX_CASE_BYTES, MAX_EVENTS_PER_CASE, CaseLog
from .process_tree import environment_with, kill_tree, new_token, signal_group

MAX_LINE_BYTES = 16 * 1024 * 1024  # a longer stdout line is a protocol error, not a crash
STDERR_KEEP_BYTES = 64 * 1024  # the tail of the adapter's stderr kept in memory
QUOTE_CHARS = 200  # how much of an offending line a detail quotes
ERROR_STDERR_CHARS = 2_000  # stderr tail quoted in an AdapterLoadError

_CRASH_EXIT_WAIT_S = 1.0  # after EOF on stdout, how long the process may take to exit
_CLOSE_EXIT_WAIT_S = 2.0  # after stdin is closed, how long before SIGTERM
_CLOSE_TERM_WAIT_S = 1.0  # after SIGTERM, how long before SIGKILL
_REAP_WAIT_S = 5.0  # after SIGKILL: only an unkillable (D-state) process takes longer
_STDERR_DRAIN_S = 0.5  # how long to wait for stderr EOF once the process is gone
_READ_CHUNK = 64 * 1024


class SubprocessAdapterSession:
    """An :class:`~conformance.adapters.base.AdapterSession` backed by child processes.

    Protocol v1 has one case in flight per process, so cases run at once (``--jobs``) run in
    a pool of processes of the same command: one is started with the session, another only
    when a case comes while every process is busy, so there are never more processes than
    cases in flight. Each restarts on its own after a timeout, crash or cancelled case. A
    process that cannot be added beside the others stops the pool from growing; a failed
    restart makes every remaining case a crash, as with one process.
    """

    hello: Hello

    def __init__(
        self,
        argv: list[str],
        process: _AdapterProcess,
        hello: Hello,
        *,
        hello_timeout_s: float,
        grace_s: float,
        max_events_per_case: int,
        max_case_bytes: int,
    ) -> None:
        self.hello = hello
        self._argv = argv
        self._hello_timeout_s = hello_timeout_s
        self._grace_s = grace_s
        self._max_events = max_events_per_case
        self._max_bytes = max_case_bytes
        self._slots = [_Slot(process)]  # in the order they were added
        self._idle = list(self._slots)
        self._released = asyncio.Condition()
        self._can_grow = True
        self._unusable: str | None = None  # why no process can be (re)started

    @classmethod
    async def start(
        cls,
        command: str,
        *,
        hello_timeout_s: float = 10.0,
        grace_s: float = GRACE_S,
        max_events_per_case: int = MAX_EVENTS_PER_CASE,
        max_case_bytes: int = MAX_CASE_BYTES,
    ) -> SubprocessAdapterSession:
        """Start ``command`` and complete its handshake; raise AdapterLoadError if that fails."""
        argv = _split_command(command)
        process, hello = await _launch(argv, hello_timeout_s)
        return cls(
            argv,
            process,
            hello,
            hello_timeout_s=hello_timeout_s,
            grace_s=grace_s,
            max_events_per_case=max_events_per_case,
            max_case_bytes=max_case_bytes,
        )

    @property
    def pids(self) -> tuple[int, ...]:
        """The pids of the running adapter processes (one changes when it restarts)."""
        return tuple(slot.process.pid for slot in self._slots if slot.process is not None)

    @property
    def pid(self) -> int | None:
        """The pid of the first running adapter process, if any."""
        return next(iter(self.pids), None)

    async def run_case(self, case: RunCase, http_client: httpx.AsyncClient | None) -> CaseRun:
        del http_client  # a subprocess reaches the provider over loopback, never in-process
        slot = await self._acquire()
        try:
            process = await self._running_process(slot)
            if process is None:
                return CaseRun(status="crash", detail=f"adapter unavailable: {self._unusable}")
            return await self._drive(slot, process, case)
        finally:
            await self._release(slot)

    async def close(self) -> None:
        """Close stdin, let each adapter process exit, else terminate then kill it; reap
        everything. Waits for the cases in flight to end."""
        self._unusable = "the session is closed"
        for _ in range(len(self._slots)):
            slot = await self._acquire()
            process, slot.process = slot.process, None
            if process is not None and slot.out_of_sync:
                await process.stop(exit_wait_s=0)  # mid-case: no point waiting for a clean exit
            elif process is not None:
                await process.close()

    async def _acquire(self) -> _Slot:
        """An idle slot; when every slot is busy, a new one with a process of its own (if
        the pool may still grow), else the first slot released."""
        async with self._released:
            await self._released.wait_for(lambda: bool(self._idle) or self._may_grow())
            if self._idle:
                return self._idle.pop(0)
            slot = _Slot(None)
            self._slots.append(slot)  # busy from the start: close() waits for it
        try:
            slot.process, _ = await _launch(self._argv, self._hello_timeout_s)
        except BaseException as error:
            async with self._released:
                self._slots.remove(slot)
                if isinstance(error, AdapterLoadError):
                    self._can_grow = False  # the command cannot run once more beside the others
                self._released.notify_all()
            if not isinstance(error, AdapterLoadError):
                raise
            return await self._acquire()
        return slot

    def _may_grow(self) -> bool:
        return self._can_grow and self._unusable is None

    async def _release(self, slot: _Slot) -> None:
        async with self._released:
            self._idle.append(slot)
            self._released.notify()

    async def _running_process(self, slot: _Slot) -> _AdapterProcess | None:
        """The slot's live process, restarting it after a timeout, crash or cancelled case."""
        if slot.process is not None and slot.out_of_sync:
            await slot.process.stop(exit_wait_s=0)
            slot.process, slot.out_of_sync = None, False
        if slot.process is None and self._unusable is None:
            try:
                slot.process, _ = await _launch(self._argv, self._hello_timeout_s)
            except AdapterLoadError as error:
                # Remembered so that the remaining cases fail fast instead of retrying forever.
                self._unusable = f"restart failed: {error}"
        return slot.process

    async def _drive(self, slot: _Slot, process: _AdapterProcess, case: RunCase) -> CaseRun:
        log = CaseLog(case.case, self._max_events, self._max_bytes)
        mark = process.stderr.mark()
        budget = case.timeout_s + self._grace_s
        try:
            async with asyncio.timeout(budget):
                await process.send(case.to_json_line())
                await _read_case(process, log)
        except TimeoutError:
            log.fail("timeout", f"no `end` within {budget:g} s")
            await self._retire(slot, process, exit_wait_s=0)
        except _AdapterExitedError:
            status = await self._retire(slot, process, exit_wait_s=_CRASH_EXIT_WAIT_S)
            log.fail("crash", f"stdout closed before `end`: the adapter {status}")
        except BaseException:
            slot.out_of_sync = True  # cancelled mid-case: the next case needs a fresh process
            raise
        else:
            await _let_stderr_catch_up()
        return CaseRun(
            events=log.events,
            status=log.status,
            detail=log.detail(),
            stderr=process.stderr.since(mark),
            kept=log.kept,
            invalid_field=log.invalid_field,
        )

    async def _retire(self, slot: _Slot, process: _AdapterProcess, *, exit_wait_s: float) -> str:
        """Stop a process that is hung or dead; the slot's next case restarts it. Says how it
        ended."""
        slot.process = None
        await process.stop(exit_wait_s=exit_wait_s)
        return process.describe_exit()


class _Slot:
    """One place in the pool: its process (None between a failure and the restart), and
    whether a cancelled case left it mid-case."""

    def __init__(self, process: _AdapterProcess | None) -> None:
        self.process = process
        self.out_of_sync = False


async def _read_case(process: _AdapterProcess, log: CaseLog) -> None:
    """Read event lines until this case's ``end``; problems are logged, reading goes on."""
    while True:
        try:
            line = await process.read_line()
        except _LineTooLongError as error:
            log.fail("protocol-error", f"line longer than {MAX_LINE_BYTES} bytes: {error.quote}")
            continue
        # Past the cap only `end` matters; skipping the parse keeps a flood cheap to drain.
        if log.overflowed and b'"end"' not in line:
            continue
        try:
            event = parse_event_line(line)
        except EventFieldError as error:
            log.fail("protocol-error", f"{error}: {_quote(line)}", invalid_field=error.field)
            continue
        except EventDecodeError as error:
            log.fail("protocol-error", f"{error}: {_quote(line)}")
            continue
        if event.case != log.case_id:
            log.fail("protocol-error", f"event for case {event.case!r}: {_quote(line)}")
            continue
        log.add(event, len(line))
        if isinstance(event, End):
            return


async def _let_stderr_catch_up() -> None:
    # stderr is a separate pipe read by its own task; what the adapter wrote there before
    # its `end` is usually already received, and a couple of loop turns let the task store it.
    for _ in range(3):
        await asyncio.sleep(0)


class _AdapterExitedError(ConformanceError):
    """EOF on the adapter's stdout, or its stdin is gone."""


class _LineTooLongError(ConformanceError):
    """A stdout line exceeded MAX_LINE_BYTES; it has been discarded."""

    def __init__(self, head: bytes) -> None:
        super().__init__("line too long")
        self.quote = _quote(head)


class _HandshakeError(ConformanceError):
    """The adapter's first line is missing, too long, or not a hello the suite speaks."""

    def __init__(self, problem: str, *, eof: bool = False) -> None:
        super().__init__(problem)
        self.eof = eof  # stdout closed: the process is probably exiting


class _AdapterProcess:
    """One running adapter process: line reads on stdout, a stderr tail, group-wide kill."""

    def __init__(self, proc: asyncio.subprocess.Process, tree_token: str) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self._tree_token = tree_token
        self._stdin = proc.stdin
        self._stdout = proc.stdout
        self.stderr = _StderrTail(STDERR_KEEP_BYTES)
        self._stderr_task = asyncio.create_task(self._pump_stderr(proc.stderr))
        self._exited_on_its_own = False

    @classmethod
    async def spawn(cls, argv: list[str]) -> _AdapterProcess:
        tree_token = new_token()
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=MAX_LINE_BYTES,
            # Its own session and process group, so that killing the group kills what it
            # spawned; the token in its environment finds what left the group.
            start_new_session=True,
            env=environment_with(tree_token),
        )
        return cls(proc, tree_token)

    @property
    def pid(self) -> int:
        return self._proc.pid

    async def send(self, line: str) -> None:
        try:
            self._stdin.write(line.encode() + b"\n")
            await self._stdin.drain()
        except OSError as error:  # broken pipe, connection reset: the adapter is gone
            raise _AdapterExitedError from error

    async def read_line(self) -> bytes:
        """The next stdout line; raises _AdapterExitedError at EOF, _LineTooLongError if huge."""
        try:
            return await self._stdout.readuntil(b"\n")
        except asyncio.IncompleteReadError as eof:
            if eof.partial:  # a last line without its newline still counts
                return eof.partial
            raise _AdapterExitedError from None
        except asyncio.LimitOverrunError as overrun:
            head = await self._stdout.readexactly(overrun.consumed)
            await self._skip_rest_of_line()
            raise _LineTooLongError(head[: QUOTE_CHARS * 4]) from None

    async def _skip_rest_of_line(self) -> None:
        # readuntil leaves an overlong line in the buffer; drop it piecewise up to its newline
        # so that memory stays bounded and the next read starts on a fresh line.
        while True:
            try:
                await self._stdout.readuntil(b"\n")
                return
            except asyncio.IncompleteReadError:
                return  # EOF: the next read reports it
            except asyncio.LimitOverrunError as overrun:
                await self._stdout.readexactly(overrun.consumed)

    async def close(self) -> None:
        """Graceful shutdown: EOF on stdin tells a well-behaved adapter to exit."""
        with contextlib.suppress(OSError):
            self._stdin.close()
        await self.stop(exit_wait_s=_CLOSE_EXIT_WAIT_S, term_wait_s=_CLOSE_TERM_WAIT_S)

    async def stop(self, *, exit_wait_s: float, term_wait_s: float = 0.0) -> None:
        """Wait for exit, then SIGTERM the group, then SIGKILL the whole tree; reap the
        process and the stderr pump."""
        exited = await self._exited_within(exit_wait_s)
        if not exited and term_wait_s > 0:
            signal_group(self.pid, signal.SIGTERM)
            exited = await self._exited_within(term_wait_s)
        self._exited_on_its_own = exited
        # Even after a clean exit: descendants left behind would keep running.
        kill_tree(self.pid, self._tree_token)
        await self._exited_within(_REAP_WAIT_S)
        await self._stop_stderr_pump()
        with contextlib.suppress(OSError):
            self._stdin.close()

    def describe_exit(self) -> str:
        """How the stopped process ended, for a detail message."""
        if self._exited_on_its_own:
            return _describe_exit(self._proc.returncode)
        return "did not exit by itself and was killed"

    async def _exited_within(self, seconds: float) -> bool:
        if self._proc.returncode is not None:
            return True
        try:
            await asyncio.wait_for(self._proc.wait(), seconds)
        except TimeoutError:
            return False
        return True

    async def _pump_stderr(self, reader: asyncio.StreamReader) -> None:
        while chunk := await reader.read(_READ_CHUNK):
            self.stderr.append(chunk)

    async def _stop_stderr_pump(self) -> None:
        done, _ = await asyncio.wait({self._stderr_task}, timeout=_STDERR_DRAIN_S)
        if not done:  # an escaped grandchild still holds the pipe open
            self._stderr_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, OSError):
            await self._stderr_task


class _StderrTail:
    """The last ``keep`` bytes of stderr, and what was written since a mark."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._buffer = bytearray()
        self._total = 0

    def append(self, chunk: bytes) -> None:
        self._buffer += chunk
        self._total += len(chunk)
        if len(self._buffer) > self._keep:
            del self._buffer[: len(self._buffer) - self._keep]

    def mark(self) -> int:
        return self._total

    def since(self, mark: int) -> str:
        produced = self._total - mark
        kept = min(produced, len(self._buffer))
        text = bytes(self._buffer[len(self._buffer) - kept :]).decode(errors="replace")
        dropped = produced - kept
        return f"[{dropped} earlier bytes dropped]\n{text}" if dropped else text

    def tail(self, chars: int) -> str:
        return self.since(self._total - len(self._buffer))[-chars:]


async def _launch(argv: list[str], hello_timeout_s: float) -> tuple[_AdapterProcess, Hello]:
    """Start the adapter and read its hello; raise AdapterLoadError if either fails."""
    try:
        process = await _AdapterProcess.spawn(argv)
    except OSError as error:
        raise AdapterLoadError(f"cannot start adapter {shlex.join(argv)!r}: {error}") from error
    try:
        async with asyncio.timeout(hello_timeout_s):
            return process, await _read_hello(process)
    except TimeoutError:
        problem, exit_wait_s = f"no hello line within {hello_timeout_s:g} s", 0.0
    except _HandshakeError as error:
        # Only a closed stdout suggests the process is exiting; a live one is not waited for.
        problem, exit_wait_s = str(error), _CRASH_EXIT_WAIT_S if error.eof else 0.0
    except BaseException:
        await process.stop(exit_wait_s=0)
        raise
    await process.stop(exit_wait_s=exit_wait_s)
    status = process.describe_exit()
    stderr = process.stderr.tail(ERROR_STDERR_CHARS).strip() or "(empty)"
    raise AdapterLoadError(
        f"adapter {shlex.join(argv)!r} failed its handshake: {problem} (the process {status})"
        f"\n--- adapter stderr (tail) ---\n{stderr}"
    )


async def _read_hello(process: _AdapterProcess) -> Hello:
    try:
        line = await process.read_line()
    except _AdapterExitedError:
        raise _HandshakeError("stdout closed before the hello line", eof=True) from None
    except _LineTooLongError as error:
        raise _HandshakeError(f"first line longer than {MAX_LINE_BYTES} bytes") from error
    try:
        hello = parse_hello_line(line)
    except EventDecodeError as error:
        # An unknown version or dialect included: the model names it.
        raise _HandshakeError(f"bad hello line ({error}): {_quote(line)}") from None
    return hello


def _split_command(command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise AdapterLoadError(f"cannot parse adapter command {command!r}: {error}") from error
    if not argv:
        raise AdapterLoadError("the adapter command is empty")
    return argv


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "did not exit"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with code {returncode}"


def _quote(line: bytes) -> str:
    """At most QUOTE_CHARS characters of a line, for a detail message."""
    text = line[: QUOTE_CHARS * 4].decode(errors="replace").rstrip("\r\n")
    return repr(text[:QUOTE_CHARS]) + ("…" if len(text) > QUOTE_CHARS else "")
