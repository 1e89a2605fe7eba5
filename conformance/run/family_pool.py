"""Invariant families checked side by side, each in a process of its own (``fuzz --jobs``).

A family's property runs its examples one after another (Hypothesis draws each one knowing
the last), and drawing and judging are CPU work that threads of one interpreter would take
turns at: so the families, not their examples, are spread over worker processes. A family
runs in its worker as it runs in the parent: its own adapter session and fake provider, the
same seed, hence the same draws and verdicts. The same draws need one more thing: Hypothesis
also draws from the constants in the source of the local modules a process has loaded (its
constant pool), so a worker first loads the suite's modules the parent has loaded. The slow
families (stalls and honoured Retry-After waits) start first.

A signal stops the parent, which stops its workers: a worker ignores SIGINT and SIGTERM but
while it checks a family, when either stops the family (its adapter session closed, the
adapter's process tree killed) and the worker then ends as the pool shuts down. So a Ctrl-C,
which the terminal sends to every worker too, and a SIGTERM to the parent end them alike.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from dataclasses import dataclass, field

import hypothesis

from fakeprovider.dialects import DEFAULT_DIALECT, DialectId
from fakeprovider.interrupts import STOPPING_SIGNALS, Interruption

from ..options import RunOptions, Transport
from ..strategies import family_shape
from ..strategies.profiles import PROFILES
from .case_runner import CaseRunner
from .properties import FamilyRun, check_family


@dataclass(frozen=True)
class FamilyJob:
    """Everything a worker process needs to check one family: plain, picklable data."""

    family: str
    target: str | None
    command: str | None
    options: RunOptions
    transport: Transport
    profile: str
    max_examples: int | None
    seed: int
    dialect: DialectId = DEFAULT_DIALECT
    modules: tuple[str, ...] = field(default_factory=lambda: suite_modules())


def suite_modules() -> tuple[str, ...]:
    """The suite's modules this process has loaded."""
    return tuple(sorted(name for name in sys.modules if name.partition(".")[0] in _PACKAGES))


def fuzz_settings(profile: str, max_examples: int | None) -> hypothesis.settings:
    """The Hypothesis settings of ``--hypothesis-profile`` and ``--max-examples``."""
    settings = PROFILES[profile]
    if max_examples is not None:
        settings = hypothesis.settings(settings, max_examples=max_examples)
    return settings


def check_family_job(job: FamilyJob) -> FamilyRun:
    """Check ``job.family`` with an adapter session and a provider of its own; a stopping
    signal raises KeyboardInterrupt once the session is closed."""
    interruption = Interruption()
    with interruption.caught(), interruption.deferred():
        for name in job.modules:  # what Hypothesis draws from: as in the parent
            importlib.import_module(name)
        options, transport = job.options, job.transport
        runner = CaseRunner(
            job.target, job.command, options, transport=transport, interruption=interruption
        )
        with runner:
            return check_job(runner, job)


def _idle_worker_ignores_signals() -> None:
    for signum in STOPPING_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def check_job(runner: CaseRunner, job: FamilyJob) -> FamilyRun:
    """Check ``job.family`` with ``runner``."""
    settings = fuzz_settings(job.profile, job.max_examples)
    return check_family(runner, job.family, settings=settings, seed=job.seed, dialect=job.dialect)


def check_families(
    jobs: Sequence[FamilyJob],
    processes: int,
    check_here: Callable[[FamilyJob], FamilyRun],
    interruption: Interruption | None = None,
) -> Iterator[FamilyRun]:
    """Each job's run, in the order of ``jobs``, as soon as it and those before it are done.

    ``processes`` check families at once: this process (``check_here``, on a thread, so that
    this one goes on handing out jobs) and ``processes - 1`` spawned workers, each taking the
    next job as it becomes free, the slow families first. A job's exception (an adapter that
    does not load) is raised once the running jobs have ended. A stopping signal
    ``interruption`` catches raises KeyboardInterrupt once the workers have stopped their
    families and ended.
    """
    pending = deque(sorted(range(len(jobs)), key=lambda position: not _slow(jobs[position])))
    workers = min(processes, len(jobs)) - 1
    # spawn: a worker starts clean, whatever threads this process (a test runner) has.
    context = multiprocessing.get_context("spawn")
    lanes = [
        _Lane(ThreadPoolExecutor(1, thread_name_prefix="fuzz-family"), 1, check_here),
        _Lane(
            ProcessPoolExecutor(
                max(workers, 1), mp_context=context, initializer=_idle_worker_ignores_signals
            ),
            workers,
            check_family_job,
        ),
    ]
    running: dict[Future[FamilyRun], tuple[int, _Lane]] = {}
    done: dict[int, FamilyRun] = {}
    following = 0
    try:
        while pending or running:
            for lane in lanes:
                while lane.busy < lane.size and pending:
                    position = pending.popleft()
                    running[lane.executor.submit(lane.check, jobs[position])] = (position, lane)
                    lane.busy += 1
            finished, _ = wait(running, _SIGNAL_POLL_S, return_when=FIRST_COMPLETED)
            if interruption is not None:
                interruption.raise_if_signalled()
            for future in finished:
                position, lane = running.pop(future)
                lane.busy -= 1
                done[position] = future.result()
            while following in done:
                yield done.pop(following)
                following += 1
    finally:
        for lane in lanes:
            lane.executor.shutdown(wait=False, cancel_futures=True)
        if interruption is not None and interruption.signal is not None:
            _stop_families(lanes[1].executor)
        for lane in lanes:
            lane.executor.shutdown()


def _stop_families(pool: Executor) -> None:
    """SIGTERM each worker of ``pool``: the family it checks stops (an idle one ignores it)."""
    # The pool keeps its processes by pid in a private dict: the only way to reach them.
    for pid in list(getattr(pool, "_processes", None) or ()):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


@dataclass
class _Lane:
    """Where jobs run: an executor, how many jobs it takes at once, what it calls."""

    executor: Executor
    size: int
    check: Callable[[FamilyJob], FamilyRun]
    busy: int = 0


_PACKAGES = ("conformance", "fakeprovider")
_SIGNAL_POLL_S = 0.1  # how soon the parent, waiting on its workers, heeds a signal


def _slow(job: FamilyJob) -> bool:
    return family_shape(job.family, job.dialect).slow
