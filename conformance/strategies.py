"""Hypothesis strategies for generated cases: INVARIANTS.md, "The central property".

A case is drawn in layers, each a small named strategy:

1. an intended response M (:func:`intended_responses`): text and reasoning (any unicode,
   multi-byte favoured, or whitespace only), up to four tool calls with raw arguments (some
   not JSON), usage with or without cache and reasoning details, a finish reason (``stop``,
   ``tool_calls``, ``length``, none, an unknown one);
2. a meaning-preserving encoding of M as chunks (:func:`encoded_chunks`): fragments cut
   anywhere (empty ones too); per continuation delta an identity absent, ``null``, ``""``,
   not a string or repeated; ids and names arriving late; parallel calls interleaved; the
   finish attached, separate or overridden; usage attached, trailing (``choices: []`` or no
   ``choices``) or on every chunk; first-chunk signatures; the null/empty fillers and empty
   ``choices`` pings real providers send (anchors.md §3 A1-A12, B1, D1, D2, F, G, H);
3. SSE framing (:func:`framed_streams`): LF / CR / CRLF, comments and fields anywhere,
   ``data:`` with or without a space, a BOM, write splits at any byte offset (inside UTF-8
   characters too), data after ``[DONE]``;
4. encodings that break M on purpose, with a defined outcome (:data:`STREAM_BREAKS`,
   :func:`failed_attempts`): a call never identified (T5), zero blocks (E1, from M itself),
   a stream cut before ``[DONE]`` (S5), a payload that is not JSON (S6), an error object
   mid-stream (S7), HTTP errors, faults, resets and stalls before the last attempt (H).

Every case is a plain :class:`~fakeprovider.scenario.Scenario` whose ``expect`` is written
from M (:mod:`conformance.intent`), so it can be saved as a fixture as it is. Every choice
lists its plain option first and every list shrinks to empty: Hypothesis shrinks toward
fewer calls, shorter text, canonical chunks and no framing quirks.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import string
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import strategies as st
from pydantic import JsonValue

from fakeprovider.build import ABSENT, Field, tool_call_entry, usage_object
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.wire import default_error_object, encode_stream

from . import codes
from .codes import DEFAULT_RETRYABLE_CODES
from .events import RetryPolicy
from .intent import (
    FailedAttempt,
    IntendedCall,
    IntendedResponse,
    IntendedUsage,
    case_expect,
    failure_expect,
    response_expect,
)
from .options import DEFAULT_POLICY
from .quirks import QUIRKS, with_quirks

T = TypeVar("T")
Chunk = dict[str, Any]
Step = dict[str, Any]


# Strategies are built once and reused: a fresh strategy object is validated on its first
# draw, which would otherwise be most of the cost of a draw.
@functools.lru_cache(maxsize=4096)
def pick(options: tuple[Hashable, ...]) -> st.SearchStrategy[Any]:
    """One of ``options``; shrinks toward the first."""
    return st.sampled_from(options)


@functools.lru_cache(maxsize=4096)
def upto(most: int) -> st.SearchStrategy[int]:
    """An integer from 0 to ``most``; shrinks toward 0."""
    return st.integers(0, most)


def picked(draw: st.DrawFn, options: tuple[T, ...]) -> T:
    """One of ``options`` (any values, hashable or not), shrinking toward the first."""
    return options[draw(upto(len(options) - 1))]


BOOLEANS = st.booleans()

# --- M: the intended response ------------------------------------------------------------

MULTI_BYTE = "éß中文🌞\u00a0"
WHITESPACE = " \t\n\u3000"
TOOL_NAMES = ("get_weather", "get_time", "search", "read_file")
UNKNOWN_FINISHES = ("content_filter", "insufficient_system_resource")
_CHARACTERS = st.one_of(st.characters(codec="utf-8"), st.sampled_from(MULTI_BYTE))


@functools.cache
def texts() -> st.SearchStrategy[str]:
    """Non-empty answer or reasoning text: any unicode, or whitespace only (E3)."""
    return st.one_of(
        st.text(_CHARACTERS, min_size=1, max_size=12),
        st.text(st.sampled_from(WHITESPACE), min_size=1, max_size=3),
    )


_ALPHANUMERIC = string.ascii_letters + string.digits


@functools.cache
def call_ids() -> st.SearchStrategy[str]:
    # Built from characters rather than regexes, which Hypothesis draws far more slowly.
    return st.one_of(
        st.builds("call_{}".format, st.text(_ALPHANUMERIC, min_size=1, max_size=8)),
        st.text("0123456789abcdef", min_size=4, max_size=12),  # no call_ prefix (H6)
    )


@functools.cache
def tool_names() -> st.SearchStrategy[str]:
    tail = st.text(string.ascii_lowercase + string.digits + "_", max_size=15)
    invented = st.builds(str.__add__, st.sampled_from(string.ascii_lowercase), tail)
    return st.one_of(st.sampled_from(TOOL_NAMES), invented)


@functools.cache
def json_arguments() -> st.SearchStrategy[str]:
    """A JSON object as a model writes it: compact or spaced, raw UTF-8 or escaped."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-9, 999), st.text(_CHARACTERS, max_size=6)
    )
    objects = st.dictionaries(st.text(_CHARACTERS, max_size=6), scalars, max_size=3)
    return st.builds(_json_text, objects, spaced=st.booleans(), ascii=st.booleans())


