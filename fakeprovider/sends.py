"""A stream response as the server writes it: each write framed, in order, with its wait.

Sans-IO: the server only loops over the sends. A response is the head, then one write per
scripted write (chunk-framed if chunked), then, after the final wait, the last chunk if the
body ends cleanly: the scenario's write boundaries, as ``fakeprovider show`` prints them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from .wire import LAST_CHUNK, WirePlan, frame_chunk


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
