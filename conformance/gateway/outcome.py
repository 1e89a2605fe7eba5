"""A gateway's answer read by the reference adapter's sans-IO core: capture in, events out.

The same decisions the reference adapter's httpx shell makes for one attempt, taken on
bytes already captured: a non-2xx answer is classified from its status, headers and body;
a stream's reads go through ``SSEDecoder`` and ``StreamTranslator`` exactly as they
arrived; a body cut by the transport fails the attempt the way the shell reports it.
"""

from __future__ import annotations

import time

from .. import codes
from ..adapters.reference import SSEDecoder, StreamTranslator, classify_http_error
from ..events import Event, Finish
from .capture import GatewayCapture

_CUT_CODES = {"timeout": codes.TIMEOUT}  # every other cut is a transport failure


def gateway_events(capture: GatewayCapture, *, now_epoch_s: float | None = None) -> list[Event]:
    """The events the reference adapter reports for the captured answer (no retries)."""
    if capture.status is None:
        code = _CUT_CODES.get(capture.ending, codes.TRANSPORT)
        return [_failure(code, capture.detail or "the gateway sent no response")]
    if not 200 <= capture.status < 300:
        failure = classify_http_error(
            capture.status,
            dict(capture.headers),
            capture.body,
            now_epoch_s=time.time() if now_epoch_s is None else now_epoch_s,
        )
        return [_failure(failure.code, failure.message)]
    decoder, translator = SSEDecoder(), StreamTranslator()
    events: list[Event] = []
    for read in capture.reads:
        for payload in decoder.feed(read.data):
            events += translator.feed(payload)
        if translator.finished:
            return events  # [DONE] or an in-stream error: nothing after it is read (S4)
    if capture.ending == "complete":
        decoder.close()
        return events + translator.eof()
    code = _CUT_CODES.get(capture.ending, codes.TRANSPORT)
    return events + translator.failure(code, capture.detail or f"the body ended: {capture.ending}")


def _failure(code: str, message: str) -> Finish:
    return Finish(reason="error", code=code, message=message)
