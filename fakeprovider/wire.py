"""Sans-IO wire encoder: a scenario attempt becomes the exact bytes and writes to send.

Nothing here touches a socket or a clock. The server and the in-process transport are
thin shells that play a :class:`WirePlan`; tests compare plans byte for byte.
"""

from __future__ import annotations

import email.utils
import itertools
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Literal

from pydantic import JsonValue

from .errors import FakeProviderError
from .scenario import (
    ChunkStep,
    CommentStep,
    DisconnectStep,
    DoneStep,
    EndStep,
    ErrorAttempt,
    ErrorResponse,
    FaultAttempt,
    FieldStep,
    Framing,
    LiteralStep,
    PauseStep,
    RawStep,
    ResetStep,
    StallStep,
    Step,
    StreamAttempt,
    StreamResponse,
)

BOM = b"\xef\xbb\xbf"
DONE_PAYLOAD = "[DONE]"
_LINE_ENDINGS = {"lf": b"\n", "cr": b"\r", "crlf": b"\r\n"}

Ending = Literal["close", "reset", "stall", "disconnect"]


class EncodeError(FakeProviderError, ValueError):
    """The attempt cannot be turned into bytes as written (e.g. a split past the end)."""


@dataclass(frozen=True)
class Write:
    """One network write, sent after waiting ``delay_ms``."""

    data: bytes
    delay_ms: float = 0.0


@dataclass(frozen=True)
class WirePlan:
    """The body of one stream attempt as ordered writes, and how the body ends."""

    writes: tuple[Write, ...]
    ending: Ending = "close"
    final_delay_ms: float = 0.0

    @property
    def body(self) -> bytes:
        return b"".join(write.data for write in self.writes)


# --- payloads ---------------------------------------------------------------------------


def chunk_payload(step: ChunkStep, envelope: dict[str, JsonValue] | None) -> dict[str, JsonValue]:
    """The JSON object a chunk step sends: envelope fields first, the chunk's own after."""
    if envelope is None or not step.envelope:
        return dict(step.chunk)
    merged: dict[str, JsonValue] = {}
    for key, value in envelope.items():
        merged[key] = step.chunk.get(key, value)
    for key, value in step.chunk.items():
        merged.setdefault(key, value)
    return merged


def dump_json(value: JsonValue, framing: Framing) -> str:
    separators = (",", ":") if framing.json_separators == "compact" else (", ", ": ")
    if framing.multiline_data:
        return json.dumps(
            value, ensure_ascii=framing.ensure_ascii, indent=1, separators=(",", separators[1])
        )
    return json.dumps(value, ensure_ascii=framing.ensure_ascii, separators=separators)


def _lines(text: str) -> list[str]:
    # A data line cannot hold a line break, so a payload with one becomes several data
    # lines; a conforming parser joins them back with "\n".
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def encode_data_event(payload: str, framing: Framing, *, event_end: bool = True) -> bytes:
    eol = _LINE_ENDINGS[framing.line_ending]
    prefix = b"data: " if framing.data_space else b"data:"
    out = b"".join(prefix + line.encode() + eol for line in _lines(payload))
    return out + eol if event_end else out


def encode_step(step: Step, framing: Framing, envelope: dict[str, JsonValue] | None) -> bytes:
    """The bytes of one step that writes something (not pauses or endings)."""
    eol = _LINE_ENDINGS[framing.line_ending]
    match step:
        case ChunkStep():
            payload = dump_json(chunk_payload(step, envelope), framing)
            return encode_data_event(payload, framing, event_end=step.event_end)
        case RawStep():
            return encode_data_event(step.raw, framing, event_end=step.event_end)
        case DoneStep():
            return encode_data_event(DONE_PAYLOAD, framing, event_end=step.event_end)
        case CommentStep():
            out = b":" + step.comment.encode() + eol
            return out + eol if step.event_end else out
        case FieldStep():
            space = b" " if framing.data_space and step.value else b""
            out = step.field.encode() + b":" + space + step.value.encode() + eol
            return out + eol if step.event_end else out
        case LiteralStep():
            return step.literal.encode()
    raise TypeError(f"{type(step).__name__} writes no bytes")


# --- write planning ---------------------------------------------------------------------


def encode_stream(response: StreamResponse) -> WirePlan:
    """Plan the body of a stream attempt: bytes, write boundaries, pauses, ending."""
    framing = response.framing
    body = bytearray(BOM if framing.bom else b"")
    step_ends: list[int] = []
    delays: dict[int, float] = {}  # body offset -> wait before the write starting there
    ending: Ending = "close"
    for step in response.steps:
        match step:
            case PauseStep():
                delays[len(body)] = delays.get(len(body), 0.0) + step.pause_ms
            case StallStep():
                ending = "stall"
            case ResetStep():
                ending = "reset"
            case EndStep():
                ending = "close"
            case DisconnectStep():
                ending = "disconnect"
            case _:
                body += encode_step(step, framing, response.envelope)
                step_ends.append(len(body))
    cuts = set(_split_offsets(framing, bytes(body), step_ends)) | set(delays)
    cuts = {cut for cut in cuts if 0 < cut < len(body)}
    bounds = [0, *sorted(cuts), len(body)]
    writes = tuple(
        Write(bytes(body[start:stop]), delays.get(start, 0.0))
        for start, stop in itertools.pairwise(bounds)
        if stop > start
    )
    return WirePlan(writes, ending, final_delay_ms=delays.get(len(body), 0.0))


