"""The meaning map (reference dialects.md §6) as data: what of an attempt's canonical meaning
each dialect's wire can carry, and what a non-success finish becomes on each wire.

A gateway judged across dialects loses nothing by leaving out what its downstream wire has
no place for: that is recorded, never failed (DIALECTS.md "Gateways across dialects").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from fakeprovider.dialects import DialectId

from ..codes import CONTENT_FILTER, PAUSE_TURN, REFUSAL, finish_reason_code

CHAT: Final[DialectId] = "chat-completions"
MESSAGES: Final[DialectId] = "anthropic-messages"
RESPONSES: Final[DialectId] = "openai-responses"

Aspect = Literal[
    "block order",
    "signature",
    "redacted",
    "encrypted_content",
    "cache_write_tokens",
    "reasoning_tokens",
]


@dataclass(frozen=True)
class Slot:
    """One aspect of the meaning that only some wires have a place for."""

    carried_by: frozenset[DialectId]
    elsewhere: str  # why the other wires cannot carry it


SLOTS: Final[dict[Aspect, Slot]] = {
    "block order": Slot(
        frozenset({MESSAGES, RESPONSES}),
        "chat-completions streams one content string beside its tool calls: text after a "
        "tool call cannot be told from text before it",
    ),
    "signature": Slot(
        frozenset({MESSAGES}),
        "a thinking signature has a field in Anthropic Messages alone (signature_delta)",
    ),
    "redacted": Slot(
        frozenset({MESSAGES}),
        "redacted thinking data has a block in Anthropic Messages alone (redacted_thinking)",
    ),
    "encrypted_content": Slot(
        frozenset({RESPONSES}),
        "encrypted reasoning has a field in OpenAI Responses alone (a reasoning item's "
        "encrypted_content)",
    ),
    "cache_write_tokens": Slot(
        frozenset({MESSAGES}),
        "cache writes have a counter in Anthropic Messages alone (cache_creation_input_tokens)",
    ),
    "reasoning_tokens": Slot(
        frozenset({CHAT, RESPONSES}),
        "Anthropic Messages counts reasoning inside output_tokens, with no share of its own",
    ),
}


def carries(dialect: DialectId, aspect: Aspect) -> bool:
    return dialect in SLOTS[aspect].carried_by


TOOL_TURN_BY_CALLS: Final = frozenset({CHAT, RESPONSES})
"""The wires whose clients run the tool calls a successful turn carries whatever its finish
says (chat's `stop` with tool_calls; Responses has no tool finish, only function_call
items). On Anthropic Messages the stop reason decides: `end_turn` with tool_use blocks is
no tool turn, and Claude Code never runs the tool (reference §6 "stop: tool")."""


@dataclass(frozen=True)
class FinishCrossing:
    """The codes a non-success finish may read back as on each wire (none: no way to say
    it), and what its arriving as a success weighs: a MUST breach, or a SHOULD one."""

    reads_as: dict[DialectId, frozenset[str]]
    as_success: Literal["MUST", "SHOULD"] = "MUST"


# OpenRouter's chat `finish_reason: "error"` (a failure the wire states as a finish).
CHAT_ERROR_FINISH: Final = finish_reason_code("error")
_REFUSED: Final = frozenset({REFUSAL, CONTENT_FILTER})
_NONE: Final[frozenset[str]] = frozenset()

FINISH_CROSSINGS: Final[dict[str, FinishCrossing]] = {
    # Chat has no refusal finish: a refusal is content_filter there; Anthropic has no
    # filter finish: a filtered turn is a refusal there; Responses has both (a refusal
    # part, incomplete for content_filter), and LiteLLM's maps the one onto the other.
    REFUSAL: FinishCrossing(
        {CHAT: frozenset({CONTENT_FILTER}), MESSAGES: frozenset({REFUSAL}), RESPONSES: _REFUSED}
    ),
    CONTENT_FILTER: FinishCrossing(
        {CHAT: frozenset({CONTENT_FILTER}), MESSAGES: frozenset({REFUSAL}), RESPONSES: _REFUSED}
    ),
    # Only Anthropic can ask the caller to continue a paused turn; elsewhere it should at
    # least not read as a plain stop (reference §8.4 GW-3, SHOULD).
    PAUSE_TURN: FinishCrossing(
        {CHAT: _NONE, MESSAGES: frozenset({PAUSE_TURN}), RESPONSES: _NONE}, as_success="SHOULD"
    ),
    CHAT_ERROR_FINISH: FinishCrossing(
        {CHAT: frozenset({CHAT_ERROR_FINISH}), MESSAGES: _NONE, RESPONSES: _NONE}
    ),
}