def _json_text(value: JsonValue, *, spaced: bool, ascii: bool) -> str:
    separators = (", ", ": ") if spaced else (",", ":")
    return json.dumps(value, separators=separators, ensure_ascii=ascii)


@functools.cache
def arguments() -> st.SearchStrategy[str]:
    """Raw argument text: none (D1), a JSON object, or anything at all (C3: not parsed)."""
    return st.one_of(st.just(""), json_arguments(), st.text(_CHARACTERS, max_size=16))


@functools.cache
def tool_calls() -> st.SearchStrategy[IntendedCall]:
    return st.builds(IntendedCall, id=call_ids(), name=tool_names(), arguments=arguments())


@st.composite
def usages(draw: st.DrawFn) -> IntendedUsage:
    prompt = draw(upto(100_000))
    completion = draw(upto(10_000))
    cached = draw(upto(prompt)) if draw(BOOLEANS) else None
    reasoning = draw(upto(completion)) if draw(BOOLEANS) else None
    return IntendedUsage(prompt, completion, cached, reasoning)


@functools.cache
def finish_reasons() -> st.SearchStrategy[str | None]:
    return st.sampled_from(("stop", None, "tool_calls", "length", *UNKNOWN_FINISHES))


# --- M, drawn lane by lane with the deltas that carry each part ------------------------
# A part and its fragments are drawn together, so that the shrinker deletes a tool call,
# its entries and all, in one step.

Lane = tuple[str, int]  # ("reasoning", 0), ("text", 0) or ("call", wire index)


@dataclass(frozen=True)
class _Piece:
    """One fragment of one lane: a text string, or a tool-call entry."""

    lane: Lane
    value: Any


@functools.lru_cache(maxsize=4096)
def positions(most: int, count: int) -> st.SearchStrategy[list[int]]:
    """Up to ``count`` positions from 0 to ``most`` (repeats allowed)."""
    return st.lists(upto(most), max_size=count)


