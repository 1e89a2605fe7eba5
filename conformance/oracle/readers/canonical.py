"""How an attempt whose stream ended reads in the canonical outcome, whatever its dialect:
the refusals that are the harness's duty (T5, E1) and the endings interop also accepts (E4),
each with the interop reading that loses nothing the wire sent."""

from __future__ import annotations

import dataclasses

from ...codes import EMPTY_RESPONSE, MALFORMED_TOOL_CALL, MAX_TOKENS
from ...events import Block, ReasoningBlock, TextBlock, ToolCallBlock, Usage
from ..outcome import ExpectedAttempt


@dataclasses.dataclass(frozen=True)
class Ending:
    """What a dialect's reading hands over at the end of an attempt's stream."""

    blocks: tuple[Block, ...]
    reason: str  # the canonical finish: stop, tool-calls, max-tokens or error
    code: str | None  # with error: the code the wire's finish maps to
    usage: Usage | None
    finish_absent: bool  # the wire sent no finish reason at all


def failed_attempt(
    number: int, code: str, blocks: tuple[Block, ...], usage: Usage | None, features: set[str]
) -> ExpectedAttempt:
    """An attempt that failed in its body: the blocks opened so far, the usage billed."""
    return ExpectedAttempt(
        number, "error", code, blocks, billed_usage=usage, features=frozenset(features)
    )


def ended_attempt(number: int, ending: Ending, features: set[str]) -> ExpectedAttempt:
    """The attempt as the harness reads a stream that ended so, with its interop readings;
    ``features`` gains the content's features."""
    calls = [block for block in ending.blocks if isinstance(block, ToolCallBlock)]
    if any(not call.id or not call.name for call in calls):
        features.add("tool-unidentified")
        refused = _ended(number, ending, features, "error", MALFORMED_TOOL_CALL)
        # T5's refusal is the harness's duty: the calls handed back as the wire sent
        # them, an id it never sent made up (unique), lose nothing.
        as_sent = _ended(number, ending, features, ending.reason, ending.code)
        return dataclasses.replace(refused, interop_readings=(as_sent,))
    _content_features(ending, features)
    if ending.reason == "stop" and not ending.blocks:
        refused = _ended(number, ending, features, "error", EMPTY_RESPONSE)
        # E1's refusal is the harness's duty: the empty stop as sent loses nothing.
        as_sent = _ended(number, ending, features, "stop")
        return dataclasses.replace(refused, interop_readings=(as_sent,))
    if ending.code:
        features.add("finish-error")  # the wire's own finish reason is a failure (C5)
    ended = _ended(number, ending, features, ending.reason, ending.code)
    return dataclasses.replace(ended, interop_readings=_lossless(number, ending, features, calls))


def _lossless(
    number: int, ending: Ending, features: set[str], calls: list[ToolCallBlock]
) -> tuple[ExpectedAttempt, ...]:
    """How a successful attempt may also end under interop, losing nothing (E4, v1.2)."""
    if ending.reason == "tool-calls" and not calls:
        # No call streamed: a library that exposes no finish reason reports stop, and
        # its caller does what it does for tool-calls with no call.
        return (_ended(number, ending, features, "stop"),)
    if ending.reason == "max-tokens" and not ending.blocks:
        # Cut before any output: a library's typed refusal says exactly that.
        return (_ended(number, ending, features, "error", MAX_TOKENS),)
    return ()


def _ended(
    number: int, ending: Ending, features: set[str], reason: str, code: str | None = None
) -> ExpectedAttempt:
    """The attempt as read, ending so; a refusal (T5, E1) still reports the wire's usage
    before its failure."""
    return ExpectedAttempt(
        number,
        reason,
        code,
        ending.blocks,
        ending.usage,
        billed_usage=ending.usage,
        features=frozenset(features),
    )


def _content_features(ending: Ending, features: set[str]) -> None:
    blocks = ending.blocks
    kinds = {type(block) for block in blocks}
    texts = [b.text for b in blocks if isinstance(b, TextBlock)]
    if not blocks:
        features.add(f"empty-{ending.reason}")
    elif kinds == {ReasoningBlock}:
        features.add("reasoning-only")
    if texts and not texts[0].strip():
        features.add("whitespace-only")
    if ending.reason == "stop" and ToolCallBlock in kinds:
        features.add("stop-with-tool-call")
    if ending.finish_absent:
        features.add("finish-absent")
