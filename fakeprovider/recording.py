"""A recorded exchange turned into a fixture (sans-IO): the capture half of the fake provider.

The recording proxy (proxy.py) stores what it received from the upstream: the response
head, the body as the reads it arrived in with the wait before each, and how it ended. This
module makes that a :class:`Scenario` whose replay sends the same body bytes, cut into the
same writes, with the waits that mattered kept as pauses, and provenance saying where and
when it was recorded. Credentials in headers and URLs never reach the fixture
(``redaction.py``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from .dialects import DIALECTS, DialectId, dialect_of_path
from .dialects.responses import numbered_events
from .errors import FakeProviderError
from .recorded_events import with_event_steps
from .redaction import redacted_headers, redacted_url
from .scenario import (
    SCENARIO_ID_PATTERN,
    DisconnectStep,
    ErrorAttempt,
    ErrorResponse,
    FaultAttempt,
    Framing,
    LiteralStep,
    PauseStep,
    Provenance,
    ResetStep,
    Scenario,
    StallStep,
    Step,
    StreamAttempt,
    StreamResponse,
    WriteSplit,
)
from .wire import encode_stream

DEFAULT_MIN_PAUSE_MS = 5.0
"""Waits shorter than this between reads are scheduling noise, not the upstream's timing."""

ClientEnding = Literal["complete", "reset", "disconnect", "timeout", "no-response"]
"""How a response body ended for the client reading it: cleanly, cut by the transport, or
no response at all. The recording proxy, the lint and gateway mode all read as a client.
A recording without a response says how the connection failed (``complete`` and
``no-response``: the upstream closed without answering)."""

# Framing the recording cannot keep: the replay frames the body itself.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "content-encoding",
        "date",
        "proxy-connection",
        "upgrade",
    }
)
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")
_FAULTS: dict[ClientEnding, Literal["reset", "close", "stall"]] = {
    "complete": "close",
    "no-response": "close",
    "disconnect": "close",
    "reset": "reset",
    "timeout": "stall",
}


class RecordingError(FakeProviderError, ValueError):
    """The recorded response cannot be written as a fixture (e.g. its body is not UTF-8)."""


@dataclass(frozen=True)
class Read:
    """One read of the upstream's body: its bytes, after waiting ``gap_ms`` for them."""

    data: bytes
    gap_ms: float = 0.0


@dataclass(frozen=True)
class Recording:
    """One request through the recording proxy and what the upstream sent back."""

    url: str  # where the request went
    method: str
    request_headers: tuple[tuple[str, str], ...]
    model: str | None  # the request body's ``model``
    recorded_at: str  # ISO 8601
    status: int | None  # None: the upstream failed before any response byte
    response_headers: tuple[tuple[str, str], ...] = ()
    reads: tuple[Read, ...] = ()
    ending: ClientEnding = "complete"
    final_gap_ms: float = 0.0  # the wait between the last read and the end
    chunked: bool = True  # the upstream used chunked transfer coding
    partial: str = ""  # why the body stops before the upstream's end (the client left)

    @property
    def body(self) -> bytes:
        return b"".join(read.data for read in self.reads)


def recorded_id(prefix: str, number: int) -> str:
    """The id (and file name) of a prefix's ``number``-th recording."""
    return f"{prefix}-{number:03d}"


def check_id_prefix(prefix: str) -> None:
    """Raise RecordingError unless ``prefix``'s recordings have valid scenario ids."""
    if not re.fullmatch(SCENARIO_ID_PATTERN, recorded_id(prefix, 1)):
        raise RecordingError(
            f"--name {prefix!r}: a recording's id, {recorded_id(prefix, 1)!r}, must match "
            f"{SCENARIO_ID_PATTERN} (letters, digits, '.', '_', '-'; a letter or digit first)"
        )


def recorded_scenario(
    recording: Recording, scenario_id: str, *, min_pause_ms: float = DEFAULT_MIN_PAUSE_MS
) -> Scenario:
    """The fixture that replays ``recording``; raises RecordingError."""
    attempt: StreamAttempt | ErrorAttempt | FaultAttempt
    dialect = dialect_of_path(urlsplit(recording.url).path)
    if recording.status is None:
        attempt = FaultAttempt(fault=_FAULTS[recording.ending])
    elif 200 <= recording.status < 300:
        attempt = StreamAttempt(stream=_stream(recording, min_pause_ms, dialect))
    else:
        attempt = ErrorAttempt(error=_error(recording))
    model = recording.model or "unknown model"
    url = redacted_url(recording.url)
    partial = " (partial)" if recording.partial else ""
    return Scenario(
        id=scenario_id,
        dialect=dialect,
        title=f"Recorded from {url} ({model}){partial}",
        description=f"{recording.method} {url} answered "
        + (f"HTTP {recording.status}" if recording.status is not None else "with no response")
        + f", recorded by `fakeprovider record` on {recording.recorded_at}.",
        provenance=Provenance(emitted_by=f"{model} at {url}", notes=_notes(recording, url)),
        tags=("recorded", "partial") if recording.partial else ("recorded",),
        attempts=(attempt,),
    )


