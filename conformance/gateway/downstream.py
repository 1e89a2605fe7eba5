"""A gateway's answer read by its dialect's oracle reader (sans-IO): capture in, the
canonical attempt out, to compare with the upstream's across dialects."""

from __future__ import annotations

from fakeprovider.dialects import DialectId
from fakeprovider.recording import ClientEnding
from fakeprovider.wire import Ending

from ..codes import TIMEOUT, TRANSPORT
from ..oracle import ExpectedAttempt, received_attempt
from .capture import GatewayCapture

# How a captured body ended, as the wire ending the readers know.
_ENDINGS: dict[ClientEnding, Ending] = {
    "complete": "close",
    "reset": "reset",
    "disconnect": "disconnect",
    "timeout": "stall",
    "no-response": "close",
}


def downstream_attempt(
    capture: GatewayCapture, dialect: DialectId, *, now: float
) -> ExpectedAttempt:
    """The attempt the gateway's answer reads as in ``dialect``: no answer at all is the
    transport's failure (its timeout, when the case's time ran out)."""
    if capture.status is None:
        return ExpectedAttempt(1, "error", TIMEOUT if capture.ending == "timeout" else TRANSPORT)
    return received_attempt(
        dialect,
        capture.status,
        dict(capture.headers),
        capture.body,
        _ENDINGS[capture.ending],
        now=now,
    )