@st.composite
def fragments(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at arbitrary points; a repeated cut gives an empty fragment."""
    cuts = sorted(draw(positions(len(text), 3)))
    return [text[start:stop] for start, stop in itertools.pairwise([0, *cuts, len(text)])]


@dataclass(frozen=True)
class TextLane:
    """Answer or reasoning text and the fragments its deltas carry (maybe just ``""``s)."""

    text: str
    fragments: tuple[str, ...]


@st.composite
def text_lanes(draw: st.DrawFn) -> TextLane:
    text = draw(texts()) if draw(BOOLEANS) else ""
    pieces = draw(fragments(text))
    return TextLane(text, tuple(pieces if text else pieces[1:]))


_UNSET: tuple[Field, ...] = (ABSENT, None, "", 0)  # identity fields that establish nothing


def identities(value: str, position: int, established_at: int | None) -> st.SearchStrategy[Field]:
    """The id (or name) an entry of a call carries (T1, T2, T4).

    At ``established_at`` the real value; before it anything that is not one (absent,
    ``null``, ``""``, not a string: A9, A10, B1); after it the same or the value repeated
    (A1-A7).
    """
    if position == established_at:
        return pick((value,))
    if established_at is not None and position > established_at:
        return pick((*_UNSET, value))
    return pick(_UNSET)


def call_types(position: int) -> st.SearchStrategy[Field]:
    if position == 0:
        return pick(("function", ABSENT))
    return pick((ABSENT, "function", None))  # A13: type repeated, or null


def argument_fragments(fragment: str | None) -> st.SearchStrategy[Field]:
    """A fragment as sent; one that adds nothing may be ``""``, absent or ``null`` (D1, D2)."""
    if fragment:
        return pick((fragment,))
    return pick(("", ABSENT, None) if fragment == "" else (ABSENT, None, ""))


@st.composite
def call_entries(
    draw: st.DrawFn, call: IntendedCall, pieces: list[str], withheld: frozenset[str]
) -> list[Chunk]:
    """The entries that send ``pieces`` of the call's arguments, in order, without their
    wire index; ``withheld`` identity is never sent (T5)."""
    # Where the id and name first arrive: an entry of the arguments, or one of its own after.
    id_at = None if "id" in withheld else draw(upto(len(pieces)))
    name_at = None if "name" in withheld else draw(upto(len(pieces)))
    count = max([len(pieces), *(at + 1 for at in (id_at, name_at) if at is not None)])
    entries = []
    for position in range(count):
        entry = tool_call_entry(
            id=draw(identities(call.id, position, id_at)),
            type=draw(call_types(position)),
            name=draw(identities(call.name, position, name_at)),
            arguments=draw(
                argument_fragments(pieces[position] if position < len(pieces) else None)
            ),
        )
        if "function" not in entry and draw(BOOLEANS):
            entry["function"] = None  # A11
        entries.append(entry)
    return entries


@dataclass(frozen=True)
class CallLane:
    call: IntendedCall
    fragments: tuple[str, ...]  # of its arguments
    withheld: frozenset[str]  # what of its identity the wire never sends (T5)
    entries: tuple[Chunk, ...]


WITHHELD: tuple[frozenset[str], ...] = (
    frozenset(),
    frozenset({"id"}),
    frozenset({"name"}),
    frozenset({"id", "name"}),
)


@st.composite
def call_lanes(draw: st.DrawFn, unidentified: bool) -> CallLane:
    """A call and its entries; with ``unidentified``, maybe one never identified."""
    call = draw(tool_calls())
    pieces = draw(fragments(call.arguments))
    withheld = draw(pick(WITHHELD)) if unidentified else frozenset()
    entries = draw(call_entries(call, pieces, withheld))
    return CallLane(call, tuple(pieces), withheld, tuple(entries))


@functools.cache
def call_lane_lists(least: int, most: int, unidentified: bool) -> st.SearchStrategy[list[CallLane]]:
    lanes = call_lanes(unidentified)
    return st.lists(lanes, min_size=least, max_size=most, unique_by=lambda lane: lane.call.id)


@dataclass(frozen=True)
class Intended:
    """M, and the fragments each of its parts is sent in."""

    response: IntendedResponse
    reasoning: TextLane
    text: TextLane
    calls: tuple[CallLane, ...]

    @property
    def unidentified(self) -> bool:
        return any(lane.withheld for lane in self.calls)

    def lanes(self) -> list[list[_Piece]]:
        """Every lane's pieces, in order; a call's entries get its wire index."""
        out = [
            [_Piece(("reasoning", 0), piece) for piece in self.reasoning.fragments],
            [_Piece(("text", 0), piece) for piece in self.text.fragments],
        ]
        for index, lane in enumerate(self.calls):
            out.append([_Piece(("call", index), {"index": index} | e) for e in lane.entries])
        return out


@st.composite
def intended_responses(
    draw: st.DrawFn, *, min_calls: int = 0, max_calls: int = 4, unidentified: bool = False
) -> Intended:
    """M with its fragments; the empty response (E1) is the simplest one."""
    reasoning = draw(text_lanes())
    text = draw(text_lanes())
    calls = tuple(draw(call_lane_lists(min_calls, max_calls, unidentified)))
    response = IntendedResponse(
        reasoning=reasoning.text,
        text=text.text,
        calls=tuple(lane.call for lane in calls),
        usage=draw(usages()) if draw(BOOLEANS) else None,
        finish=draw(finish_reasons()),
    )
    return Intended(response, reasoning, text, calls)


@st.composite
def interleavings(draw: st.DrawFn, lanes: list[list[_Piece]]) -> list[_Piece]:
    """All pieces, each lane's in order, lanes interleaved arbitrarily (T3, anchors E1)."""
    queues = [list(lane) for lane in lanes if lane]
    out = []
    while queues:
        lane = draw(upto(len(queues) - 1))
        out.append(queues[lane].pop(0))
        if not queues[lane]:
            queues.pop(lane)
    return out


@st.composite
def groupings(draw: st.DrawFn, pieces: list[_Piece]) -> list[list[_Piece]]:
    """Consecutive pieces of different lanes may share a chunk (content beside tool calls,
    several parallel calls in one delta)."""
    groups: list[list[_Piece]] = []
    for piece in pieces:
        fits = bool(groups) and all(other.lane != piece.lane for other in groups[-1])
        if fits and draw(BOOLEANS):
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return groups


# Keys a provider fills in when a chunk has nothing to say for them: (delta, choice, chunk).
CHUNK_STYLES: dict[str, tuple[Chunk, Chunk, Chunk]] = {
    "bare": ({}, {}, {}),
    "openai": ({}, {"logprobs": None, "finish_reason": None}, {"usage": None}),
    # A2-A4: every optional field an explicit null.
    "nulls": (
        {"role": None, "content": None, "reasoning_content": None, "tool_calls": None},
        {"finish_reason": None},
        {"usage": None},
    ),
    # A2, F4: empty strings and lists that say nothing.
    "empty": (
        {"content": "", "reasoning_content": "", "tool_calls": []},
        {"finish_reason": ""},
        {},
    ),
}


def chunk_of(group: list[_Piece], style: str) -> Chunk:
    delta: Chunk = {}
    entries = []
    for piece in group:
        kind = piece.lane[0]
        if kind == "call":
            entries.append(piece.value)
        else:
            delta["content" if kind == "text" else "reasoning_content"] = piece.value
    if entries:
        delta["tool_calls"] = entries
    fill_delta, fill_choice, fill_chunk = CHUNK_STYLES[style]
    choice = {"index": 0, "delta": fill_delta | delta} | fill_choice
    return {"choices": [choice]} | fill_chunk


def _choice(chunk: Chunk) -> Chunk:
    choice: Chunk = chunk["choices"][0]
    return choice


# First chunks that carry no content (C2's empty signature among them).
FIRST_CHUNKS: dict[str, Chunk | None] = {
    "none": None,
    "attached": None,  # the role rides on the first content chunk
    "null-content": {"role": "assistant", "content": None},
    "empty-content": {"role": "assistant", "content": "", "refusal": None},
    "reasoning-signature": {"role": "assistant", "content": None, "reasoning_content": ""},
}


@st.composite
def with_first_chunk(draw: st.DrawFn, chunks: list[Chunk]) -> None:
    kind = draw(pick(tuple(FIRST_CHUNKS)))
    signature = FIRST_CHUNKS[kind]
    with_choice = [chunk for chunk in chunks if chunk.get("choices")]
    if kind == "attached" and with_choice:
        choice = _choice(with_choice[0])
        choice["delta"] = {"role": "assistant"} | choice["delta"]
    elif signature is not None:
        chunks.insert(0, {"choices": [{"index": 0, "delta": dict(signature)}]})


def finish_chunk(reason: str) -> Chunk:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


@st.composite
def with_finish(draw: st.DrawFn, chunks: list[Chunk], reason: str | None) -> None:
    """The finish on the last chunk, in a chunk of its own (F3), or after another one
    that it overrides (F2: the last reason wins)."""
    if reason is None:
        return
    placement = draw(pick(("attached", "separate", "overridden")))
    if placement == "attached" and chunks:
        _choice(chunks[-1])["finish_reason"] = reason
        return
    if placement == "overridden" and chunks:
        earlier = draw(pick(("tool_calls", "stop", "length")))
        _choice(chunks[-1])["finish_reason"] = earlier
    chunks.append(finish_chunk(reason))


def wire_usage(usage: IntendedUsage, cache_style: str) -> Chunk:
    """The wire's usage object, the cache read as OpenAI or DeepSeek report it, or both."""
    extra: dict[str, int] = {}
    if usage.cached_tokens is not None:
        if cache_style != "deepseek":
            extra["cached_tokens"] = usage.cached_tokens
        if cache_style != "openai":
            extra["prompt_cache_hit_tokens"] = usage.cached_tokens
            extra["prompt_cache_miss_tokens"] = usage.prompt_tokens - usage.cached_tokens
    if usage.reasoning_tokens is not None:
        extra["reasoning_tokens"] = usage.reasoning_tokens
    return usage_object(usage.prompt_tokens, usage.completion_tokens, **extra)


@st.composite
def usage_objects(draw: st.DrawFn, usage: IntendedUsage) -> Chunk:
    return wire_usage(usage, draw(pick(("openai", "deepseek", "both"))))


@st.composite
def with_usage(draw: st.DrawFn, chunks: list[Chunk], usage: IntendedUsage | None) -> None:
    """Usage on the last chunk, in a trailing ``choices: []`` chunk (H1) or one without
    ``choices`` (H2), or counted up on every chunk before the final one (H5)."""
    if usage is None:
        return
    wire = draw(usage_objects(usage))
    placement = draw(pick(("attached", "trailing", "no-choices", "every-chunk")))
    if placement == "attached" and chunks:
        chunks[-1]["usage"] = wire
        return
    if placement == "every-chunk":
        for count, chunk in enumerate(chunks):
            chunk["usage"] = usage_object(usage.prompt_tokens, count)
    chunks.append({"usage": wire} if placement == "no-choices" else {"choices": [], "usage": wire})


@st.composite
def with_pings(draw: st.DrawFn, chunks: list[Chunk]) -> None:
    """Chunks with ``choices: []`` and nothing else, first or mid-stream (H3, H4)."""
    for position in sorted(draw(positions(len(chunks), 2)), reverse=True):
        chunks.insert(position, {"choices": []})


@dataclass(frozen=True)
class Encoding:
    """M on the wire: the chunks, and the order in which they open M's calls."""

    chunks: list[Chunk]
    call_order: tuple[int, ...]


@st.composite
def encoded_chunks(draw: st.DrawFn, intended: Intended) -> Encoding:
    """The chunks of a meaning-preserving encoding of M (but for the identity a call may
    withhold on purpose: T5)."""
    response = intended.response
    pieces = draw(interleavings(intended.lanes()))
    styles = pick(tuple(CHUNK_STYLES))
    chunks = [chunk_of(group, draw(styles)) for group in draw(groupings(pieces))]
    draw(with_finish(chunks, response.finish))
    draw(with_usage(chunks, response.usage))
    draw(with_first_chunk(chunks))
    draw(with_pings(chunks))
    order = dict.fromkeys(piece.lane[1] for piece in pieces if piece.lane[0] == "call")
    return Encoding(chunks, tuple(order))


def canonical_encoding(intended: Intended) -> Encoding:
    """M as OpenAI streams it (anchors.md §3, preamble): a role chunk; reasoning, text, then
    each call with its id, type and name on the opening entry only; the finish in a chunk
    of its own; usage in a trailing ``choices: []`` chunk. Quirk transforms start here."""
    response = intended.response
    deltas: list[Chunk] = [{"role": "assistant", "content": None}]
    deltas += [{"reasoning_content": piece} for piece in intended.reasoning.fragments if piece]
    deltas += [{"content": piece} for piece in intended.text.fragments if piece]
    for index, lane in enumerate(intended.calls):
        call = lane.call
        opening = tool_call_entry(index, id=call.id, type="function", name=call.name, arguments="")
        pieces = [tool_call_entry(index, arguments=piece) for piece in lane.fragments if piece]
        deltas += [{"tool_calls": [entry]} for entry in (opening, *pieces)]
    chunks: list[Chunk] = [
        {"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    if response.finish is not None:
        chunks.append(finish_chunk(response.finish))
    if response.usage is not None:
        chunks.append({"choices": [], "usage": wire_usage(response.usage, "openai")})
    return Encoding(chunks, tuple(range(len(intended.calls))))


# --- framing -----------------------------------------------------------------------------

# Lines that change no payload (S3): comments, fields, a comment re-wrapped as data (I1-I4).
NOISE: tuple[Step, ...] = (
    {"comment": " keep-alive"},
    {"comment": ""},
    {"comment": " OPENROUTER PROCESSING", "event_end": False},
    {"field": "event", "value": "message"},
    {"field": "id", "value": "7"},
    {"field": "retry", "value": "3000"},
    {"field": "x-vendor", "value": "1"},
    {"raw": ": OPENROUTER PROCESSING"},
)
AFTER_DONE: tuple[tuple[Step, ...], ...] = (
    (),
    ({"chunk": {"choices": [{"index": 0, "delta": {"content": "after [DONE]"}}]}},),
    ({"raw": "not json, and never read"},),
    ({"comment": " bye"},),
)
DONE: Step = {"done": True}


@st.composite
def with_noise(draw: st.DrawFn, steps: list[Step]) -> None:
    inserts = draw(st.lists(st.tuples(upto(len(steps)), upto(len(NOISE) - 1)), max_size=3))
    for position, noise in sorted(inserts, reverse=True):
        steps.insert(position, dict(NOISE[noise]))


@functools.cache
def framings() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "line_ending": st.sampled_from(("lf", "crlf", "cr")),
            "bom": st.booleans(),
            "data_space": st.sampled_from((True, False)),
            "multiline_data": st.booleans(),
            "json_separators": st.sampled_from(("compact", "spaced")),
            "ensure_ascii": st.booleans(),
            "transfer": st.sampled_from(("chunked", "close")),
        }
    )


def write_splits(body_length: int) -> st.SearchStrategy[dict[str, Any]]:
    """How the body is cut into network writes: per event, per byte, every n bytes, or at
    arbitrary offsets (S2: inside data:, the blank line or a UTF-8 character)."""
    splits = [
        st.just({"mode": "event"}),
        st.just({"mode": "byte"}),
        st.builds(lambda size: {"mode": "fixed", "size": size}, st.integers(1, 16)),
    ]
    if body_length > 1:
        offsets = st.lists(st.integers(1, body_length - 1), min_size=1, max_size=4, unique=True)
        splits.append(offsets.map(lambda cut: {"mode": "offsets", "offsets": sorted(cut)}))
    return st.one_of(splits)


@st.composite
def framed_streams(draw: st.DrawFn, steps: list[Step]) -> dict[str, Any]:
    """A stream attempt (its JSON form) sending ``steps`` with drawn framing and envelope."""
    stream: dict[str, Any] = {"framing": draw(framings()), "steps": steps}
    if not draw(BOOLEANS):
        stream["envelope"] = None  # chunks exactly as written: the shortest transcripts
    body = encode_stream(StreamAttempt.model_validate({"stream": stream}).stream).body
    stream["framing"]["split"] = draw(write_splits(len(body)))
    return {"stream": stream}


# --- breaking encodings ----------------------------------------------------------------

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


def _chunk_steps(encoding: Encoding) -> list[Step]:
    return [{"chunk": chunk} for chunk in encoding.chunks]


@st.composite
def last_attempts(draw: st.DrawFn, broken: StreamBreak, encoding: Encoding) -> dict[str, Any]:
    """The last attempt: M encoded, broken as drawn, framed, with noise and trailers."""
    steps = _chunk_steps(encoding)
    if broken.inserted:
        position = draw(upto(len(steps)))
        steps[position:position] = [dict(step) for step in broken.inserted]
    draw(with_noise(steps))
    steps += [dict(step) for step in broken.ending]
    if broken.ending == (DONE,):
        steps += [dict(step) for step in picked(draw, AFTER_DONE)]  # S4
    return draw(framed_streams(steps))


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
def http_errors(draw: st.DrawFn, slow: bool) -> tuple[dict[str, Any], FailedAttempt]:
    status, message, code = draw(pick(HTTP_ERRORS))
    error: dict[str, Any] = {"status": status}
    if message is not None:
        error["body"] = default_error_object(status, message)
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
    draw: st.DrawFn, encoding: Encoding, slow: bool
) -> tuple[dict[str, Any], FailedAttempt]:
    """M's stream, cut at a chunk by a reset, a FIN (H3) or, when ``slow``, a stall (H4)."""
    endings = ("reset", "disconnect", "stall") if slow else ("reset", "disconnect")
    ending = draw(pick(endings))
    kept = draw(upto(len(encoding.chunks)))
    transfer = draw(pick(("chunked", "close")))
    steps: list[Step] = [{"chunk": chunk} for chunk in encoding.chunks[:kept]]
    stream = {"framing": {"transfer": transfer}, "steps": [*steps, {ending: True}]}
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


