"""Generated Anthropic Messages cases: the shared intended response M, carried as named events.

M is drawn from the pieces the chat cases use (:mod:`.response`: texts, tool calls, argument
fragments, usage) and means the same here; this module says only how the Messages wire
(reference dialects.md §2) carries it, in the layers the chat cases have:

1. M's blocks (:func:`intended_messages`): a thinking block (text, signature) or a
   ``redacted_thinking`` one, a text block (maybe started and stopped empty), up to four
   ``tool_use`` blocks whose ``partial_json`` fragments start with the empty one the real
   API sends (a call without arguments is ``{}``: nothing but empty fragments), and beside
   them blocks that are no part of M: a ``server_tool_use`` and its result, a block type
   the client does not know; the blocks in any order, a stop reason (``end_turn``,
   ``stop_sequence``, ``tool_use``, ``max_tokens``, ``model_context_window_exceeded``,
   ``refusal``, ``pause_turn``), the usage with cache reads and writes;
2. a meaning-preserving encoding as event steps (:func:`encoded_events`): the blocks one
   after another or their events interleaved (starts in index order), a block left open by
   ``max_tokens``, ``message_start``'s preliminary usage and the cumulative counters
   repeated on ``message_delta`` (or on two of them), pings anywhere (one with empty data),
   unknown events, events without an ``event:`` line or named otherwise than their type,
   events after ``message_stop``;
3. the SSE framing and write splits of every wire (:mod:`.framing`);
4. encodings that break M on purpose, with a defined outcome (:data:`MESSAGES_BREAKS`):
   a call never identified, a body ending before ``message_stop``, data that is not JSON,
   an ``event: error`` before or after content, a delta for an index never started or
   already stopped, a start repeating a used index with another block type, a delta whose
   type does not fit its block; and failing attempts before the last with Anthropic's
   error bodies and refused messages (:data:`MESSAGES_FAILURES`).

The same :class:`~.shape.CaseShape` per family as chat says which layers a family draws;
every choice lists its plain option first, so a failure shrinks toward a short, sequential
stream as the real API sends it.
"""

from __future__ import annotations

import functools
import json
import string
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st
from pydantic import JsonValue

from fakeprovider.build import ABSENT, Field
from fakeprovider.dialects import DialectId, anthropic
from fakeprovider.scenario import Scenario

from .. import codes
from ._drawing import BOOLEANS, Step, pick, picked, positions, upto
from .breaking import (
    NOT_JSON,
    FailureWire,
    StreamBreak,
)
from .case import CaseWire, generated_case
from .framing import NAMED_EVENT_NOISE, framed_streams, with_noise
from .intent import (
    FailedAttempt,
    FinishMeanings,
    IntendedCall,
    IntendedResponse,
    IntendedUsage,
)
from .named_events import Events, Mark, insert_steps, lane_orders
from .response import WITHHELD, fragments, text_lanes, tool_calls, usages
from .shape import CaseShape, named_by_content

DIALECT: DialectId = "anthropic-messages"

MESSAGES_FINISHES: FinishMeanings = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "max-tokens",
    "model_context_window_exceeded": "max-tokens",
}
"""Stop reasons and the finish each means (DIALECTS.md, "Non-success ends"); ``refusal``
and ``pause_turn`` are failures, ``REFUSAL`` and ``PAUSE_TURN``."""
TRUNCATING = ("max_tokens", "model_context_window_exceeded")  # may leave a block open
STOP_REASONS = ("end_turn", "stop_sequence", *TRUNCATING, "refusal", "pause_turn")
STOP_SEQUENCE = "\n\nHuman:"