def _split_offsets(framing: Framing, body: bytes, step_ends: list[int]) -> Iterable[int]:
    split = framing.split
    if split.mode == "event":
        return step_ends
    if split.mode == "byte":
        return range(1, len(body))
    if split.mode == "fixed":
        assert split.size is not None  # guaranteed by WriteSplit's validator
        return range(split.size, len(body), split.size)
    past_end = [offset for offset in split.offsets if offset >= len(body)]
    if past_end:
        raise EncodeError(
            f"split offset {past_end[0]} is not inside the {len(body)}-byte body "
            "(offsets must be between 1 and the body length minus 1)"
        )
    return split.offsets


# --- HTTP framing -----------------------------------------------------------------------


def stream_headers(response: StreamResponse) -> list[tuple[str, str]]:
    """Response headers of a stream attempt, scenario overrides applied."""
    defaults = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
    if response.framing.transfer == "chunked":
        defaults["transfer-encoding"] = "chunked"
    else:
        defaults["connection"] = "close"
    return _merge_headers(defaults, response.headers)


def error_body(response: ErrorResponse) -> bytes:
    if response.raw_body is not None:
        return response.raw_body.encode()
    body = response.body if response.body is not None else default_error_object(response.status)
    return json.dumps(body).encode()


def default_error_object(status: int, message: str | None = None) -> JsonValue:
    """An error body in the shape OpenAI-compatible providers use."""
    reason = _reason(status)
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {
        "error": {
            "message": message or f"fake provider: {status} {reason}",
            "type": kind,
            "param": None,
            "code": None,
        }
    }


def error_headers(
    response: ErrorResponse, body_length: int, *, now: float | None = None
) -> list[tuple[str, str]]:
    """The response's headers; ``now`` (epoch seconds, the send time) dates a Retry-After
    given as ``retry_after_date_in_s``, shown as a placeholder when there is no send time."""
    content_type = "text/plain; charset=utf-8" if response.raw_body is not None else None
    defaults = {
        "content-type": content_type or "application/json",
        "content-length": str(body_length),
    }
    headers = _merge_headers(defaults, response.headers)
    if response.retry_after_date_in_s is not None:
        headers.append(("retry-after", retry_after_date(response.retry_after_date_in_s, now)))
    return headers


def retry_after_date(in_s: int, now: float | None) -> str:
    """An HTTP date ``in_s`` seconds after ``now``, to the nearest whole second (the format
    has no finer unit), so a client reads a wait within half a second of ``in_s``."""
    if now is None:
        return f"<HTTP date: send time + {in_s} s>"
    when = datetime.fromtimestamp(math.floor(now + in_s + 0.5), UTC)
    return email.utils.format_datetime(when, usegmt=True)


def _merge_headers(defaults: dict[str, str], overrides: dict[str, str]) -> list[tuple[str, str]]:
    lowered = {name.lower(): name for name in overrides}
    merged = [(name, value) for name, value in defaults.items() if name not in lowered]
    return merged + list(overrides.items())


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def encode_head(status: int, headers: Iterable[tuple[str, str]]) -> bytes:
    """An HTTP/1.1 status line and header block."""
    lines = [f"HTTP/1.1 {status} {_reason(status)}"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def frame_chunk(data: bytes) -> bytes:
    """One piece of a chunked transfer-coded body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


LAST_CHUNK = b"0\r\n\r\n"


@dataclass(frozen=True)
class TranscriptLine:
    """One line of an attempt's wire transcript: the head, a body write, or how it ends."""

    label: str  # "head", "body", "1", "2", …, or "end"
    data: bytes = b""
    delay_ms: float = 0.0
    ending: str = ""  # on the "end" line: close, reset, stall, disconnect, or a fault


def attempt_transcript(
    attempt: StreamAttempt | ErrorAttempt | FaultAttempt,
) -> list[TranscriptLine]:
    """What the provider sends for an attempt, write by write; raises EncodeError."""
    if isinstance(attempt, FaultAttempt):
        return [TranscriptLine("end", ending=f"{attempt.fault} before any response byte")]
    if isinstance(attempt, ErrorAttempt):
        body = error_body(attempt.error)
        head = encode_head(attempt.error.status, error_headers(attempt.error, len(body)))
        return [TranscriptLine("head", head), TranscriptLine("body", body)]
    response = attempt.stream
    plan = encode_stream(response)
    lines = [TranscriptLine("head", encode_head(response.status, stream_headers(response)))]
    lines += [TranscriptLine(str(n), w.data, w.delay_ms) for n, w in enumerate(plan.writes, 1)]
    lines.append(TranscriptLine("end", delay_ms=plan.final_delay_ms, ending=plan.ending))
    return lines


def escape_bytes(data: bytes) -> str:
    """Bytes as printable ASCII: CR, LF, tab and backslash escaped, the rest as ``\\xNN``.

    Line endings and a BOM stay visible, which is what a reader of a wire transcript needs.
    """
    out = []
    for byte in data:
        char = chr(byte)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif 0x20 <= byte < 0x7F:
            out.append(char)
        else:
            out.append(f"\\x{byte:02x}")
    return "".join(out)


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
