"""The wire features every dialect's stream can show: its framing and how its body ends."""

from __future__ import annotations

from collections.abc import Collection

from fakeprovider.scenario import (
    CommentStep,
    FieldStep,
    LiteralStep,
    PauseStep,
    ResetStep,
    StreamResponse,
)


def framing_features(response: StreamResponse, *, read_fields: Collection[str] = ()) -> set[str]:
    """The framing options and SSE lines that must not change what the caller sees (S1-S3),
    and a reset a client cannot tell from a close. ``read_fields``: the SSE fields the
    dialect reads (Anthropic's ``event:`` names the event), which are no framing quirk."""
    framing = response.framing
    features = set()
    if framing.line_ending != "lf":
        features.add(f"framing-{framing.line_ending}")
    if framing.split.mode != "event":
        features.add(f"split-{framing.split.mode}")
    if framing.bom:
        features.add("framing-bom")
    if not framing.data_space:
        features.add("framing-data-no-space")
    if framing.multiline_data:
        features.add("framing-multiline-data")
    for step in response.steps:
        if isinstance(step, CommentStep):
            features.add("framing-comment")
        elif isinstance(step, FieldStep) and step.field not in read_fields:
            features.add("framing-field")
        elif isinstance(step, LiteralStep):
            features.add("framing-literal")
    if _reset_looks_like_close(response):
        features.add("reset-as-close")
    return features


def _reset_looks_like_close(response: StreamResponse) -> bool:
    """A reset right behind the last bytes of a close-delimited body: a client's stack may
    hand over the bytes and report the end of the connection as a clean close (libuv does),
    so nothing on the wire lets it tell TRANSPORT from STREAM_CLOSED."""
    steps = response.steps
    return (
        response.framing.transfer == "close"
        and bool(steps)
        and isinstance(steps[-1], ResetStep)
        and not (len(steps) > 1 and isinstance(steps[-2], PauseStep))
    )