# Blocks no part of M: a tool the provider ran (not the client's to run) and a block type a
# client does not know, skipped without shifting the indexes after it.
SERVER_TOOL_ID = "srvtoolu_01fake"
SERVER_TOOL_BLOCKS: tuple[tuple[JsonValue, ...], ...] = (
    ({"type": "server_tool_use", "id": SERVER_TOOL_ID, "name": "web_search", "input": {}},),
    (
        {"type": "server_tool_use", "id": SERVER_TOOL_ID, "name": "web_search", "input": {}},
        {"type": "web_search_tool_result", "tool_use_id": SERVER_TOOL_ID, "content": []},
    ),
)
SERVER_TOOL_INPUT = ('{"query": ', '"weather in Paris"}')
UNKNOWN_BLOCKS: tuple[JsonValue, ...] = (
    {"type": "x_future_block", "payload": ""},
    {"type": "fallback", "from": {"model": "claude-a"}, "to": {"model": "claude-b"}},
)
UNKNOWN_EVENTS: tuple[Step, ...] = (
    {"event": {"type": "x_future_event", "data": {}}},
    {"event": {"type": "vertex_event", "note": "not a Messages event"}},
)
# A ping whose data line is empty (AN-S3 keeps empty data for pings alone): one literal, so
# that no line drawn later comes between its event: and data: lines.
EMPTY_PING: Step = {"literal": "event: ping\ndata:\n\n"}
# What may follow message_stop, never read (the chat wire's after-[DONE], AN-G5).
AFTER_STOP: tuple[tuple[Step, ...], ...] = (
    (),
    ({"done": True},),
    (
        {
            "event": {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "after message_stop"},
            }
        },
    ),
    ({"event": {"type": "message_stop"}},),
)
# A delta of a type its block does not take, by block type (AN-G3).
WRONG_DELTAS: dict[str, JsonValue] = {
    "text": {"type": "input_json_delta", "partial_json": '{"a": 1}'},
    "thinking": {"type": "text_delta", "text": "not thinking"},
    "redacted_thinking": {"type": "thinking_delta", "thinking": "not redacted"},
    "tool_use": {"type": "text_delta", "text": "not arguments"},
    "server_tool_use": {"type": "text_delta", "text": "not arguments"},
}
# A start repeating a used index, with another block type (refused: DIALECTS.md).
REPEATED_STARTS: dict[str, JsonValue] = {
    "tool_use": {"type": "text", "text": ""},
}
REPEATED_START_OTHERWISE: JsonValue = {
    "type": "tool_use",
    "id": "toolu_repeated",
    "name": "get_time",
    "input": {},
}
# Error events (AN-H2) and the code each stands for.
ERROR_EVENTS: tuple[tuple[str, str], ...] = (
    ("overloaded_error", codes.SERVER),
    ("api_error", codes.SERVER),
    ("rate_limit_error", codes.RATE_LIMIT),
)
# Ends of a body cut before message_stop: nothing more, half a data line, or a last event
# without the blank line that would dispatch it.
CUT_ENDINGS: tuple[tuple[Step, ...], ...] = (
    (),
    ({"literal": 'data: {"type": "content_bl'},),
    ({"event": {"type": "message_stop"}, "event_end": False},),
)
MESSAGES_BREAKS = (
    "unidentified",
    "cut",
    "not-json",
    "error-event",
    "unknown-index",
    "repeated-start",
    "wrong-delta",
)
ROUTING_BREAKS = ("unidentified", "unknown-index", "repeated-start", "wrong-delta")

# What a tool_use start withholding its id or name carries instead (AN-T2).
UNSET_IDENTITIES: tuple[Field, ...] = (ABSENT, None, "")

_OPAQUE = string.ascii_letters + string.digits + "+/="


@functools.cache
def opaque_tokens() -> st.SearchStrategy[str]:
    """A signature or redacted data: opaque base64-like bytes, reported verbatim."""
    return st.text(_OPAQUE, min_size=1, max_size=24)


@dataclass(frozen=True)
class Block:
    """One content block as the wire carries it: its start, its deltas, whether it stops."""

    start: dict[str, JsonValue]
    deltas: tuple[dict[str, JsonValue], ...] = ()
    stopped: bool = True
    call: int | None = None  # the position of M's call it carries, for a tool_use block

    @property
    def type(self) -> str:
        kind = self.start.get("type")
        return kind if isinstance(kind, str) else ""


@dataclass(frozen=True)
class IntendedMessage:
    """M, and the blocks (M's and the others) in the order the wire opens them."""

    response: IntendedResponse
    blocks: tuple[Block, ...]
    unidentified: bool = False

    @property
    def call_order(self) -> tuple[int, ...]:
        return tuple(block.call for block in self.blocks if block.call is not None)


def _deltas(kind: str, key: str, pieces: list[str] | tuple[str, ...]) -> list[dict[str, JsonValue]]:
    return [{"type": kind, key: piece} for piece in pieces]


