"""N, AN-R, RS-R — the next request of a two-turn case: what the client sends after the stream.

The fake provider logs the request a client builds from what it assembled
(``fakeprovider.follow_up``); these rules judge it against the first turn as the caller
was handed it, the oracle's outcome. Pairing a tool result with its call and keeping each
call's id mean the same on every wire (N); replaying the continuity tokens is each wire's
own (AN-R2 signatures and redacted data, RS-R2 reasoning items' ``encrypted_content``).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

from fakeprovider.dialects import DialectId
from fakeprovider.follow_up import Call, FirstTurn, Rule, Token, follow_up_problems

from ..events import Block, ReasoningBlock, ToolCallBlock
from .evidence import Evidence
from .registry import Judgement, Scope, breached, held, invariant

TWO_TURN = Scope("every two-turn case", lambda scenario: scenario.follow_up is not None)
SOURCE = (
    "the provider's refusals of a replayed history (the dialect reference's §4, B1-B14, "
    "G17-G27, A18: https://github.com/bitrouter/bitrouter/pull/592, "
    "https://github.com/router-for-me/CLIProxyAPI/issues/5692); "
    "docs/decisions.md#two-turn-cases"
)


def first_turn(evidence: Evidence) -> FirstTurn:
    """The first turn as the caller was handed it: its calls and continuity tokens."""
    return turn_of(evidence.judged_expected.final.blocks)


def turn_of(blocks: Sequence[Block]) -> FirstTurn:
    """The calls and continuity tokens of a turn's assembled blocks, in order."""
    calls = tuple(Call(b.id, b.item_id) for b in blocks if isinstance(b, ToolCallBlock))
    tokens = tuple(token for b in blocks if isinstance(b, ReasoningBlock) for token in _tokens(b))
    return FirstTurn(calls, tokens)


def _tokens(block: ReasoningBlock) -> tuple[Token, ...]:
    if block.redacted is not None:
        return (Token("redacted", block.redacted),)
    if block.encrypted_content is not None:
        return (Token("encrypted_content", block.encrypted_content, block.item_id),)
    if block.signature is not None:
        return (Token("signature", block.signature),)
    return ()


def judge_next_request(evidence: Evidence, rule: Rule, *, sent: bool = False) -> Judgement | None:
    """The first problem of ``rule`` in the case's next request; None where there is no
    next request to judge (not a two-turn case, a first turn that is not a success). A
    missing request is ``sent``'s rule's breach alone: the others have nothing to read."""
    if evidence.scenario.follow_up is None or not evidence.judged_expected.final.success:
        return None
    if not evidence.follow_ups:
        if evidence.attempts[-1].failed:
            return None  # the first turn already failed the caller: nothing to answer
        return breached("the client sent no next request") if sent else None
    dialect: DialectId = evidence.scenario.dialect
    body = _body(evidence)
    problems = [
        p for p in follow_up_problems(dialect, first_turn(evidence), body) if p.rule == rule
    ]
    return breached(problems[0].reason) if problems else held()


def _body(evidence: Evidence) -> bytes:
    return base64.b64decode(evidence.follow_ups[0].body_base64)


@invariant(
    "N1",
    "MUST",
    "The next request of a two-turn case answers every tool call of the turn once, each "
    "tool result under the id the stream gave that call (chat tool_call_id, Anthropic "
    "tool_use_id, Responses function_call_output.call_id, never the item id).",
    source=SOURCE,
    reads=(),
    scope=TWO_TURN,
    needs=("follow_up",),
    rationale=(
        "The provider pairs a tool result with its call by id: a result under an id the "
        "stream never gave (a Responses item id for the call_id), a call left unanswered or "
        "answered twice is refused with a 400, and the conversation cannot go on."
    ),
)
def check_results_paired(evidence: Evidence) -> Judgement | None:
    return judge_next_request(evidence, "pairing", sent=True)


@invariant(
    "N2",
    "MUST",
    "The next request replays the assistant turn with each of its tool calls once, under "
    "the id the stream gave: none left out, duplicated or invented.",
    source=SOURCE,
    reads=(),
    scope=TWO_TURN,
    needs=("follow_up",),
    rationale=(
        "The replayed history is what the provider checks every tool result against: a call "
        "replayed twice (content tool_use beside tool_calls) is refused as duplicate ids, "
        "and one replayed under another id leaves its result answering nothing."
    ),
)
def check_history_ids(evidence: Evidence) -> Judgement | None:
    return judge_next_request(evidence, "history")


@invariant(
    "AN-R2",
    "MUST",
    "The next request replays every thinking block with its signature and every "
    "redacted_thinking block with its data, byte-identical and in order.",
    source=SOURCE,
    reads=(),
    scope=TWO_TURN,
    needs=("follow_up",),
    dialects=("anthropic-messages",),
    rationale=(
        "Anthropic verifies each signature against its thinking block: one dropped, altered "
        'or out of order fails the next request with 400 "Invalid signature in thinking '
        'block", every later turn with it.'
    ),
)
def check_signatures_replayed(evidence: Evidence) -> Judgement | None:
    return judge_next_request(evidence, "replay")


@invariant(
    "RS-R2",
    "MUST",
    "The next request replays every reasoning item with its id and encrypted_content, "
    "byte-identical and in order.",
    source=SOURCE,
    reads=(),
    scope=TWO_TURN,
    needs=("follow_up",),
    interop="SHOULD",
    dialects=("openai-responses",),
    rationale=(
        "Under store: false a reasoning item replayed by id without its encrypted_content is "
        '"not found" (404/400); with another or an empty id, strict gateways refuse it; '
        "dropped altogether, the model reasons from nothing."
    ),
)
def check_encrypted_content_replayed(evidence: Evidence) -> Judgement | None:
    return judge_next_request(evidence, "replay")
