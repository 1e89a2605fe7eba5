"""A real command started, signalled mid-run, and what it left behind.

The command runs with a marker in its environment, which everything it starts inherits
(adapter processes, the sleepers they abandon, fuzz workers, multiprocessing's resource
tracker): once it has exited, no process may carry the marker any more.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "conformance" / "adapters_hostile" / "hostile_adapter.py"
MARKER = "STREAMCONFORM_SIGNAL_TEST"
_PROC = Path("/proc")


def sleepy_adapter(cases_log: Path, slow_s: float = 0.1) -> str:
    """An adapter command whose every process leaves two sleepers (one out of its process
    group) and logs each case as it starts, each case ``slow_s`` long."""
    return (
        f"{sys.executable} {HOSTILE} --delegate --sleepers --slow {slow_s} --cases-log {cases_log}"
    )


@dataclass(frozen=True)
class Stopped:
    returncode: int
    stdout: str
    stderr: str
    survivors: list[int]  # pids still carrying the marker a moment after the exit

    @property
    def stderr_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


def run_signalled(
    args: Sequence[str | Path],
    started: Callable[[], bool],
    signals: Sequence[signal.Signals],
    *,
    cwd: Path = REPO,
    timeout_s: float = 60.0,
    to_group: bool = False,
    module: str = "conformance",
    stdout: Path | None = None,
    stderr: Path | None = None,
) -> Stopped:
    """Start ``python -m <module> args`` in a session of its own; once ``started()``
    holds, send ``signals`` (0.2 s apart) to it, or with ``to_group`` to its process group
    (as a terminal's Ctrl-C reaches every process of the foreground job); wait for its
    exit. ``stdout``, ``stderr``: files for its output, to watch as it runs."""
    token = secrets.token_hex(8)
    output = None if stdout is None else stdout.open("w")
    errors = None if stderr is None else stderr.open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", module, *map(str, args)],
        cwd=cwd,
        env={**os.environ, MARKER: token},
        stdout=subprocess.PIPE if output is None else output,
        stderr=subprocess.PIPE if errors is None else errors,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + timeout_s
        while not started():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the command never got going"
            time.sleep(0.05)
        for number, signum in enumerate(signals):
            if number:
                time.sleep(0.2)
            if to_group:
                os.killpg(process.pid, signum)
            else:
                process.send_signal(signum)
        out, err = process.communicate(timeout=timeout_s)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        for file in (output, errors):
            if file is not None:
                file.close()
    shown = out if stdout is None else stdout.read_text()
    shown_err = err if stderr is None else stderr.read_text()
    return Stopped(process.returncode, shown, shown_err, _survivors(token))


def lines_in(path: Path, count: int) -> Callable[[], bool]:
    """Whether ``path`` has ``count`` lines (an adapter's --cases-log: cases begun)."""

    def enough() -> bool:
        return path.exists() and len(path.read_text().splitlines()) >= count

    return enough


def later(started: Callable[[], bool], seconds: float) -> Callable[[], bool]:
    """Whether ``seconds`` have passed since ``started()`` first held (for a command whose
    first output says it began, not how far it got)."""
    deadline: list[float] = []

    def due() -> bool:
        if not deadline and started():
            deadline.append(time.monotonic() + seconds)
        return bool(deadline) and time.monotonic() >= deadline[0]

    return due


def after(seconds: float) -> Callable[[], bool]:
    """Whether ``seconds`` have passed since this was called (for a command that shows no
    progress it can be watched by)."""
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() >= deadline


def _survivors(token: str, settle_s: float = 3.0) -> list[int]:
    """The processes still carrying ``token`` once ``settle_s`` has passed (a killed process
    takes a moment to be reaped by init)."""
    deadline = time.monotonic() + settle_s
    while (found := _carrying(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _carrying(token: str) -> list[int]:
    wanted = f"{MARKER}={token}".encode()
    found = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and wanted in environ.split(b"\0"):  # a zombie has let go
            found.append(int(entry.name))
    return found