def failed_attempts(
    encoding: Encoding, *, slow: bool
) -> st.SearchStrategy[tuple[dict[str, Any], FailedAttempt]]:
    """An attempt that fails before the last one. ``slow`` adds those that cost real time
    (a stall waits for the idle timeout; Retry-After: 1 for a second)."""
    return st.one_of(
        http_errors(slow),
        faults(slow),
        broken_streams(encoding, slow),
        refused_streams(),
        throttled(slow),
    )


@st.composite
def retry_policies(draw: st.DrawFn) -> dict[str, Any] | None:
    """A case's own retry-policy fields (R2, R3, R5): a budget, a narrower set of
    retryable codes, or a backoff long enough to measure."""
    kind = draw(pick((None, "budget", "codes", "backoff")))
    if kind == "budget":
        return {"max_retries": draw(upto(3))}
    if kind == "codes":
        kept = draw(st.lists(pick(DEFAULT_RETRYABLE_CODES), min_size=1, unique=True))
        return {"retryable_codes": sorted(kept)}
    if kind == "backoff":
        return {"initial_delay_ms": draw(pick((20, 50))), "max_delay_ms": 400}
    return None


# Unambiguous provider quirks (INVARIANTS.md §Q), one per case: the transforms re-encode a
# canonical stream, and do not all compose (a later one may null an identity an earlier
# one moved to a continuation delta).
MUST_QUIRKS = tuple(
    sorted(quirk.id for quirk in QUIRKS.values() if quirk.transform and quirk.level == "MUST")
)