@st.composite
def reasoning_blocks(draw: st.DrawFn) -> tuple[Block | None, str, str | None, str | None]:
    """No reasoning, a thinking block (its text, its signature, or both: a signature-only
    block is content) or a redacted one; with the reasoning, signature and data of M."""
    kind = draw(pick(("none", "thinking", "redacted")))
    if kind == "redacted":
        data = draw(opaque_tokens())
        return Block({"type": "redacted_thinking", "data": data}), "", None, data
    if kind == "none":
        return None, "", None, None
    lane = draw(text_lanes())
    signature = draw(opaque_tokens()) if not lane.text or draw(BOOLEANS) else None
    deltas = _deltas("thinking_delta", "thinking", lane.fragments)
    if signature is not None:  # one terminal signature_delta, as the API sends it
        deltas.append({"type": "signature_delta", "signature": signature})
    start: dict[str, JsonValue] = {"type": "thinking", "thinking": "", "signature": ""}
    return Block(start, tuple(deltas)), lane.text, signature, None


@st.composite
def text_blocks(draw: st.DrawFn) -> tuple[Block | None, str]:
    """The answer's text block; an empty text may still be started and stopped (no content)."""
    lane = draw(text_lanes())
    if not lane.text and not draw(BOOLEANS):
        return None, ""
    return Block(
        {"type": "text", "text": ""}, tuple(_deltas("text_delta", "text", lane.fragments))
    ), lane.text


@st.composite
def call_blocks(
    draw: st.DrawFn, position: int, unidentified: bool
) -> tuple[Block, IntendedCall, bool]:
    """A ``tool_use`` block and the call it means: its identity on the start, its arguments
    as ``partial_json`` fragments, the first of them empty as the real API sends it. A call
    without arguments gets only empty fragments: its arguments are ``{}`` (AN-C4)."""
    call = draw(tool_calls())
    whole = _json_object(call.arguments)
    start_input: dict[str, Any] = {}
    if whole and draw(BOOLEANS):
        # The input sent whole in the start (a compatible server's shape), maybe followed by
        # the API's lone empty fragment, which must not reset it (the TS SDK does).
        start_input, pieces = whole, [""] * draw(pick((0, 1)))
        call = replace(call, arguments=json.dumps(whole, ensure_ascii=False))
    elif call.arguments:
        pieces = draw(fragments(call.arguments))
        if draw(pick((True, False))):
            pieces.insert(0, "")
    else:
        pieces = [""] * draw(pick((1, 0, 2)))
        call = replace(call, arguments="{}")
    withheld = draw(pick(WITHHELD)) if unidentified else frozenset()
    start: dict[str, Any] = {
        "type": "tool_use",
        "id": call.id,
        "name": call.name,
        "input": start_input,
    }
    for key in withheld:
        value: Field = draw(pick(UNSET_IDENTITIES))
        if value is ABSENT:
            del start[key]
        else:
            start[key] = value
    block = Block(start, tuple(_deltas("input_json_delta", "partial_json", pieces)), call=position)
    return block, call, bool(withheld)


def _json_object(arguments: str) -> dict[str, Any] | None:
    """The arguments as a non-empty JSON object, or None."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    return value if isinstance(value, dict) and value else None


@st.composite
def other_blocks(draw: st.DrawFn) -> list[Block]:
    """Blocks beside M's: a server tool and its result, a block type nobody knows."""
    blocks = []
    if draw(BOOLEANS):
        started = picked(draw, SERVER_TOOL_BLOCKS)
        pieces = SERVER_TOOL_INPUT if draw(BOOLEANS) else ()
        deltas = tuple(_deltas("input_json_delta", "partial_json", pieces))
        blocks.append(Block(_block(started[0]), deltas))
        blocks += [Block(_block(block)) for block in started[1:]]
    if draw(BOOLEANS):
        blocks.append(Block(_block(picked(draw, UNKNOWN_BLOCKS))))
    return blocks


def _block(value: JsonValue) -> dict[str, JsonValue]:
    assert isinstance(value, dict)
    return dict(value)


MESSAGE_USAGES: st.SearchStrategy[IntendedUsage] = usages(reasoning=False, cache_writes=True)
"""Usage as the Messages wire counts it: cache reads and writes, no reasoning tokens."""


@st.composite
def stop_reasons(draw: st.DrawFn, calls: int) -> str:
    """``tool_use`` first when there are calls; any stop reason otherwise."""
    reason: str = draw(pick(("tool_use", *STOP_REASONS) if calls else STOP_REASONS))
    return reason


