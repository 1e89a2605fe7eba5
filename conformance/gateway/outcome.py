"""A gateway's answer read by the reference adapter's sans-IO core: capture in, events out.

The same decisions the reference adapter's httpx shell makes for one attempt, taken on
bytes already captured: a non-2xx answer is classified from its status, headers and body;
a stream's reads go through the shell's ``AttemptReader`` exactly as they arrived; a body
cut by the transport fails the attempt the way the shell reports it.
"""

from __future__ import annotations

import time

from .. import codes
from ..adapters.reference import AttemptReader, Failure, classify_http_error
from ..events import Event
from .capture import GatewayCapture

_CUT_CODES = {"timeout": codes.TIMEOUT}  # every other cut is a transport failure


def gateway_events(capture: GatewayCapture, *, now_epoch_s: float | None = None) -> list[Event]:
    """The events the reference adapter reports for the captured answer (no retries)."""
    reader = AttemptReader()
    if capture.status is None:
        return reader.end(_cut(capture, "the gateway sent no response"))
    if not 200 <= capture.status < 300:
        failure = classify_http_error(
            capture.status,
            dict(capture.headers),
            capture.body,
            now_epoch_s=time.time() if now_epoch_s is None else now_epoch_s,
        )
        return reader.end(failure)
    events: list[Event] = []
    for read in capture.reads:
        events += reader.receive_data(read.data)
        if reader.finished:
            break  # [DONE] or an in-stream error: nothing after it is read (S4)
    if capture.ending == "complete":
        return events + reader.end()
    return events + reader.end(_cut(capture, f"the body ended: {capture.ending}"))


def _cut(capture: GatewayCapture, unexplained: str) -> Failure:
    """The transport's failure, as the shell reports it."""
    return Failure(_CUT_CODES.get(capture.ending, codes.TRANSPORT), capture.detail or unexplained)