# --- cases -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseShape:
    """Which layers a family's cases draw from."""

    min_calls: int = 0
    max_calls: int = 4
    breaks: tuple[str, ...] = ()  # kinds of STREAM_BREAKS the last attempt may show
    failures_before: tuple[int, int] = (0, 0)  # failing attempts before the last: min, max
    slow: bool = False  # stalls and honoured Retry-After before the last attempt
    retry_policy: bool = False  # the case may set its own retry-policy fields
    quirks: bool = False  # re-encoded by provider quirk transforms (conformance.quirks)


FAMILY_SHAPES: dict[str, CaseShape] = {
    "G": CaseShape(breaks=STREAM_BREAKS, failures_before=(0, 2)),
    "C": CaseShape(),
    "T": CaseShape(min_calls=1, breaks=("unidentified",)),
    "E": CaseShape(max_calls=2),
    "S": CaseShape(breaks=("cut", "not-json", "error-object")),
    "H": CaseShape(failures_before=(1, 2), slow=True),
    "R": CaseShape(breaks=STREAM_BREAKS, failures_before=(1, 2), slow=True, retry_policy=True),
    "Q": CaseShape(quirks=True),
}


@st.composite
def cases(draw: st.DrawFn, family: str, shape: CaseShape) -> Scenario:
    """One generated case for ``family``: a scenario whose ``expect`` comes from M."""
    kind = draw(pick((None, *shape.breaks)))
    intended = draw(
        intended_responses(
            min_calls=shape.min_calls,
            max_calls=shape.max_calls,
            unidentified=kind == "unidentified",
        )
    )
    broken = draw(stream_breaks(kind))
    least, most = shape.failures_before
    if shape.quirks:  # the quirks re-encode a canonical stream, framing included
        encoding = canonical_encoding(intended)
        last: dict[str, Any] = {"stream": {"steps": [*_chunk_steps(encoding), DONE]}}
    else:
        encoding = draw(encoded_chunks(intended))
        last = draw(last_attempts(broken, encoding))
    before = draw(
        st.lists(failed_attempts(encoding, slow=shape.slow), min_size=least, max_size=most)
    )
    if broken.code is None:
        final = response_expect(
            intended.response, encoding.call_order, unidentified=intended.unidentified
        )
    else:
        final = failure_expect(broken.code)
    override = draw(retry_policies()) if shape.retry_policy else None
    policy = RetryPolicy.model_validate(DEFAULT_POLICY.model_dump() | (override or {}))
    expect = case_expect([failed for _, failed in before], final, policy)
    scenario = Scenario.model_validate(
        {
            "id": "generated",
            "title": f"Generated case ({family} family)",
            "tags": ["generated", family],
            "provenance": {"emitted_by": "streamconform generator (conformance.strategies)"},
            "expect": expect,
            "retry_policy": override,
            "attempts": [*(attempt for attempt, _ in before), last],
        }
    )
    if shape.quirks:
        scenario = with_quirks(scenario, draw(pick(MUST_QUIRKS)))
    return named_by_content(scenario, family)


def named_by_content(scenario: Scenario, family: str) -> Scenario:
    """The scenario with an id made of its content: the same draw always has the same id."""
    digest = hashlib.sha256(scenario.model_dump_json(exclude={"id"}).encode()).hexdigest()
    return scenario.model_copy(update={"id": f"gen-{family.lower()}-{digest[:12]}"})


def family_cases(family: str) -> st.SearchStrategy[Scenario]:
    """The cases that exercise one invariant family (KeyError for a family without any)."""
    return cases(family, FAMILY_SHAPES[family])