@st.composite
def intended_messages(
    draw: st.DrawFn, *, min_calls: int = 0, max_calls: int = 4, unidentified: bool = False
) -> IntendedMessage:
    """M and its blocks; the empty response (E1) is the simplest one."""
    reasoning_block, reasoning, signature, redacted = draw(reasoning_blocks())
    text_block, text = draw(text_blocks())
    count = draw(st.integers(min_calls, max_calls))
    drawn = [draw(call_blocks(position, unidentified)) for position in range(count)]
    unique: dict[str, tuple[Block, IntendedCall, bool]] = {}
    for block, call, withheld in drawn:  # one id per call (two would be AN-T4's case)
        unique.setdefault(call.id, (replace(block, call=len(unique)), call, withheld))
    calls = list(unique.values())
    blocks = [b for b in (reasoning_block, text_block) if b is not None]
    blocks += [block for block, _, _ in calls]
    response = IntendedResponse(
        reasoning=reasoning,
        text=text,
        calls=tuple(call for _, call, _ in calls),
        usage=draw(MESSAGE_USAGES),
        finish=draw(stop_reasons(len(calls))),
        signature=signature,
        redacted=redacted,
    )
    if not response.empty:  # beside content, so that they never decide E1
        blocks += draw(other_blocks())
    if len(blocks) > 1 and draw(BOOLEANS):
        blocks = list(draw(st.permutations(blocks)))
    if response.finish in TRUNCATING and blocks and draw(BOOLEANS):
        blocks[-1] = replace(blocks[-1], stopped=False)  # cut by max_tokens while open
    return IntendedMessage(response, tuple(blocks), any(w for _, _, w in calls))


# --- the events ---------------------------------------------------------------------------


def _block_events(index: int, block: Block) -> list[tuple[dict[str, JsonValue], Mark]]:
    events: list[tuple[dict[str, JsonValue], Mark]] = [
        (
            {"type": "content_block_start", "index": index, "content_block": dict(block.start)},
            ("start", index),
        )
    ]
    events += [
        ({"type": "content_block_delta", "index": index, "delta": dict(delta)}, ("delta", index))
        for delta in block.deltas
    ]
    if block.stopped:
        events.append(({"type": "content_block_stop", "index": index}, ("stop", index)))
    return events


def message_start(usage: IntendedUsage, preliminary: int) -> dict[str, JsonValue]:
    counters: dict[str, JsonValue] = {
        "input_tokens": usage.prompt_tokens - (usage.cached_tokens or 0),
        "output_tokens": preliminary,
    }
    counters |= _cache_counters(usage)
    message: dict[str, JsonValue] = {
        "id": "msg_01fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": counters,
    }
    return {"type": "message_start", "message": message}


def _cache_counters(usage: IntendedUsage) -> dict[str, JsonValue]:
    counters: dict[str, JsonValue] = {}
    if usage.cache_write_tokens is not None:
        counters["cache_creation_input_tokens"] = usage.cache_write_tokens
    if usage.cached_tokens is not None:
        counters["cache_read_input_tokens"] = usage.cached_tokens
    return counters


def message_delta(stop_reason: str, usage: dict[str, JsonValue]) -> dict[str, JsonValue]:
    stop_sequence = STOP_SEQUENCE if stop_reason == "stop_sequence" else None
    delta: dict[str, JsonValue] = {"stop_reason": stop_reason, "stop_sequence": stop_sequence}
    return {"type": "message_delta", "delta": delta, "usage": usage}


@st.composite
def message_deltas(draw: st.DrawFn, response: IntendedResponse) -> list[dict[str, JsonValue]]:
    """The stop reason and the final usage, cumulative: the output count alone, or the
    input and cache counters repeated with it; maybe after an earlier, lower count."""
    assert response.usage is not None and response.finish is not None
    usage = response.usage
    final: dict[str, JsonValue] = {"output_tokens": usage.completion_tokens}
    if draw(BOOLEANS):  # repeated, not to be added (AN-C5)
        final = {"input_tokens": usage.prompt_tokens - (usage.cached_tokens or 0)}
        final |= _cache_counters(usage) | {"output_tokens": usage.completion_tokens}
    deltas = [message_delta(response.finish, final)]
    if draw(BOOLEANS):
        earlier: dict[str, JsonValue] = {"output_tokens": draw(upto(usage.completion_tokens))}
        deltas.insert(0, message_delta(response.finish, earlier))
    return deltas


