"""A stream response as the server writes it: runs of writes, each after its wait.

Sans-IO: the server only loops over the runs, writing each of a run's writes in turn.
Scripted, a response is the head, then one write per scripted write (chunk-framed if
chunked), then, after the final wait, the last chunk if the body ends cleanly: the
scenario's write boundaries, as ``fakeprovider show`` prints them. Coalesced (the load
mode), the same bytes go out in fewer writes: the head and every run of writes that no
wait parts become one write.

A run is cut where the scenario waits, and also every :data:`WRITES_PER_TURN` writes or
:data:`BYTES_PER_TURN` bytes: between two such pieces the server lets other streams run
and sees whether the client keeps up, so a long body neither holds the event loop nor
piles up unsent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from .wire import LAST_CHUNK, WirePlan, frame_chunk

WRITES_PER_TURN = 256
BYTES_PER_TURN = 64 * 1024
MAX_COALESCED_BYTES = 1024 * 1024
"""A coalesced write holds at most this many bytes, or one scripted write if that is
larger: a 16 MiB body sent byte by byte is 96 MiB framed, more than is worth holding at
once, and a socket takes no more than its buffer in one send anyway."""


class Run(NamedTuple):
    """Wait ``delay_ms``, then make ``writes`` back to back, one write each.

    ``ends`` marks the run of the write that completes the body (the last chunk, or
    nothing if closing the connection ends it), which is alone in its run: the request
    log records the end just before it. A run with no writes is the final wait before an
    ending that is not clean (a reset, a stall, a disconnect).
    """

    delay_ms: float
    writes: tuple[bytes, ...]
    ends: bool = False


def scripted(head: bytes, plan: WirePlan, chunked: bool) -> Iterator[Run]:
    """One write for the head, one per scripted write, then the last chunk alone."""
    writes = [head]
    size = len(head)
    delay_ms = 0.0
    for write in plan.iter_writes():
        data = frame_chunk(write.data) if chunked else write.data
        if write.delay_ms > 0 or len(writes) == WRITES_PER_TURN or size >= BYTES_PER_TURN:
            yield Run(delay_ms, tuple(writes))
            writes, size, delay_ms = [], 0, write.delay_ms
        writes.append(data)
        size += len(data)
    yield Run(delay_ms, tuple(writes))
    ends = plan.ending == "close"
    if ends or plan.final_delay_ms > 0:
        tail = LAST_CHUNK if chunked and ends else b""
        yield Run(plan.final_delay_ms, (tail,) if tail else (), ends)


def coalesced(runs: Iterable[Run], max_bytes: int = MAX_COALESCED_BYTES) -> Iterator[Run]:
    """The same bytes, the writes between waits joined into one of at most ``max_bytes``
    (or of one write, if that is larger); made as they are iterated."""
    pending: list[bytes] = []
    size = 0
    delay_ms = 0.0
    for run in runs:
        if run.delay_ms > 0 and pending:
            yield Run(delay_ms, (b"".join(pending),))
            pending, size = [], 0
        if not pending:
            delay_ms = run.delay_ms
        for data in run.writes:
            if pending and size + len(data) > max_bytes:
                yield Run(delay_ms, (b"".join(pending),))
                pending, size, delay_ms = [], 0, 0.0
            pending.append(data)
            size += len(data)
        if run.ends or not run.writes:  # the last run (no writes: the final wait)
            yield Run(delay_ms, (b"".join(pending),) if pending else (), run.ends)
            return
    if pending:
        yield Run(delay_ms, (b"".join(pending),))
