"""Sans-IO wire encoder: a scenario attempt becomes the exact bytes and writes to send.

Nothing here touches a socket or a clock. The server and the in-process transport are
thin shells that play a :class:`WirePlan`; tests compare plans byte for byte.
"""

from __future__ import annotations

import email.utils
import functools
import heapq
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from pydantic import JsonValue

from .dialects import DEFAULT_DIALECT, DIALECTS, DialectId
from .dialects.named_events import EventStep
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
from .statuses import reason_phrase

BOM = b"\xef\xbb\xbf"
MAX_STREAM_BODY_BYTES = 16 * 1024 * 1024
"""The largest body a stream attempt may encode to: a scenario is bounded in bytes, but
envelopes and escapes make its body larger than its text."""
DONE_PAYLOAD = "[DONE]"
_LINE_ENDINGS = {"lf": b"\n", "cr": b"\r", "crlf": b"\r\n"}

Ending = Literal["close", "reset", "stall", "disconnect"]
_KEPT_WRITES = 4096  # a plan with fewer cuts keeps its Write objects: at most ~400 KB of them


class EncodeError(FakeProviderError, ValueError):
    """The attempt cannot be turned into bytes as written (e.g. a split past the end)."""


@dataclass(frozen=True)
class Write:
    """One network write, sent after waiting ``delay_ms``."""

    data: bytes
    delay_ms: float = 0.0


@dataclass(frozen=True)
class WirePlan:
    """The body of one stream attempt, where it is cut into writes, and how it ends.

    The writes are made as they are iterated (:meth:`iter_writes`), so a body sent one byte
    per write is held once, its cuts a ``range``, not as a million :class:`Write` objects.
    """

    body: bytes
    splits: Sequence[int] = ()
    """Ascending offsets inside the body where the split mode starts a write."""
    delays: Mapping[int, float] = field(default_factory=dict)
    """Body offset -> milliseconds to wait before the write that starts there (a pause
    always starts a write); the wait after the last byte is ``final_delay_ms``."""
    ending: Ending = "close"
    final_delay_ms: float = 0.0

    def iter_writes(self) -> Iterator[Write]:
        """The writes in order. A plan of few writes keeps them, made once (a load test
        plays one plan many times); a larger one makes each when it is reached."""
        if self.keeps_writes:
            return iter(self._kept_writes)
        return self._make_writes()

    @property
    def keeps_writes(self) -> bool:
        """Whether the plan has few enough writes to keep them once made."""
        return len(self.splits) + len(self.delays) < _KEPT_WRITES

    @functools.cached_property
    def _kept_writes(self) -> tuple[Write, ...]:
        return tuple(self._make_writes())

    def _make_writes(self) -> Iterator[Write]:
        start = 0
        for cut in itertools.chain(heapq.merge(self.splits, sorted(self.delays)), [len(self.body)]):
            if cut > start:  # merged cuts may repeat, and 0 starts no write
                yield Write(self.body[start:cut], self.delays.get(start, 0.0))
                start = cut

    @property
    def writes(self) -> tuple[Write, ...]:
        """Every write at once: for tests and transcripts, not for playing a large plan."""
        return tuple(self.iter_writes())


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
        case EventStep():
            # The dialect names the event; the framing is the one every wire shares.
            name = step.event_name()
            line = b"" if name is None else _field_line("event", name, framing)
            payload = dump_json(step.event, framing)
            return line + encode_data_event(payload, framing, event_end=step.event_end)
        case RawStep():
            return encode_data_event(step.raw, framing, event_end=step.event_end)
        case DoneStep():
            return encode_data_event(DONE_PAYLOAD, framing, event_end=step.event_end)
        case CommentStep():
            out = b":" + step.comment.encode() + eol
            return out + eol if step.event_end else out
        case FieldStep():
            out = _field_line(step.field, step.value, framing)
            return out + eol if step.event_end else out
        case LiteralStep():
            return step.literal.encode()
    raise TypeError(f"{type(step).__name__} writes no bytes")


def _field_line(name: str, value: str, framing: Framing) -> bytes:
    """A non-data field line: ``event: message``, ``id: 7``."""
    space = b" " if framing.data_space and value else b""
    return name.encode() + b":" + space + value.encode() + _LINE_ENDINGS[framing.line_ending]


# --- write planning ---------------------------------------------------------------------


def encode_stream(response: StreamResponse) -> WirePlan:
    """Plan the body of a stream attempt: bytes, write boundaries, pauses, ending.

    Raises EncodeError for a body over MAX_STREAM_BODY_BYTES, as soon as it gets there.
    """
    framing = response.framing
    body = bytearray(BOM if framing.bom else b"")
    step_ends: list[int] = []
    delays: dict[int, float] = {}  # body offset -> wait before the write starting there
    ending: Ending = "close"
    for position, step in enumerate(response.steps):
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
                if len(body) > MAX_STREAM_BODY_BYTES:
                    raise EncodeError(
                        f"the body is more than {MAX_STREAM_BODY_BYTES} bytes by step "
                        f"{position}: a stream attempt encodes to at most that"
                    )
                step_ends.append(len(body))
    final_delay_ms = delays.pop(len(body), 0.0)
    splits = _split_offsets(framing, len(body), step_ends)
    return WirePlan(bytes(body), splits, delays, ending, final_delay_ms)


def _split_offsets(framing: Framing, length: int, step_ends: list[int]) -> Sequence[int]:
    split = framing.split
    if split.mode == "event":
        return step_ends
    if split.mode == "byte":
        return range(1, length)
    if split.mode == "fixed":
        assert split.size is not None  # guaranteed by WriteSplit's validator
        return range(split.size, length, split.size)
    past_end = [offset for offset in split.offsets if offset >= length]
    if past_end:
        raise EncodeError(
            f"split offset {past_end[0]} is not inside the {length}-byte body "
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


def default_error_object(status: int, message: str | None = None) -> JsonValue:
    """An error body of the default dialect: the shape OpenAI-compatible providers use."""
    return DIALECTS[DEFAULT_DIALECT].error_object(status, message)


def error_body(response: ErrorResponse, dialect: DialectId = DEFAULT_DIALECT) -> bytes:
    """The body as written, or the dialect's error object for the status."""
    if response.raw_body is not None:
        return response.raw_body.encode()
    body = response.body
    if body is None:
        body = DIALECTS[dialect].error_object(response.status, None)
    return json.dumps(body).encode()


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


def encode_head(status: int, headers: Iterable[tuple[str, str]]) -> bytes:
    """An HTTP/1.1 status line and header block."""
    lines = [f"HTTP/1.1 {status} {reason_phrase(status)}"]
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
    dialect: DialectId = DEFAULT_DIALECT,
) -> list[TranscriptLine]:
    """What the provider sends for an attempt of a ``dialect`` scenario, write by write;
    raises EncodeError."""
    if isinstance(attempt, FaultAttempt):
        return [TranscriptLine("end", ending=f"{attempt.fault} before any response byte")]
    if isinstance(attempt, ErrorAttempt):
        body = error_body(attempt.error, dialect)
        head = encode_head(attempt.error.status, error_headers(attempt.error, len(body)))
        return [TranscriptLine("head", head), TranscriptLine("body", body)]
    response = attempt.stream
    plan = encode_stream(response)
    lines = [TranscriptLine("head", encode_head(response.status, stream_headers(response)))]
    writes = plan.iter_writes()
    lines += [TranscriptLine(str(n), w.data, w.delay_ms) for n, w in enumerate(writes, 1)]
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
