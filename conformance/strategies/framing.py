"""SSE framing of a stream attempt (S1-S4, anchors I1-I7): line endings, comments and
fields, ``data:`` with or without a space, a BOM, write splits at any byte offset, data
after ``[DONE]``."""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from fakeprovider.scenario import StreamAttempt
from fakeprovider.wire import encode_stream

from ._drawing import BOOLEANS, Step, upto

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
# On a wire of named events, an ``event:`` field names the next event and a data line is
# one: only comments and the other fields change nothing there.
NAMED_EVENT_NOISE: tuple[Step, ...] = tuple(
    step for step in NOISE if "comment" in step or step.get("field") not in (None, "event")
)
AFTER_DONE: tuple[tuple[Step, ...], ...] = (
    (),
    ({"chunk": {"choices": [{"index": 0, "delta": {"content": "after [DONE]"}}]}},),
    ({"raw": "not json, and never read"},),
    ({"comment": " bye"},),
)
DONE: Step = {"done": True}


@st.composite
def with_noise(draw: st.DrawFn, steps: list[Step], noise: tuple[Step, ...] = NOISE) -> None:
    """Up to three lines of ``noise`` among ``steps``."""
    inserts = draw(st.lists(st.tuples(upto(len(steps)), upto(len(noise) - 1)), max_size=3))
    for position, chosen in sorted(inserts, reverse=True):
        steps.insert(position, dict(noise[chosen]))


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
