"""A meaning-preserving encoding of M as chunks (anchors.md §3 A1-A12, B1, D1, D2, E, F,
G, H): interleaving, grouping, null and empty fillers, first-chunk signatures, finish and
usage placement, empty-choices pings; and the canonical OpenAI encoding."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from fakeprovider.build import tool_call_entry, usage_object

from ._drawing import BOOLEANS, Chunk, pick, positions, upto
from .intent import IntendedUsage
from .response import Intended, Piece


@st.composite
def interleavings(draw: st.DrawFn, lanes: list[list[Piece]]) -> list[Piece]:
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
def groupings(draw: st.DrawFn, pieces: list[Piece]) -> list[list[Piece]]:
    """Consecutive pieces of different lanes may share a chunk (content beside tool calls,
    several parallel calls in one delta)."""
    groups: list[list[Piece]] = []
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


def chunk_of(group: list[Piece], style: str) -> Chunk:
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
