"""Encodings that break M on purpose, each with a defined outcome: the last attempt's
(T5 is drawn with the calls; S5, S6, S7) and failing attempts before it (H1-H5, R)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from pydantic import JsonValue

from fakeprovider.build import tool_call_entry
from fakeprovider.wire import default_error_object

from .. import codes
from ..codes import DEFAULT_RETRYABLE_CODES
from ._drawing import BOOLEANS, Chunk, Step, pick, picked, upto
from .encoding import finish_chunk, usage_objects
from .framing import DONE
from .intent import FailedAttempt
from .response import usages

# Payloads that are not JSON (S6, anchors I9); none starts with ":" (that is I2's comment).
NOT_JSON = (
    "Number of choices must be greater than 0.",
    '{"choices": [',
    "NaN",
    "{'role': 'assistant'}",
    "<html>502 Bad Gateway</html>",
)
# Error objects sent mid-stream (S7, anchors J1, J2) and the code each stands for.
ERROR_OBJECTS: tuple[tuple[Chunk, str], ...] = (
    ({"message": "Internal server error", "type": "server_error"}, codes.SERVER),
    (
        {"message": "Worker local total request limit reached (33/32)", "code": 429},
        codes.RATE_LIMIT,
    ),
    ({"message": "Overloaded", "type": "overloaded_error", "status": 529}, codes.SERVER),
)
# Ends of a body that never completes [DONE] (S5, anchors I8).
CUT_ENDINGS: tuple[tuple[Step, ...], ...] = (
    (),
    ({"done": True, "event_end": False},),
    ({"raw": '{"choices": []}', "event_end": False},),
    ({"literal": "data: [DO"},),
)
STREAM_BREAKS = ("unidentified", "cut", "not-json", "error-object")


@dataclass(frozen=True)
class StreamBreak:
    """How the last attempt breaks M, if it does: the steps it adds and the code it means."""

    code: str | None = None  # the failure it stands for; None: M's own outcome
    inserted: tuple[Step, ...] = ()  # a payload sent among the chunks
    ending: tuple[Step, ...] = (DONE,)


@st.composite
def stream_breaks(draw: st.DrawFn, kind: str | None) -> StreamBreak:
    """The steps that break the last attempt as ``kind`` says ("unidentified" is drawn
    with the calls, :func:`call_lanes`)."""
    if kind == "cut":
        return StreamBreak(codes.STREAM_CLOSED, ending=picked(draw, CUT_ENDINGS))
    if kind == "not-json":
        payload = draw(pick(NOT_JSON))
        return StreamBreak(codes.MALFORMED_RESPONSE, inserted=({"raw": payload},))
    if kind == "error-object":
        error, code = picked(draw, ERROR_OBJECTS)
        if draw(BOOLEANS):
            step: Step = {"chunk": {"choices": [], "error": error}}  # J2: in a chunk envelope
        else:
            step = {"chunk": {"error": error}, "envelope": False}  # J1: a bare error payload
        return StreamBreak(code, inserted=(step,))
    return StreamBreak()


# Non-2xx answers before the last attempt (H1, H2): status, message (None: the default
# error body) and the code H1 gives it.
HTTP_ERRORS: tuple[tuple[int, str | None, str], ...] = (
    (429, None, codes.RATE_LIMIT),
    (500, None, codes.SERVER),
    (503, "The engine is currently overloaded, please try again later", codes.SERVER),
    (529, None, codes.SERVER),
    (400, None, codes.INVALID_REQUEST),
    (400, "This model's maximum context length is 8192 tokens", codes.CONTEXT_WINDOW_EXCEEDED),
    (401, None, codes.AUTH),
    (403, None, codes.AUTH),
    (413, None, codes.INVALID_REQUEST),
    (404, None, "HTTP_404"),
    (429, "You exceeded your current quota, please check your plan", codes.QUOTA),
    (402, "Insufficient Balance", codes.QUOTA),
)
# Retry-After headers and the wait each asks for: none when ignored (zero, junk, a past
# date, H2), 5 s (above max_delay_ms: not retried at all, R6) and 1 s (waited: slow).
RETRY_AFTERS: tuple[tuple[str | None, float | None], ...] = (
    (None, None),
    ("0", None),
    ("soon", None),
    ("Wed, 21 Oct 2015 07:28:00 GMT", None),
    ("5", 5000.0),
)
HONOURED_RETRY_AFTER: tuple[str | None, float | None] = ("1", 1000.0)


def retry_afters(slow: bool) -> st.SearchStrategy[tuple[str | None, float | None]]:
    """A Retry-After header (or none) and the wait it asks for."""
    return pick((*RETRY_AFTERS, HONOURED_RETRY_AFTER) if slow else RETRY_AFTERS)


@st.composite
def http_errors(
    draw: st.DrawFn, slow: bool, wire: FailureWire
) -> tuple[dict[str, Any], FailedAttempt]:
    status, message, code = draw(pick(HTTP_ERRORS))
    error: dict[str, Any] = {"status": status}
    if message is not None:
        error["body"] = wire.error_object(status, message)
    header, wait_ms = draw(retry_afters(slow))
    if header is not None:
        error["headers"] = {"Retry-After": header}
    return {"error": error}, FailedAttempt(code, wait_ms)


@st.composite
def throttled(draw: st.DrawFn, slow: bool) -> tuple[dict[str, Any], FailedAttempt]:
    """A retryable status that names its wait: 5 s, above max_delay_ms (not retried, R6), or,
    when ``slow``, 1 s (waited exactly: H2, R6)."""
    status, code = draw(pick(((429, codes.RATE_LIMIT), (503, codes.SERVER))))
    waits = (("5", 5000.0), HONOURED_RETRY_AFTER) if slow else (("5", 5000.0),)
    header, wait_ms = draw(pick(waits))
    error = {"status": status, "headers": {"Retry-After": header}}
    return {"error": error}, FailedAttempt(code, wait_ms)


@st.composite
def broken_streams(
    draw: st.DrawFn, steps: Sequence[Step], slow: bool
) -> tuple[dict[str, Any], FailedAttempt]:
    """M's stream (its ``steps``), cut at a step by a reset, a FIN (H3) or, when ``slow``,
    a stall (H4)."""
    endings = ("reset", "disconnect", "stall") if slow else ("reset", "disconnect")
    ending = draw(pick(endings))
    # Counted from the end, so that the cut stays put while the shrinker drops early steps.
    kept = len(steps) - draw(upto(len(steps)))
    transfer = draw(pick(("chunked", "close")))
    sent = [dict(step) for step in steps[:kept]]
    stream = {"framing": {"transfer": transfer}, "steps": [*sent, {ending: True}]}
    code = {"reset": codes.TRANSPORT, "disconnect": codes.TRANSPORT, "stall": codes.TIMEOUT}[ending]
    if ending == "disconnect" and transfer == "close":
        code = codes.STREAM_CLOSED  # without chunked coding a FIN is how a body ends
    return {"stream": stream}, FailedAttempt(code)


@st.composite
def faults(draw: st.DrawFn, slow: bool) -> tuple[dict[str, Any], FailedAttempt]:
    kinds = ("reset", "close", "stall") if slow else ("reset", "close")
    kind = draw(pick(kinds))
    return {"fault": kind}, FailedAttempt(codes.TIMEOUT if kind == "stall" else codes.TRANSPORT)


@st.composite
def refused_streams(draw: st.DrawFn) -> tuple[dict[str, Any], FailedAttempt]:
    """A complete stream to refuse, its usage billed or not: nothing in it (E1), or a call
    that never gets an id (T5)."""
    if draw(BOOLEANS):
        entry = tool_call_entry(0, type="function", name="get_weather", arguments="{}")
        chunks: list[Chunk] = [
            {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]},
            finish_chunk("tool_calls"),
        ]
        code = codes.MALFORMED_TOOL_CALL
    else:
        chunks, code = [finish_chunk("stop")], codes.EMPTY_RESPONSE
    usage = draw(usages()) if draw(BOOLEANS) else None
    if usage is not None:
        chunks.append({"choices": [], "usage": draw(usage_objects(usage))})
    steps = [*({"chunk": chunk} for chunk in chunks), DONE]
    return {"stream": {"steps": steps}}, FailedAttempt(code, usage=usage)


@dataclass(frozen=True)
class FailureWire:
    """What a failing attempt looks like in one dialect: its error bodies and the complete
    streams a caller must refuse (E1, T5)."""

    error_object: Callable[[int, str | None], JsonValue]
    refused: Callable[[], st.SearchStrategy[tuple[dict[str, Any], FailedAttempt]]]


CHAT_FAILURES = FailureWire(default_error_object, refused_streams)


def failed_attempts(
    steps: Sequence[Step], *, slow: bool, wire: FailureWire = CHAT_FAILURES
) -> st.SearchStrategy[tuple[dict[str, Any], FailedAttempt]]:
    """An attempt that fails before the last one, on ``wire``; ``steps`` are M's stream.
    ``slow`` adds those that cost real time (a stall waits for the idle timeout;
    Retry-After: 1 for a second)."""
    return st.one_of(
        http_errors(slow, wire),
        faults(slow),
        broken_streams(steps, slow),
        wire.refused(),
        throttled(slow),
    )


def retryable_subsets() -> st.SearchStrategy[list[str]]:
    """Some of the default retryable codes, at least one (R3), in their default order."""
    return st.lists(pick(DEFAULT_RETRYABLE_CODES), min_size=1, unique=True).map(sorted)


@st.composite
def policy_overrides(draw: st.DrawFn) -> dict[str, Any] | None:
    """A case's own retry-policy fields (R2, R3, R5): a budget, a narrower set of
    retryable codes, or a backoff long enough to measure; the rest stays the default's."""
    kind = draw(pick((None, "budget", "codes", "backoff")))
    if kind == "budget":
        return {"max_retries": draw(upto(3))}
    if kind == "codes":
        return {"retryable_codes": draw(retryable_subsets())}
    if kind == "backoff":
        return {"initial_delay_ms": draw(pick((20, 50))), "max_delay_ms": 400}
    return None