@st.composite
def encoded_events(draw: st.DrawFn, intended: IntendedMessage) -> Events:
    """M's events, up to message_stop, in a meaning-preserving order and form."""
    response = intended.response
    assert response.usage is not None
    events = Events()
    events.add(message_start(response.usage, draw(pick((1, 0, 3)))), ("message", -1))
    lanes = [_block_events(index, block) for index, block in enumerate(intended.blocks)]
    for data, mark in draw(lane_orders(lanes)):
        events.add(data, mark)
    for number, delta in enumerate(draw(message_deltas(response))):
        events.add(delta, ("end", number))
    events.add({"type": "message_stop"}, ("stop-message", -1))
    return events


@st.composite
def with_unread_events(draw: st.DrawFn, events: Events) -> None:
    """Pings anywhere (one maybe with empty data) and unknown events after message_start."""
    end = events.content_end
    for position in sorted(draw(positions(end - 1, 1)), reverse=True):
        insert_steps(events, position + 1, (picked(draw, UNKNOWN_EVENTS),), ("noise", -1))
    pings = sorted(draw(positions(len(events.steps) - 1, 2)), reverse=True)
    for position in pings:
        ping = EMPTY_PING if draw(pick((False, True))) else {"event": {"type": "ping"}}
        insert_steps(events, position, (ping,), ("noise", -1))


# The event: lines an event may carry instead of its type (AN-S2): none, or another name.
EVENT_LINES: tuple[dict[str, Any], ...] = (
    {"event_line": False},
    {"name": "message"},
    {"name": "content_block_delta"},
)


@st.composite
def with_event_lines(draw: st.DrawFn, events: Events) -> None:
    """Up to two events without an ``event:`` line or named otherwise than their type."""
    named = [i for i, step in enumerate(events.steps) if "event" in step]
    for chosen in draw(positions(len(named) - 1, 2)):
        step = events.steps[named[chosen]]
        line = picked(draw, EVENT_LINES)
        if line.get("name") != step["event"].get("type"):
            step.pop("name", None)
            step.pop("event_line", None)
            step.update(line)


# --- breaks -------------------------------------------------------------------------------


def _delta(index: int, delta: JsonValue) -> Step:
    return {"event": {"type": "content_block_delta", "index": index, "delta": delta}}


@st.composite
def messages_breaks(
    draw: st.DrawFn, kind: str | None, intended: IntendedMessage, events: Events
) -> StreamBreak:
    """Break the events as ``kind`` says (in place), with the outcome that stands for;
    ``unidentified`` is drawn with the calls (:func:`call_blocks`)."""
    blocks = intended.blocks
    after_start, end = events.first(("message", -1)) + 1, events.content_end
    if kind == "cut":
        # Counted from the end, so that the cut stays put while the shrinker drops events.
        kept = len(events.steps) - 1 - draw(upto(len(events.steps) - 1))
        del events.steps[kept:], events.marks[kept:]
        return StreamBreak(codes.STREAM_CLOSED, ending=picked(draw, CUT_ENDINGS))
    if kind == "not-json":
        payload = draw(pick(NOT_JSON))
        steps = ({"field": "event", "value": "content_block_delta"}, {"raw": payload})
        insert_steps(events, draw(st.integers(after_start, end)), steps, ("break", -1))
        return StreamBreak(codes.MALFORMED_RESPONSE, ending=())
    if kind == "error-event":
        error_type, code = picked(draw, ERROR_EVENTS)
        position = draw(st.integers(after_start, end))
        del events.steps[position:], events.marks[position:]
        error = {"type": "error", "error": {"type": error_type, "message": "Overloaded"}}
        insert_steps(events, position, ({"event": error},), ("break", -1))
        return StreamBreak(code, ending=())
    if kind == "unknown-index":
        stopped = [i for i, block in enumerate(blocks) if block.stopped]
        if draw(BOOLEANS) and stopped:  # a block already stopped
            index = picked(draw, tuple(stopped))
            least = events.first(("stop", index)) + 1
        else:  # a block never started
            index, least = len(blocks) + draw(upto(2)), after_start
        delta: JsonValue = {"type": "text_delta", "text": "routed nowhere"}
        insert_steps(events, draw(st.integers(least, end)), (_delta(index, delta),), ("break", -1))
        return StreamBreak(codes.MALFORMED_RESPONSE, ending=())
    fitting = [i for i, b in enumerate(blocks) if b.type in WRONG_DELTAS]
    if kind == "wrong-delta" and fitting:
        index = picked(draw, tuple(fitting))
        least = events.first(("start", index)) + 1
        most = events.first(("stop", index)) if blocks[index].stopped else end
        wrong = (_delta(index, WRONG_DELTAS[blocks[index].type]),)
        insert_steps(events, draw(st.integers(least, most)), wrong, ("break", -1))
        return StreamBreak(codes.MALFORMED_RESPONSE, ending=())
    if kind == "repeated-start" and blocks:
        index = draw(upto(len(blocks) - 1))
        other = REPEATED_STARTS.get(blocks[index].type, REPEATED_START_OTHERWISE)
        start = {"event": {"type": "content_block_start", "index": index, "content_block": other}}
        least = events.first(("start", index)) + 1
        insert_steps(events, draw(st.integers(least, end)), (start,), ("break", -1))
        return StreamBreak(codes.MALFORMED_RESPONSE, ending=())
    return StreamBreak(ending=picked(draw, AFTER_STOP))


