"""A stream response as the server writes it: each write framed, in order, with its wait.

Sans-IO: the server only loops over the sends. Scripted, a response is the head, then one
write per scripted write (chunk-framed if chunked), then, after the final wait, the last
chunk if the body ends cleanly: the scenario's write boundaries, as ``fakeprovider show``
prints them. Coalesced (the load mode), the same bytes go out in fewer writes: the head and
every run of writes that no wait parts become one write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from .wire import LAST_CHUNK, WirePlan, frame_chunk

MAX_COALESCED_BYTES = 1024 * 1024
"""A coalesced write holds at most this many bytes, or one scripted write if that is
larger: a 16 MiB body sent byte by byte is 96 MiB framed, more than is worth holding at
once, and a socket takes no more than its buffer in one send anyway."""


class Send(NamedTuple):
    """Wait ``delay_ms``, then write ``data`` (nothing if empty) in one write.

    ``ends`` marks the write that completes the body (the last chunk, or, if closing the
    connection ends it, nothing): the request log records the end just before it. Every
    response's sends end with one send that holds the final wait, whatever the ending.
    """

    delay_ms: float
    data: bytes
    ends: bool = False


def scripted(head: bytes, plan: WirePlan, chunked: bool) -> Iterator[Send]:
    """One write for the head, one per scripted write, then the last chunk."""
    yield Send(0.0, head)
    for write in plan.iter_writes():
        yield Send(write.delay_ms, frame_chunk(write.data) if chunked else write.data)
    ends = plan.ending == "close"
    yield Send(plan.final_delay_ms, LAST_CHUNK if chunked and ends else b"", ends)


def coalesced(sends: Iterable[Send], max_bytes: int = MAX_COALESCED_BYTES) -> Iterator[Send]:
    """The same bytes, each run of sends that no wait parts joined into one write of at
    most ``max_bytes`` (or of one send, if that is larger); made as they are iterated."""
    run: list[bytes] = []
    run_bytes = 0
    run_delay_ms = 0.0
    for delay_ms, data, ends in sends:
        if run and (delay_ms > 0 or run_bytes + len(data) > max_bytes):
            yield Send(run_delay_ms, b"".join(run))
            run, run_bytes = [], 0
        if not run:
            run_delay_ms = delay_ms
        run.append(data)
        run_bytes += len(data)
        if ends:  # the last send: nothing follows it
            yield Send(run_delay_ms, b"".join(run), ends)
            return
    if run:
        yield Send(run_delay_ms, b"".join(run))
