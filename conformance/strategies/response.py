"""The intended response M, drawn part by part with the fragments its deltas carry.

A part and its fragments are drawn together, so that the shrinker deletes a tool call, its
entries and all, in one step. The empty response (E1) is the simplest M.
"""

from __future__ import annotations

import functools
import itertools
import json
import string
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from pydantic import JsonValue

from fakeprovider.build import ABSENT, Field, tool_call_entry

from ._drawing import BOOLEANS, Chunk, pick, positions, upto
from .intent import IntendedCall, IntendedResponse, IntendedUsage

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
def usages(draw: st.DrawFn, *, reasoning: bool = True, cache_writes: bool = False) -> IntendedUsage:
    """Token counts; ``reasoning`` and ``cache_writes``: the wire can carry those counters
    (chat reports reasoning tokens, Anthropic cache writes)."""
    prompt = draw(upto(100_000))
    completion = draw(upto(10_000))
    cached = draw(upto(prompt)) if draw(BOOLEANS) else None
    reasoned = draw(upto(completion)) if reasoning and draw(BOOLEANS) else None
    written = draw(upto(10_000)) if cache_writes and draw(BOOLEANS) else None
    return IntendedUsage(prompt, completion, cached, reasoned, written)


@functools.cache
def finish_reasons() -> st.SearchStrategy[str | None]:
    return st.sampled_from(("stop", None, "tool_calls", "length", *UNKNOWN_FINISHES))


Lane = tuple[str, int]  # ("reasoning", 0), ("text", 0) or ("call", wire index)


@dataclass(frozen=True)
class Piece:
    """One fragment of one lane: a text string, or a tool-call entry."""

    lane: Lane
    value: Any


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

    def lanes(self) -> list[list[Piece]]:
        """Every lane's pieces, in order; a call's entries get its wire index."""
        out = [
            [Piece(("reasoning", 0), piece) for piece in self.reasoning.fragments],
            [Piece(("text", 0), piece) for piece in self.text.fragments],
        ]
        for index, lane in enumerate(self.calls):
            out.append([Piece(("call", index), {"index": index} | e) for e in lane.entries])
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