# --- attempts before the last -------------------------------------------------------------


@st.composite
def refused_messages(draw: st.DrawFn) -> tuple[dict[str, Any], FailedAttempt]:
    """A complete message to refuse, its usage billed: nothing in it (E1), or a tool call
    without an id (AN-T2)."""
    usage = draw(MESSAGE_USAGES)
    events = Events()
    events.add(message_start(usage, 1), ("message", -1))
    if draw(BOOLEANS):
        start: dict[str, JsonValue] = {"type": "tool_use", "name": "get_weather", "input": {}}
        for data, mark in _block_events(
            0, Block(start, ({"type": "input_json_delta", "partial_json": "{}"},))
        ):
            events.add(data, mark)
        stop, code = "tool_use", codes.MALFORMED_TOOL_CALL
    else:
        stop, code = "end_turn", codes.EMPTY_RESPONSE
    events.add(message_delta(stop, {"output_tokens": usage.completion_tokens}), ("end", 0))
    events.add({"type": "message_stop"}, ("stop-message", -1))
    return {"stream": {"steps": events.steps}}, FailedAttempt(code, usage=usage)


MESSAGES_FAILURES = FailureWire(anthropic.error_object, refused_messages)
MESSAGES_CASES = CaseWire(
    DIALECT,
    "Generated Anthropic Messages case",
    ("anthropic",),
    MESSAGES_FAILURES,
    MESSAGES_FINISHES,
)


# --- the case -----------------------------------------------------------------------------

MESSAGES_FAMILY_SHAPES: dict[str, CaseShape] = {
    "G": CaseShape(breaks=MESSAGES_BREAKS, failures_before=(0, 2)),
    "C": CaseShape(),
    "T": CaseShape(min_calls=1, breaks=ROUTING_BREAKS),
    "E": CaseShape(max_calls=2),
    "S": CaseShape(breaks=("cut", "not-json", "error-event")),
    "H": CaseShape(failures_before=(1, 2), slow=True),
    "R": CaseShape(breaks=("unidentified",), failures_before=(1, 2), slow=True, retry_policy=True),
}
"""The families as chat has them (identity and routing in T), but for Q: the quirk
transforms re-encode chat chunks."""


@st.composite
def messages_cases(draw: st.DrawFn, family: str, shape: CaseShape) -> Scenario:
    """One generated Anthropic Messages case for ``family``, ``expect`` written from M."""
    kind = draw(pick((None, *shape.breaks)))
    intended = draw(
        intended_messages(
            min_calls=shape.min_calls,
            max_calls=shape.max_calls,
            unidentified=kind == "unidentified",
        )
    )
    events = draw(encoded_events(intended))
    draw(with_event_lines(events))
    draw(with_unread_events(events))
    # M's stream up to message_stop, for the attempts before the last to break.
    unended = [dict(step) for step in events.steps[:-1]]
    broken = draw(messages_breaks(kind, intended, events))
    steps = events.steps
    draw(with_noise(steps, NAMED_EVENT_NOISE))
    steps += [dict(step) for step in broken.ending]
    last = draw(framed_streams(steps))
    scenario = draw(
        generated_case(
            family,
            shape,
            MESSAGES_CASES,
            response=intended.response,
            call_order=intended.call_order,
            unidentified=intended.unidentified,
            unended=unended,
            last=last,
            code=broken.code,
        )
    )
    return named_by_content(scenario, f"an-{family}")
