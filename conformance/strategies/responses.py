"""Generated OpenAI Responses cases: the shared intended response M, carried as typed events.

M is drawn from the pieces the chat cases use (:mod:`.response`: texts, tool calls, argument
fragments, usage) and means the same here; this module says only how the Responses wire
(reference dialects.md §3) carries it, in the layers the other wires have:

1. M's output items (:func:`intended_outputs`): a ``reasoning`` item (its summary or raw
   reasoning text, maybe an ``encrypted_content``), a ``message`` item with an
   ``output_text`` part (maybe opened and closed empty), a ``message`` with a ``refusal``
   part, up to four ``function_call`` items (the ``call_id`` is the call's id, the item
   ``id`` beside it; the name and ``call_id`` on ``output_item.added``, or only filled in by
   ``output_item.done``, or left out of it; the arguments as deltas or only in the
   ``.done`` events), and an item type no client knows; the items in any order; the end
   (``completed``, ``incomplete`` with ``max_output_tokens``, ``content_filter`` or no
   reason) with the usage, cached and reasoning tokens included in the wire's counts;
2. a meaning-preserving encoding as event steps (:func:`encoded_events`): the items one
   after another or interleaved (added in index order), the ``.done`` payloads whole,
   empty, missing or different from the deltas, ``item_id`` the item's id, rotated on every
   event (GitHub Copilot) or left out, content parts announced or not, the terminal
   ``output`` whole, empty, ``null`` or missing, an item left open by ``incomplete``,
   ``response.in_progress``, keepalives anywhere, unknown events, ``sequence_number``
   repeated, jumping or missing, and after the terminal event a ``[DONE]`` (gateways add
   one) or events never read;
3. the SSE framing and write splits of every wire (:mod:`.framing`);
4. encodings that break M on purpose, with a defined outcome (:data:`RESPONSES_BREAKS`):
   a call never identified, a body ending (or sending ``[DONE]``) before a terminal event,
   data that is not JSON, an ``error`` event nested or flat (with or without the
   ``response.failed`` after it) or ``response.failed`` alone, a delta for an output index
   never opened or already done; and failing attempts before the last with the chat error
   bodies and refused responses (:data:`RESPONSES_FAILURES`).

The quirk transforms (family Q) re-encode chat chunks: they have no Responses form. Every
choice lists its plain option first, so a failure shrinks toward the stream the real API
sends: ``created``, the items one by one, ``completed`` with the whole output.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st
from pydantic import JsonValue

from fakeprovider.build import ABSENT, Field
from fakeprovider.dialects import DialectId, responses
from fakeprovider.scenario import Scenario

from .. import codes
from ._drawing import BOOLEANS, Step, pick, picked, positions, upto
from .anthropic import UNSET_IDENTITIES, opaque_tokens
from .breaking import NOT_JSON, FailureWire, StreamBreak
from .case import CaseWire, generated_case
from .framing import NAMED_EVENT_NOISE, framed_streams, with_noise
from .intent import (
    FailedAttempt,
    FinishMeanings,
    IntendedCall,
    IntendedResponse,
    IntendedUsage,
)
from .named_events import Events, Lane, insert_steps, lane_orders
from .response import WITHHELD, fragments, text_lanes, texts, tool_calls, usages
from .shape import CaseShape, named_by_content

DIALECT: DialectId = "openai-responses"

Data = dict[str, Any]  # an event's data or an output item, as JSON

RESPONSES_FINISHES: FinishMeanings = {
    "completed": "stop",
    "function_call": "tool-calls",
    "max_output_tokens": "max-tokens",
    "incomplete": "max-tokens",
}
"""How a response ends and the finish that means (DIALECTS.md, "Non-success ends"). The
wire has no tool-call reason: a ``completed`` response holding a ``function_call`` item
ends ``function_call``; an ``incomplete`` one ends with its ``incomplete_details.reason``,
``incomplete`` when it gives none. ``content_filter`` and a refusal part (``refusal``) are
failures, ``CONTENT_FILTER`` and ``REFUSAL``."""
COMPLETED = ("completed", "function_call", "refusal")  # the finishes of response.completed
TRUNCATING = ("max_output_tokens", "incomplete")  # may leave an item open

ERROR_CODES: tuple[tuple[str, str], ...] = (
    ("server_error", codes.SERVER),
    ("rate_limit_exceeded", codes.RATE_LIMIT),
    ("insufficient_quota", codes.QUOTA),
    ("context_length_exceeded", codes.CONTEXT_WINDOW_EXCEEDED),
)
"""``error.code`` values of ``error`` events and ``response.failed`` and the code each means
(RS-H1)."""

UNKNOWN_ITEM_TYPE = "x_future_item"
UNKNOWN_EVENTS: tuple[Step, ...] = (
    {"event": {"type": "response.x_future_event", "data": {}}},
    {"event": {"type": "x-vendor.heartbeat", "note": "not a Responses event"}},
)
KEEPALIVE: Step = {"event": {"type": "keepalive"}}
# What may follow the terminal event, never read (RS-G1): nothing, the [DONE] gateways add,
# a delta, a second terminal event that would erase the output.
AFTER_TERMINAL: tuple[tuple[Step, ...], ...] = (
    (),
    ({"done": True},),
    (
        {
            "event": {
                "type": "response.output_text.delta",
                "item_id": "msg_after",
                "output_index": 0,
                "content_index": 0,
                "delta": "after the terminal event",
            }
        },
    ),
    ({"event": {"type": "response.failed", "response": {"status": "failed", "output": []}}},),
)
# Ends of a body cut before its terminal event (RS-G5): nothing more, the [DONE] sentinel,
# half a data line.
CUT_ENDINGS: tuple[tuple[Step, ...], ...] = (
    (),
    ({"done": True},),
    ({"literal": 'data: {"type": "response.outp'},),
)
RESPONSES_BREAKS = ("unidentified", "cut", "not-json", "error-event", "unknown-index")

DONE_PAYLOADS = ("whole", "empty", "missing", "different")
"""What an item's ``.done`` events carry of its content: all of it, ``""`` (or no items),
nothing (the sub-``.done`` events left out, the field missing), or something else (RS-G4:
the deltas win, the difference recorded)."""
ITEM_IDS = ("same", "rotated", "missing")  # the item_id of routed events (RS-G3)
OUTPUTS = ("whole", "empty", "null", "missing")  # the terminal output snapshot (RS-C6)
SEQUENCE_ANOMALIES = ("repeated", "jump", "missing")  # RS-S2


@dataclass(frozen=True)
class Item:
    """One output item as the wire carries it: ``output_item.added``, the routed events
    that fill it, the routed ``.done`` events, ``output_item.done``; and the whole item."""

    added: Data
    body: tuple[Data, ...] = ()
    closing: tuple[Data, ...] = ()
    done: Data | None = None
    whole: Data | None = None
    call: int | None = None  # the position of M's call, for a function_call item
    # Its content and identity came with its added event and deltas: truncation may leave
    # it open, never done (a call identified or argued only in its .done events may not).
    openable: bool = True
    done_events: bool = True  # its closing events and output_item.done are sent

    @property
    def id(self) -> str:
        value = self.added.get("id")
        return value if isinstance(value, str) else ""

    @property
    def type(self) -> str:
        value = self.added.get("type")
        return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class IntendedOutput:
    """M, and the items (M's and the others) in the order the wire opens them."""

    response: IntendedResponse
    items: tuple[Item, ...]
    unidentified: bool = False

    @property
    def call_order(self) -> tuple[int, ...]:
        return tuple(item.call for item in self.items if item.call is not None)


def _payload(text: str, mode: str) -> str | None:
    """The content a ``.done`` event carries of ``text`` (None: the field is missing)."""
    if mode == "whole":
        return text
    if mode == "empty":
        return ""
    if mode == "missing":
        return None
    return text + " (done differs)"


@st.composite
def done_payloads(draw: st.DrawFn, content: str) -> str:
    """How an item's ``.done`` events carry ``content``; "different" only for content the
    deltas did send (with none, the ``.done`` payload is the content, RS-C3)."""
    chosen: str = draw(pick(DONE_PAYLOADS if content else DONE_PAYLOADS[:3]))
    return chosen


@st.composite
def reasoning_items(draw: st.DrawFn) -> tuple[Item | None, str, str | None]:
    """No reasoning, or a reasoning item with text (a summary, or raw reasoning text as
    open-weight servers send it) and maybe its ``encrypted_content`` (RS-C2)."""
    lane = draw(text_lanes())
    if not lane.text:
        return None, "", None
    summary = draw(pick((True, False)))
    mode = draw(done_payloads(lane.text))
    text = _payload(lane.text, mode)
    added: Data = {"type": "reasoning", "id": "rs_0", "summary": []}
    done: Data = {"type": "reasoning", "id": "rs_0"}
    if summary:
        part: Data = {"type": "summary_text", "text": ""}
        body = [{"type": "response.reasoning_summary_part.added", "summary_index": 0, "part": part}]
        body += [
            {"type": "response.reasoning_summary_text.delta", "summary_index": 0, "delta": piece}
            for piece in lane.fragments
        ]
        closing: list[Data] = []
        if text is not None:
            finished = {"type": "summary_text", "text": text}
            closing = [
                {"type": "response.reasoning_summary_text.done", "summary_index": 0, "text": text},
                {
                    "type": "response.reasoning_summary_part.done",
                    "summary_index": 0,
                    "part": finished,
                },
            ]
            done["summary"] = [] if mode == "empty" else [finished]
        whole = {**done, "summary": [{"type": "summary_text", "text": lane.text}]}
    else:
        body = [
            {"type": "response.reasoning_text.delta", "content_index": 0, "delta": piece}
            for piece in lane.fragments
        ]
        closing = []
        done["summary"] = []
        if text is not None:
            closing = [{"type": "response.reasoning_text.done", "content_index": 0, "text": text}]
            done["content"] = [{"type": "reasoning_text", "text": text}]
        whole = {**done, "content": [{"type": "reasoning_text", "text": lane.text}]}
    encrypted = draw(opaque_tokens()) if draw(BOOLEANS) else None
    if encrypted is not None:  # on the item's done event, as the API sends it
        done["encrypted_content"] = whole["encrypted_content"] = encrypted
    # The token comes with the done event alone: an item carrying one is never left open.
    item = Item(added, tuple(body), tuple(closing), done, whole, openable=encrypted is None)
    return item, lane.text, encrypted


@st.composite
def message_items(draw: st.DrawFn, position: int, refusal: bool = False) -> tuple[Item | None, str]:
    """A message item with one ``output_text`` part (maybe opened and closed empty: no
    content) or, with ``refusal``, one ``refusal`` part; and the text it carries."""
    if refusal:
        text = draw(texts())
        pieces = tuple(draw(fragments(text)))
        kind, key, events = "refusal", "refusal", "response.refusal"
    else:
        lane = draw(text_lanes())
        if not lane.text and not draw(BOOLEANS):
            return None, ""
        text, pieces = lane.text, lane.fragments
        kind, key, events = "output_text", "text", "response.output_text"
    mode = draw(done_payloads(text))
    payload = _payload(text, mode)
    item_id = f"msg_{position}"
    added: Data = {
        "type": "message",
        "id": item_id,
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    parts = draw(pick((True, False)))  # content_part events, or the deltas alone

    def part(value: str) -> Data:
        extra: Data = {} if refusal else {"annotations": []}
        return {"type": kind, key: value, **extra}

    body: list[Data] = []
    if parts:
        body.append({"type": "response.content_part.added", "content_index": 0, "part": part("")})
    body += [{"type": f"{events}.delta", "content_index": 0, "delta": piece} for piece in pieces]
    closing: list[Data] = []
    finished = {**added, "status": "completed"}
    if payload is not None:
        closing.append({"type": f"{events}.done", "content_index": 0, key: payload})
        if parts:
            closing.append(
                {"type": "response.content_part.done", "content_index": 0, "part": part(payload)}
            )
        finished["content"] = [] if mode == "empty" else [part(payload)]
    else:
        del finished["content"]
    whole = {**added, "status": "completed", "content": [part(text)]}
    return Item(added, tuple(body), tuple(closing), finished, whole), "" if refusal else text


IDENTITY_KEYS = ("call_id", "name")
# Where a call's identity is (RS-T1): on output_item.added and .done; on added alone (the
# name only in added, a done without it); filled in only by output_item.done.
IDENTITIES = ("both", "added", "done")


@st.composite
def call_items(
    draw: st.DrawFn, position: int, unidentified: bool
) -> tuple[Item, IntendedCall, bool]:
    """A ``function_call`` item and the call it means: the ``call_id`` is the call's id
    (RS-T2), the item ``id`` is ``fc_…`` beside it; the arguments as deltas or, when there
    are any, only in the ``.done`` events (RS-C3)."""
    item_id = f"fc_{position}"
    call = replace(draw(tool_calls()), item_id=item_id)
    deltas = not call.arguments or draw(BOOLEANS)
    pieces = draw(fragments(call.arguments)) if deltas else []
    mode = draw(done_payloads(call.arguments)) if deltas else "whole"
    payload = _payload(call.arguments, mode)
    identity: dict[str, Field] = {"call_id": call.id, "name": call.name}
    # The chat calls' withheld "id" is the call_id here.
    withheld = frozenset(
        "call_id" if key == "id" else key
        for key in (draw(pick(WITHHELD)) if unidentified else frozenset())
    )
    where = draw(pick(IDENTITIES)) if not withheld else "both"
    late = frozenset(k for k in IDENTITY_KEYS if draw(BOOLEANS)) or frozenset({"name"})
    added_identity, done_identity = dict(identity), dict(identity)
    for key in IDENTITY_KEYS:
        if key in withheld or (where == "done" and key in late):
            added_identity[key] = draw(pick(UNSET_IDENTITIES))
        if key in withheld:
            done_identity[key] = draw(pick(UNSET_IDENTITIES))
        elif where == "added" and key in late:
            done_identity[key] = ABSENT

    def item(fields: dict[str, Field], arguments: Field, status: str) -> Data:
        present = {k: v for k, v in fields.items() if v is not ABSENT}
        whole: dict[str, Any] = {"type": "function_call", "id": item_id, **present}
        if arguments is not ABSENT:
            whole["arguments"] = arguments
        return whole | {"status": status}

    added = item(added_identity, "", "in_progress")
    body = [{"type": "response.function_call_arguments.delta", "delta": p} for p in pieces]
    closing: list[Data] = []
    sent_done = payload is not None and (deltas or draw(BOOLEANS))
    if sent_done:
        closing.append({"type": "response.function_call_arguments.done", "arguments": payload})
    done = item(done_identity, ABSENT if payload is None else payload, "completed")
    whole = item(identity, call.arguments, "completed")
    openable = deltas and where != "done"
    block = Item(added, tuple(body), tuple(closing), done, whole, call=position, openable=openable)
    return block, call, bool(withheld)


def other_items(position: int) -> Item:
    """An output item of a type no client knows, skipped without shifting the indexes
    after it (RS-G6)."""
    added: Data = {"type": UNKNOWN_ITEM_TYPE, "id": f"xf_{position}"}
    delta: Data = {"type": "response.x_future_item.delta", "delta": "?"}
    done = {**added, "status": "completed"}
    return Item({**added, "status": "in_progress"}, (delta,), (), done, done)


RESPONSE_USAGES: st.SearchStrategy[IntendedUsage] = usages()
"""Usage as the Responses wire counts it: cached tokens within the input, reasoning tokens
within the output (RS-C4)."""


@st.composite
def endings(draw: st.DrawFn, calls: int) -> str:
    """How the response ends: completed (``function_call`` with calls), incomplete and why,
    or a refusal."""
    plain = "function_call" if calls else "completed"
    finish: str = draw(
        pick((plain, "max_output_tokens", "incomplete", "content_filter", "refusal"))
    )
    return finish


@st.composite
def intended_outputs(
    draw: st.DrawFn, *, min_calls: int = 0, max_calls: int = 4, unidentified: bool = False
) -> IntendedOutput:
    """M and its items; the empty response (E1) is the simplest one."""
    reasoning_item, reasoning, encrypted = draw(reasoning_items())
    message_item, text = draw(message_items(1))
    count = draw(st.integers(min_calls, max_calls))
    drawn = [draw(call_items(position, unidentified)) for position in range(count)]
    unique: dict[str, tuple[Item, IntendedCall, bool]] = {}
    for item, call, withheld in drawn:  # one call_id per call
        unique.setdefault(call.id, (replace(item, call=len(unique)), call, withheld))
    calls = list(unique.values())
    items = [i for i in (reasoning_item, message_item) if i is not None]
    items += [item for item, _, _ in calls]
    finish = draw(endings(len(calls)))
    if finish == "refusal":
        refused, _ = draw(message_items(2, refusal=True))
        assert refused is not None  # a refusal part is always sent
        items.append(refused)
    response = IntendedResponse(
        reasoning=reasoning,
        text=text,
        calls=tuple(call for _, call, _ in calls),
        usage=draw(RESPONSE_USAGES) if draw(BOOLEANS) else None,
        finish=finish,
        encrypted_content=encrypted,
    )
    if not response.empty and draw(BOOLEANS):  # beside content, so that it never decides E1
        items.append(other_items(3))
    if len(items) > 1 and draw(BOOLEANS):
        items = list(draw(st.permutations(items)))
    last = items[-1] if items else None
    if finish in TRUNCATING and last is not None and last.openable and draw(BOOLEANS):
        items[-1] = replace(last, done_events=False)  # cut by max_output_tokens while open
    return IntendedOutput(response, tuple(items), any(w for _, _, w in calls))


# --- the events ---------------------------------------------------------------------------


def usage_object(usage: IntendedUsage | None) -> JsonValue:
    """The wire's usage: cached tokens counted within the input, reasoning tokens within
    the output."""
    if usage is None:
        return None
    counts: Data = {"input_tokens": usage.prompt_tokens}
    if usage.cached_tokens is not None:
        counts["input_tokens_details"] = {"cached_tokens": usage.cached_tokens}
    counts["output_tokens"] = usage.completion_tokens
    if usage.reasoning_tokens is not None:
        counts["output_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    counts["total_tokens"] = usage.prompt_tokens + usage.completion_tokens
    return counts


def lifecycle(kind: str, status: str, **fields: Field) -> Data:
    """``response.<kind>`` with its response object."""
    response: Data = {
        "id": "resp_fake",
        "object": "response",
        "model": "fake-model",
        "status": status,
        "output": [],
        "usage": None,
    }
    for key, value in fields.items():
        if value is ABSENT:
            response.pop(key, None)
        else:
            response[key] = value
    return {"type": f"response.{kind}", "response": response}


def terminal_event(finish: str, output: Field, usage: IntendedUsage | None) -> Data:
    counts = usage_object(usage)
    if finish in COMPLETED:
        return lifecycle("completed", "completed", output=output, usage=counts)
    details: JsonValue = None if finish == "incomplete" else {"reason": finish}
    return lifecycle(
        "incomplete", "incomplete", incomplete_details=details, output=output, usage=counts
    )


class _ItemIds:
    """The ``item_id`` routed events carry (RS-G3): the item's id, a fresh one on every
    event, or none."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.counter = itertools.count()

    def routed(self, event: Data, item: Item, index: int) -> Data:
        kind, rest = event["type"], {k: v for k, v in event.items() if k != "type"}
        routing: Data = {}
        if self.mode == "same":
            routing["item_id"] = item.id
        elif self.mode == "rotated":
            routing["item_id"] = f"rot_{next(self.counter)}"
        return {"type": kind, **routing, "output_index": index, **rest}


def _item_events(index: int, item: Item, ids: _ItemIds) -> Lane:
    lane: Lane = [
        (
            {"type": "response.output_item.added", "output_index": index, "item": item.added},
            ("added", index),
        )
    ]
    lane += [(ids.routed(event, item, index), ("delta", index)) for event in item.body]
    if item.done_events:
        lane += [(ids.routed(event, item, index), ("closing", index)) for event in item.closing]
        done: Data = {"type": "response.output_item.done", "output_index": index, "item": item.done}
        lane.append((done, ("done", index)))
    return lane


def _output(items: tuple[Item, ...], mode: str) -> Field:
    if mode == "whole":
        return [item.whole for item in items]
    return {"empty": [], "null": None}.get(mode, ABSENT)


@st.composite
def encoded_events(draw: st.DrawFn, intended: IntendedOutput) -> Events:
    """M's events, up to its terminal event, in a meaning-preserving order and form."""
    response = intended.response
    assert response.finish is not None
    events = Events()
    events.add(lifecycle("created", "in_progress"), ("created", -1))
    if draw(BOOLEANS):
        events.add(lifecycle("in_progress", "in_progress"), ("lifecycle", -1))
    ids = _ItemIds(draw(pick(ITEM_IDS)))
    lanes = [_item_events(index, item, ids) for index, item in enumerate(intended.items)]
    for data, mark in draw(lane_orders(lanes)):
        events.add(data, mark)
    output = _output(intended.items, draw(pick(OUTPUTS)))
    events.add(terminal_event(response.finish, output, response.usage), ("end", 0))
    return events


@st.composite
def with_unread_events(draw: st.DrawFn, events: Events) -> None:
    """Unknown events after ``response.created`` and keepalives anywhere (RS-G6, RS-S1)."""
    end = events.content_end
    for position in sorted(draw(positions(end - 1, 1)), reverse=True):
        insert_steps(events, position + 1, (picked(draw, UNKNOWN_EVENTS),), ("noise", -1))
    for position in sorted(draw(positions(len(events.steps) - 1, 2)), reverse=True):
        insert_steps(events, position, (KEEPALIVE,), ("noise", -1))


@st.composite
def with_sequence_anomalies(draw: st.DrawFn, steps: list[Step]) -> None:
    """Up to two events whose ``sequence_number`` repeats the first's, jumps ahead or is
    missing (RS-S2: recorded, never fatal)."""
    numbered = [i for i, step in enumerate(steps) if "event" in step]
    if not numbered:
        return
    for chosen in draw(positions(len(numbered) - 1, 2)):
        position = numbered[chosen]
        step, anomaly = steps[position], draw(pick(SEQUENCE_ANOMALIES))
        if anomaly == "missing":
            steps[position] = {**step, "numbered": False}
            continue
        data = {k: v for k, v in step["event"].items() if k != responses.SEQUENCE_FIELD}
        number = 0 if anomaly == "repeated" else chosen + 10
        kind = {"type": data.pop("type")} if "type" in data else {}
        event = {**kind, responses.SEQUENCE_FIELD: number, **data}
        steps[position] = {**step, "event": event}


# --- breaks -------------------------------------------------------------------------------


def error_events(code: str, nested: bool) -> Data:
    """An ``error`` event as the live API sends it (nested) or as documented (flat)."""
    message = f"fake {code}"
    if nested:
        error = {"type": code, "code": code, "message": message, "param": None}
        return {"type": "error", "error": error}
    return {"type": "error", "code": code, "message": message, "param": None}


def failed_event(code: str) -> Data:
    return lifecycle("failed", "failed", error={"code": code, "message": f"fake {code}"})


# How a failure is sent (RS-H1): an error event alone, then response.failed, or failed alone.
FAILURE_FORMS = ("error", "error-then-failed", "failed")


@st.composite
def responses_breaks(
    draw: st.DrawFn, kind: str | None, intended: IntendedOutput, events: Events
) -> StreamBreak:
    """Break the events as ``kind`` says (in place), with the outcome that stands for;
    ``unidentified`` is drawn with the calls (:func:`call_items`)."""
    after_start, end = events.first(("created", -1)) + 1, events.content_end
    if kind == "cut":
        # Counted from the end, so that the cut stays put while the shrinker drops events.
        kept = len(events.steps) - 1 - draw(upto(len(events.steps) - 1))
        del events.steps[kept:], events.marks[kept:]
        return StreamBreak(codes.STREAM_CLOSED, ending=picked(draw, CUT_ENDINGS))
    if kind == "not-json":
        payload = draw(pick(NOT_JSON))
        steps = ({"field": "event", "value": "response.output_text.delta"}, {"raw": payload})
        insert_steps(events, draw(st.integers(after_start, end)), steps, ("break", -1))
        return StreamBreak(codes.MALFORMED_RESPONSE, ending=())
    if kind == "error-event":
        error_code, code = picked(draw, ERROR_CODES)
        form = draw(pick(FAILURE_FORMS))
        position = draw(st.integers(after_start, end))
        del events.steps[position:], events.marks[position:]
        failure: list[Step] = []
        if form != "failed":
            failure.append({"event": error_events(error_code, nested=draw(pick((True, False))))})
        if form != "error":
            failure.append({"event": failed_event(error_code)})
        insert_steps(events, position, tuple(failure), ("break", -1))
        return StreamBreak(code, ending=())
    if kind == "unknown-index":
        # An item already done (not one of a type the reading skips, deltas and all).
        done = [
            i
            for i, item in enumerate(intended.items)
            if item.done_events and item.type != UNKNOWN_ITEM_TYPE
        ]
        if draw(BOOLEANS) and done:
            index = picked(draw, tuple(done))
            least = events.first(("done", index)) + 1
        else:  # an index never opened
            index, least = len(intended.items) + draw(upto(2)), after_start
        delta = {
            "type": "response.output_text.delta",
            "item_id": "msg_nowhere",
            "output_index": index,
            "content_index": 0,
            "delta": "routed nowhere",
        }
        insert_steps(events, draw(st.integers(least, end)), ({"event": delta},), ("break", -1))
        return StreamBreak(codes.MALFORMED_RESPONSE, ending=())
    return StreamBreak(ending=picked(draw, AFTER_TERMINAL))


# --- attempts before the last -------------------------------------------------------------


@st.composite
def refused_responses(draw: st.DrawFn) -> tuple[dict[str, Any], FailedAttempt]:
    """A completed response to refuse, its usage billed: nothing in it (E1), or a function
    call without a ``call_id`` (RS-T2)."""
    usage = draw(RESPONSE_USAGES)
    events = Events()
    events.add(lifecycle("created", "in_progress"), ("created", -1))
    if draw(BOOLEANS):
        fields = {"type": "function_call", "id": "fc_0", "name": "get_weather", "arguments": ""}
        argued = {"type": "response.function_call_arguments.delta", "delta": "{}"}
        done = {**fields, "arguments": "{}", "status": "completed"}
        item = Item({**fields, "status": "in_progress"}, (argued,), (), done)
        for data, mark in _item_events(0, item, _ItemIds("same")):
            events.add(data, mark)
        code = codes.MALFORMED_TOOL_CALL
    else:
        code = codes.EMPTY_RESPONSE
    events.add(terminal_event("completed", [], usage), ("end", 0))
    return {"stream": {"steps": events.steps}}, FailedAttempt(code, usage=usage)


RESPONSES_FAILURES = FailureWire(responses.error_object, refused_responses)
RESPONSES_CASES = CaseWire(
    DIALECT,
    "Generated OpenAI Responses case",
    ("responses",),
    RESPONSES_FAILURES,
    RESPONSES_FINISHES,
)


# --- the case -----------------------------------------------------------------------------

RESPONSES_FAMILY_SHAPES: dict[str, CaseShape] = {
    "G": CaseShape(breaks=RESPONSES_BREAKS, failures_before=(0, 2)),
    "C": CaseShape(),
    "T": CaseShape(min_calls=1, breaks=("unidentified", "unknown-index")),
    "E": CaseShape(max_calls=2),
    "S": CaseShape(breaks=("cut", "not-json", "error-event")),
    "H": CaseShape(breaks=("error-event",), failures_before=(1, 2), slow=True),
    "R": CaseShape(breaks=("unidentified",), failures_before=(1, 2), slow=True, retry_policy=True),
}
"""The families as chat has them (routing in T; the wire's error events in H, as RS-H1
judges them), but for Q: the quirk transforms re-encode chat chunks."""


@st.composite
def responses_cases(draw: st.DrawFn, family: str, shape: CaseShape) -> Scenario:
    """One generated OpenAI Responses case for ``family``, ``expect`` written from M."""
    kind = draw(pick((None, *shape.breaks)))
    intended = draw(
        intended_outputs(
            min_calls=shape.min_calls,
            max_calls=shape.max_calls,
            unidentified=kind == "unidentified",
        )
    )
    events = draw(encoded_events(intended))
    draw(with_unread_events(events))
    # M's stream before its terminal event, for the attempts before the last to break.
    unended = [dict(step) for step in events.steps[: events.content_end]]
    broken = draw(responses_breaks(kind, intended, events))
    steps = events.steps
    draw(with_sequence_anomalies(steps))
    draw(with_noise(steps, NAMED_EVENT_NOISE))
    steps += [dict(step) for step in broken.ending]
    last = draw(framed_streams(steps))
    scenario = draw(
        generated_case(
            family,
            shape,
            RESPONSES_CASES,
            response=intended.response,
            call_order=intended.call_order,
            unidentified=intended.unidentified,
            unended=unended,
            last=last,
            code=broken.code,
        )
    )
    return named_by_content(scenario, f"rs-{family}")
