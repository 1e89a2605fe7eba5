"""Two-turn cases, sans-IO: the next request a client sends after a scripted first turn.

A client that ran the first turn's tool calls sends its history back: the assistant turn
it assembled (its tool calls under the ids the stream gave, its reasoning blocks with their
continuity tokens) and a tool result per call. The provider reads that request here, as a
pure function of the first turn's canonical content and the request body, and names what
the real API would refuse: a result paired with an id the stream never gave (the item id
for the ``call_id``), a call answered twice or not at all, a duplicated or invented id, a
signature, redacted data or ``encrypted_content`` not replayed byte for byte, in order
(DIALECTS.md "Continuity tokens"; reference dialects.md §4, B and G rows).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import JsonValue

from .build import messages_stream, responses_stream, stream
from .dialects import DialectId
from .dialects.responses import numbered_events
from .scenario import StreamAttempt

TokenKind = Literal["signature", "redacted", "encrypted_content"]
Rule = Literal["pairing", "history", "replay"]
"""What a problem is about: the tool results' ids (``pairing``), the calls of the replayed
assistant turn (``history``), the continuity tokens (``replay``)."""

TOKEN_NAMES: dict[TokenKind, str] = {
    "signature": "thinking block's signature",
    "redacted": "redacted_thinking block's data",
    "encrypted_content": "reasoning item's encrypted_content",
}


@dataclass(frozen=True)
class Call:
    """A tool call of the first turn: the id a result must carry, and (Responses) the item id
    that is not that id."""

    id: str
    item_id: str | None = None


@dataclass(frozen=True)
class Token:
    """A continuity token of the first turn, or of a replayed history: None where the
    block carries none (a thinking block replayed without its signature)."""

    kind: TokenKind
    value: str | None
    item_id: str | None = None  # a Responses reasoning item's id, replayed beside it


@dataclass(frozen=True)
class FirstTurn:
    """What the first turn gave the client, as the caller sees it (the oracle's outcome)."""

    calls: tuple[Call, ...] = ()
    tokens: tuple[Token, ...] = ()


@dataclass(frozen=True)
class Problem:
    rule: Rule
    reason: str


@dataclass
class Replayed:
    """What a request carries of earlier turns, read in the request's own dialect."""

    assistant: bool = False  # it has an assistant turn at all
    calls: list[object] = field(default_factory=list)  # the ids its assistant turn's calls carry
    results: list[object] = field(default_factory=list)  # the ids its tool results carry
    tokens: list[Token] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return self.assistant or bool(self.calls or self.results or self.tokens)


def is_follow_up(dialect: DialectId, body: bytes) -> bool:
    """Whether a request carries an earlier turn (the first request of a case carries only
    the user's question): the next request of a two-turn case, not a retry of the first."""
    return replayed(dialect, body).any


def replayed(dialect: DialectId, body: bytes) -> Replayed:
    """The earlier turns a request body carries; nothing for a body that is no JSON object."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Replayed()
    if not isinstance(request, dict):
        return Replayed()
    return _READERS[dialect](request)


def follow_up_problems(dialect: DialectId, first: FirstTurn, body: bytes) -> tuple[Problem, ...]:
    """What the real API would refuse in this next request, given what the first turn gave."""
    seen = replayed(dialect, body)
    return (
        *_id_problems(
            "pairing",
            seen.results,
            first,
            "a tool result's id",
            "call {call} has no tool result",
            "call {call} has {times} tool results",
        ),
        *_id_problems(
            "history",
            seen.calls,
            first,
            "a replayed call's id",
            "the replayed turn leaves out call {call}",
            "the replayed turn has call {call} {times} times",
        ),
        *replay_problems(first, seen),
    )


def answer_attempt(dialect: DialectId, text: str) -> StreamAttempt:
    """What the provider streams back to the next request: ``text``, and a plain stop."""
    if dialect == "anthropic-messages":
        return (
            messages_stream()
            .message_start(input_tokens=1)
            .text_start(0)
            .text_delta(0, text)
            .block_stop(0)
            .message_delta("end_turn", output_tokens=1)
            .message_stop()
            .build()
        )
    if dialect == "openai-responses":
        part: JsonValue = {"type": "output_text", "text": text, "annotations": []}
        done: JsonValue = {
            "id": "msg_next",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [part],
        }
        usage: JsonValue = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        attempt = (
            responses_stream()
            .created()
            .message_added(0, "msg_next")
            .part_added(0, "msg_next")
            .text_delta(0, "msg_next", text)
            .item_done(0, done)
            .completed(output=[done], usage=usage)
            .build()
        )
        # Numbered as a scenario's own attempts are when it is validated.
        steps = numbered_events(attempt.stream.steps)
        return attempt.model_copy(
            update={"stream": attempt.stream.model_copy(update={"steps": steps})}
        )
    return stream().text(text).finish("stop").done().build()


# --- what each dialect's request carries ------------------------------------------------


def _objects(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _chat(request: dict[str, Any]) -> Replayed:
    seen = Replayed()
    for message in _objects(request.get("messages")):
        if message.get("role") == "assistant":
            seen.assistant = True
            seen.calls += [call.get("id") for call in _objects(message.get("tool_calls"))]
        elif message.get("role") == "tool":
            seen.results.append(message.get("tool_call_id"))
    return seen


def _anthropic(request: dict[str, Any]) -> Replayed:
    seen = Replayed()
    for message in _objects(request.get("messages")):
        blocks = _objects(message.get("content"))
        if message.get("role") == "assistant":
            seen.assistant = True
            for block in blocks:
                kind = block.get("type")
                if kind == "tool_use":
                    seen.calls.append(block.get("id"))
                elif kind == "thinking":
                    seen.tokens.append(Token("signature", _text(block.get("signature"))))
                elif kind == "redacted_thinking":
                    seen.tokens.append(Token("redacted", _text(block.get("data"))))
        else:
            seen.results += [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
    return seen


def _responses(request: dict[str, Any]) -> Replayed:
    seen = Replayed()
    for item in _objects(request.get("input")):
        kind = item.get("type")
        if kind == "function_call":
            seen.calls.append(item.get("call_id"))
        elif kind == "function_call_output":
            seen.results.append(item.get("call_id"))
        elif kind == "reasoning":
            value, item_id = _text(item.get("encrypted_content")), _text(item.get("id"))
            seen.tokens.append(Token("encrypted_content", value, item_id))
        elif item.get("role") == "assistant":
            seen.assistant = True
    return seen


_READERS = {
    "chat-completions": _chat,
    "anthropic-messages": _anthropic,
    "openai-responses": _responses,
}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


# --- the checks -------------------------------------------------------------------------


def shown(value: object) -> str:
    """An id or token from a request, escaped and cut for a reason (untrusted bytes)."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 48 else f"{text[:40]}…({len(text)} chars)"


def _unknown_id(value: object, first: FirstTurn, what: str) -> str:
    """Why ``value`` is no id of the first turn: the item id for the call id, or invented."""
    item_of = next((call for call in first.calls if call.item_id == value), None)
    if item_of is not None:
        return f"{what} {shown(value)} is the item id of call {shown(item_of.id)}, not its call_id"
    given = ", ".join(shown(call.id) for call in first.calls) or "none"
    return f"{what} {shown(value)} is no id the stream gave (it gave {given})"


def _id_problems(
    rule: Rule, values: Sequence[object], first: FirstTurn, what: str, missing: str, repeated: str
) -> list[Problem]:
    """Each of the first turn's calls once among ``values`` (the results' ids, or the
    replayed calls'), and nothing else there: ``missing``/``repeated`` say how one was not."""
    ids = {call.id for call in first.calls}
    problems = [
        Problem(rule, _unknown_id(value, first, what)) for value in values if value not in ids
    ]
    counts = Counter(value for value in values if value in ids)
    for call in first.calls:
        times = counts[call.id]
        if times != 1:
            template = missing if times == 0 else repeated
            problems.append(Problem(rule, template.format(call=shown(call.id), times=times)))
    return problems


def replay_problems(first: FirstTurn, seen: Replayed) -> list[Problem]:
    """The first turn's tokens, replayed in order and byte for byte (values compared once
    decoded: a JSON escape is the same byte string to the API)."""
    wanted, got = list(first.tokens), list(seen.tokens)
    for position, token in enumerate(wanted, start=1):
        name = f"{TOKEN_NAMES[token.kind]} (reasoning block {position})"
        if position > len(got):
            return [Problem("replay", f"the next request leaves out the {name}")]
        replay = got[position - 1]
        if replay.kind != token.kind:
            return [Problem("replay", f"the {name} is replayed as a {TOKEN_NAMES[replay.kind]}")]
        if replay.value != token.value:
            held = "missing" if replay.value is None else shown(replay.value)
            return [
                Problem("replay", f"the {name} is {held}, the stream gave {shown(token.value)}")
            ]
        if token.item_id is not None and replay.item_id != token.item_id:
            return [
                Problem(
                    "replay",
                    f"the {name} is replayed under id {shown(replay.item_id)}, "
                    f"the stream gave {shown(token.item_id)}",
                )
            ]
    if len(got) > len(wanted):
        extra = got[len(wanted)]
        return [
            Problem(
                "replay",
                f"the next request replays a {TOKEN_NAMES[extra.kind]} the stream never gave",
            )
        ]
    return []
