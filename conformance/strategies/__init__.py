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
from M (:mod:`conformance.strategies.intent`), so it can be saved as a fixture as it is.
Every choice lists its plain option first and every list shrinks to empty: Hypothesis shrinks toward
fewer calls, shorter text, canonical chunks and no framing quirks.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from fakeprovider.dialects import DEFAULT_DIALECT, DialectId
from fakeprovider.scenario import Scenario

from ..quirks import QUIRKS, with_quirks
from ._drawing import BOOLEANS, Step, pick, picked, upto
from .anthropic import MESSAGES_FAMILY_SHAPES, messages_cases
from .breaking import (
    STREAM_BREAKS,
    StreamBreak,
    stream_breaks,
)
from .case import CHAT_CASES, generated_case
from .encoding import Encoding, canonical_encoding, encoded_chunks
from .framing import AFTER_DONE, DONE, framed_streams, with_noise
from .response import intended_responses
from .responses import RESPONSES_FAMILY_SHAPES, responses_cases
from .shape import CaseShape, named_by_content

# Unambiguous provider quirks (INVARIANTS.md §Q). Their transforms re-encode a canonical
# stream; two identity quirks (A*, B1) do not always compose (one may null an identity the
# other moved to a continuation delta), so a case gets at most one of those.
MUST_QUIRKS = tuple(
    sorted(quirk.id for quirk in QUIRKS.values() if quirk.transform and quirk.level == "MUST")
)
IDENTITY_QUIRKS = tuple(q for q in MUST_QUIRKS if q.startswith("A") or q == "B1")
OTHER_QUIRKS = tuple(q for q in MUST_QUIRKS if q not in IDENTITY_QUIRKS)


@st.composite
def quirk_sets(draw: st.DrawFn) -> list[str]:
    """One to three quirks to apply in turn, the identity quirk (if any) first."""
    chosen = draw(st.lists(pick(OTHER_QUIRKS), max_size=2, unique=True))
    if not chosen or draw(BOOLEANS):
        chosen.insert(0, draw(pick(IDENTITY_QUIRKS)))
    return chosen


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


FAMILY_SHAPES: dict[str, CaseShape] = {
    "G": CaseShape(breaks=STREAM_BREAKS, failures_before=(0, 2)),
    "C": CaseShape(),
    "T": CaseShape(min_calls=1, breaks=("unidentified",)),
    "E": CaseShape(max_calls=2),
    "S": CaseShape(breaks=("cut", "not-json", "error-object")),
    "H": CaseShape(failures_before=(1, 2), slow=True),
    "R": CaseShape(breaks=("unidentified",), failures_before=(1, 2), slow=True, retry_policy=True),
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
    if shape.quirks:  # the quirks re-encode a canonical stream, framing included
        encoding = canonical_encoding(intended)
        last: dict[str, Any] = {"stream": {"steps": [*_chunk_steps(encoding), DONE]}}
    else:
        encoding = draw(encoded_chunks(intended))
        last = draw(last_attempts(broken, encoding))
    scenario = draw(
        generated_case(
            family,
            shape,
            CHAT_CASES,
            response=intended.response,
            call_order=encoding.call_order,
            unidentified=intended.unidentified,
            unended=_chunk_steps(encoding),
            last=last,
            code=broken.code,
        )
    )
    if shape.quirks:
        scenario = with_quirks(scenario, *draw(quirk_sets()))
    return named_by_content(scenario, family)


def family_cases(family: str, dialect: DialectId = DEFAULT_DIALECT) -> st.SearchStrategy[Scenario]:
    """The cases of ``dialect`` that exercise one invariant family (KeyError for a family
    without any)."""
    if dialect == "anthropic-messages":
        return messages_cases(family, MESSAGES_FAMILY_SHAPES[family])
    if dialect == "openai-responses":
        return responses_cases(family, RESPONSES_FAMILY_SHAPES[family])
    return cases(family, FAMILY_SHAPES[family])


FAMILY_SHAPES_OF: dict[DialectId, dict[str, CaseShape]] = {
    "chat-completions": FAMILY_SHAPES,
    "anthropic-messages": MESSAGES_FAMILY_SHAPES,
    "openai-responses": RESPONSES_FAMILY_SHAPES,
}
"""Each dialect's families and the layers their cases draw from."""
DIALECT_FAMILIES: dict[DialectId, tuple[str, ...]] = {
    dialect: tuple(shapes) for dialect, shapes in FAMILY_SHAPES_OF.items()
}
"""The families each dialect's generated cases exercise."""


def family_shape(family: str, dialect: DialectId = DEFAULT_DIALECT) -> CaseShape:
    """Which layers the cases of ``dialect`` for ``family`` draw from."""
    return FAMILY_SHAPES_OF[dialect][family]