def _notes(recording: Recording, url: str) -> str:
    headers = "; ".join(
        f"{name}: {value}" for name, value in redacted_headers(recording.request_headers)
    )
    partial = f" Partial: {recording.partial}." if recording.partial else ""
    return (
        f"Recorded {recording.recorded_at}. Upstream: {url}. "
        f"Model: {recording.model or '(none)'}. Ending: {recording.ending}.{partial} "
        f"Request headers (secrets redacted): {headers or '(none)'}."
    )


def _response_headers(recording: Recording) -> dict[str, str]:
    kept = [
        (name, value)
        for name, value in redacted_headers(recording.response_headers)
        if name.lower() not in _HOP_BY_HOP
    ]
    return dict(kept)


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RecordingError(
            f"the body is not UTF-8 (byte {error.start}: {error.reason}); a fixture holds "
            "text, so only the raw .sse dump keeps it"
        ) from None


def _error(recording: Recording) -> ErrorResponse:
    assert recording.status is not None
    return ErrorResponse(
        status=recording.status,
        headers=_response_headers(recording),
        raw_body=_text(recording.body),
    )


def _stream(recording: Recording, min_pause_ms: float, dialect: DialectId) -> StreamResponse:
    body = recording.body
    read_starts = _read_starts(recording.reads)
    pauses = {
        _char_boundary(body, start): read.gap_ms
        for start, read in zip(read_starts, recording.reads, strict=True)
        if read.gap_ms >= min_pause_ms and start < len(body)
    }
    named_events = DIALECTS[dialect].named_events
    cuts = {match.end() for match in _EVENT_END.finditer(body)} | set(pauses)
    boundaries = [start for start in read_starts if 0 < start < len(body)]
    if not boundaries and not named_events:
        cuts = set()  # one write: one literal, since every step would be a write of its own
    steps: list[Step] = []
    bounds = [0, *sorted(cut for cut in cuts if 0 < cut < len(body)), len(body)]
    for start, stop in itertools.pairwise(bounds):
        if start in pauses:
            steps.append(PauseStep(pause_ms=round(pauses[start], 1)))
        if stop > start:
            steps.append(LiteralStep(literal=_text(body[start:stop])))
    if recording.final_gap_ms >= min_pause_ms and recording.ending != "timeout":
        steps.append(PauseStep(pause_ms=round(recording.final_gap_ms, 1)))
    steps += _ending_steps(recording.ending)
    if boundaries:
        split = WriteSplit(mode="offsets", offsets=tuple(boundaries))
    elif named_events and body:
        split = WriteSplit(mode="fixed", size=len(body))  # one write, though many steps
    else:
        split = WriteSplit()
    literal = StreamResponse(
        status=recording.status or 200,
        headers=_response_headers(recording),
        framing=Framing(split=split, transfer="chunked" if recording.chunked else "close"),
        envelope=None,
        steps=tuple(steps),
    )
    return _with_named_events(literal, body, dialect) if named_events else literal


def _with_named_events(literal: StreamResponse, body: bytes, dialect: DialectId) -> StreamResponse:
    """``literal`` with its whole events as event steps, if its replay keeps every byte
    (``recorded_events`` checks each event; this checks the body as the scenario will send
    it, numbered on a wire that numbers its events, whatever that missed)."""
    numbered = DIALECTS[dialect].numbered_events
    framing, steps = with_event_steps(literal.steps, literal.framing, numbered=numbered)
    named = literal.model_copy(update={"framing": framing, "steps": steps})
    sent = named.model_copy(update={"steps": numbered_events(steps)}) if numbered else named
    return named if encode_stream(sent).body == body else literal


def _read_starts(reads: Sequence[Read]) -> list[int]:
    starts, offset = [], 0
    for read in reads:
        starts.append(offset)
        offset += len(read.data)
    return starts


def _char_boundary(body: bytes, offset: int) -> int:
    """``offset``, or the start of the next UTF-8 character if it falls inside one: a pause
    sits between literal steps, and a literal holds whole characters."""
    while offset < len(body) and 0x80 <= body[offset] < 0xC0:
        offset += 1
    return offset


def _ending_steps(ending: ClientEnding) -> list[Step]:
    match ending:
        case "reset":
            return [ResetStep()]
        case "disconnect":
            return [DisconnectStep()]
        case "timeout":
            return [StallStep()]
    return []
