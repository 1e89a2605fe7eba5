"""The OpenAI Responses lint (sans-IO): a body's named events against the wire grammar.

The grammar is the one the real API keeps (reference dialects.md §3.1-§3.4):
``response.created`` first, then output items each opened by ``output_item.added`` at the
next ``output_index``, given the events that fit it (routed by that index, with the item's
id as ``item_id``) and closed by ``output_item.done``, then one terminal event whose
``response.output`` lists every item; every event numbered by an increasing
``sequence_number``; ``keepalive`` anywhere, no ``[DONE]``. The event is identified by its
data's ``type`` (the name is checked against it, RS-W4); unknown event and item types are
skipped as clients must skip them, though an unknown event that names an ``output_index``
is still routed. Each finding names the event by its number in the body and its type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fakeprovider.dialects.responses import ITEM_EVENT_TYPES, SEQUENCE_FIELD, TERMINAL_EVENTS
from fakeprovider.recording import ClientEnding

from .findings import Finding, LintResult, shown, without_object
from .rules import (
    RS_AFTER_TERMINAL,
    RS_DELTA_MISFIT,
    RS_DONE,
    RS_EMPTY_DATA,
    RS_EMPTY_SNAPSHOT,
    RS_ERROR_SHAPE,
    RS_EVENT_NAME,
    RS_FIRST_EVENT,
    RS_INDEX_ORDER,
    RS_ITEM_ID,
    RS_ITEM_NOT_OPEN,
    RS_NO_TERMINAL,
    RS_SEQUENCE,
    LintRule,
)
from .scan import Event, Position, Scan, json_object

DONE = "[DONE]"
KNOWN_ITEMS = frozenset().union(*ITEM_EVENT_TYPES.values())
"""Item types whose events RS-W9 judges; another item type is a newer one, not judged."""
ITEM_ADDED, ITEM_DONE = "response.output_item.added", "response.output_item.done"
SNAPSHOT_TERMINALS = frozenset({"response.completed", "response.incomplete"})
"""Terminal events whose ``response.output`` is the caller's answer (RS-W11)."""
PREFIX = "response."


def speaks_responses(scanned: Scan) -> bool:
    """Whether a body is OpenAI Responses: an event's type or name is ``response.…``."""
    for event in scanned.events:
        kind = (json_object(event.data) or {}).get("type")
        for said in (kind, event.name):
            if isinstance(said, str) and said.startswith(PREFIX):
                return True
    return False


_EVERY_STREAM = (
    RS_FIRST_EVENT,
    RS_NO_TERMINAL,
    RS_AFTER_TERMINAL,
    RS_EVENT_NAME,
    RS_SEQUENCE,
    RS_ITEM_NOT_OPEN,
    RS_INDEX_ORDER,
    RS_DELTA_MISFIT,
    RS_DONE,
    RS_EMPTY_DATA,
)
"""The rules any stream of this dialect exercises; the others need item ids, an error or a
terminal snapshot after streamed items."""


@dataclass
class _Item:
    type: object  # item.type as sent
    id: object  # item.id as sent
    number: int  # the output_item.added event's number, for messages
    open: bool = True


@dataclass
class ResponsesLinter:
    """Reads a scanned body once; :meth:`result` says what it found."""

    scanned: Scan
    findings: list[Finding] = field(default_factory=list)
    exercised: set[str] = field(default_factory=set)
    items: dict[str, _Item] = field(default_factory=dict)  # shown(output_index) -> its item
    sequence: tuple[int, int] | None = None  # the last (sequence_number, event number)
    opened: bool = False  # an event other than keepalive has come
    terminal: tuple[str, int] | None = None  # (type, event number) of the terminal event
    after_terminal: list[Position] = field(default_factory=list)
    errored: bool = False  # an error event, or response.failed

    def read(self) -> None:
        self.exercised |= {rule.id for rule in _EVERY_STREAM}
        for number, (event, has_data) in enumerate(self.scanned.in_order(), 1):
            self._event(number, event, has_data)

    def flag(self, rule: LintRule, event: Event, message: str) -> None:
        self.findings.append(Finding(rule.id, event.at, message))

    # --- one event ------------------------------------------------------------------------
    def _event(self, number: int, event: Event, has_data: bool) -> None:
        if event.data == DONE and has_data:
            where = "after the terminal event" if self.terminal else "before any terminal event"
            self.flag(RS_DONE, event, f"event {number} is data: [DONE], a gateway's ({where})")
            return
        document = json_object(event.data)
        kind = document.get("type") if document is not None else None
        if self.terminal is not None:
            if kind != "keepalive" and event.name != "keepalive":
                self.after_terminal.append(event.at)
            return  # a client stops reading at the terminal event
        if document is None:
            label = f"event {number} ({shown(event.name)})" if event.name else f"event {number}"
            self.flag(RS_EMPTY_DATA, event, without_object(label, event, has_data))
            return
        label = f"event {number} ({shown(kind)})"
        if event.name is None:
            self.flag(RS_EVENT_NAME, event, f"{label} has no event: line")
        elif event.name != kind:
            self.flag(RS_EVENT_NAME, event, f"{label} is named {shown(event.name)}")
        self._sequence(document, number, event, label)
        # Read by its type; by its name where the data has none, and as an error where it
        # has neither but an error object (an HTTP error body sent as an event).
        kind = kind if isinstance(kind, str) else event.name
        if kind is None and isinstance(document.get("error"), dict):
            kind = "error"
        if kind == "keepalive":
            return
        if not self.opened and kind not in ("response.created", "error"):
            self.flag(RS_FIRST_EVENT, event, f"{label} comes before response.created")
        self.opened = True
        if kind == ITEM_ADDED:
            self._item_added(document, number, event, label)
        elif kind == "error":
            self._error(document, event, label)
        elif kind in TERMINAL_EVENTS:
            self._terminal(kind, document, number, event, label)
        elif kind in ITEM_EVENT_TYPES or kind == ITEM_DONE or "output_index" in document:
            self._item_event(kind, document, event, label)

    def _sequence(self, document: dict[str, Any], number: int, event: Event, label: str) -> None:
        if SEQUENCE_FIELD not in document:
            self.flag(RS_SEQUENCE, event, f"{label} has no sequence_number")
            return
        value = document[SEQUENCE_FIELD]
        if not isinstance(value, int) or isinstance(value, bool):
            self.flag(RS_SEQUENCE, event, f"{label} sequence_number {shown(value)} is no integer")
            return
        if self.sequence is not None and value <= self.sequence[0]:
            earlier, at = self.sequence
            message = f"{label} sequence_number {value}, not above {earlier} of event {at}"
            self.flag(RS_SEQUENCE, event, message)
        self.sequence = (value, number)

    def _item_added(self, document: dict[str, Any], number: int, event: Event, label: str) -> None:
        index = document.get("output_index")
        key, expected = shown(index), len(self.items)
        earlier = self.items.get(key)
        if earlier is not None:
            state = "open" if earlier.open else "done"
            message = f"{label} opens output_index {key} again (event {earlier.number}; {state})"
            self.flag(RS_INDEX_ORDER, event, message)
        elif index != expected or isinstance(index, bool):
            message = f"{label} opens output_index {key}; expected {expected}"
            self.flag(RS_INDEX_ORDER, event, message)
        item = document.get("item")
        item = item if isinstance(item, dict) else {}
        self.items[key] = _Item(item.get("type"), item.get("id"), number)

    def _item_event(
        self, kind: str | None, document: dict[str, Any], event: Event, label: str
    ) -> None:
        key = shown(document.get("output_index"))
        item = self.items.get(key)
        if "output_index" not in document:
            self.flag(RS_ITEM_NOT_OPEN, event, f"{label} names no output_index")
            return
        if item is None:
            self.flag(RS_ITEM_NOT_OPEN, event, f"{label} for output_index {key}, never opened")
            return
        if not item.open:
            self.flag(RS_ITEM_NOT_OPEN, event, f"{label} for output_index {key}, already done")
            return
        if kind == ITEM_DONE:
            item.open = False
        elif "item_id" in document:
            self.exercised.add(RS_ITEM_ID.id)
            if document["item_id"] != item.id:
                message = (
                    f"{label} item_id {shown(document['item_id'])}, not the id "
                    f"{shown(item.id)} of the item event {item.number} opened"
                )
                self.flag(RS_ITEM_ID, event, message)
        fits = ITEM_EVENT_TYPES.get(kind) if kind is not None else None
        if fits is not None and item.type in KNOWN_ITEMS and item.type not in fits:
            message = f"{label} into the {shown(item.type)} item of event {item.number}"
            self.flag(RS_DELTA_MISFIT, event, message)

    def _error(self, document: dict[str, Any], event: Event, label: str) -> None:
        self.errored = True
        self.exercised.add(RS_ERROR_SHAPE.id)
        nested = document.get("error")
        if isinstance(nested, dict) and ("code" in nested or "message" in nested):
            return
        if "code" in document or "message" in document:
            shape = "flat, as documented: openai-python yields it without raising"
        else:
            shape = "neither nested nor flat: no code or message"
        self.flag(RS_ERROR_SHAPE, event, f"{label} is {shape}")

    def _terminal(
        self, kind: str, document: dict[str, Any], number: int, event: Event, label: str
    ) -> None:
        self.terminal = (kind, number)
        if kind == "response.failed":
            self.errored = True
        if kind not in SNAPSHOT_TERMINALS or not self.items:
            return
        self.exercised.add(RS_EMPTY_SNAPSHOT.id)
        response = document.get("response")
        response = response if isinstance(response, dict) else {}
        streamed = len(self.items)
        if "output" not in response:
            said = "has no response.output"
        elif not isinstance(output := response["output"], list) or not output:
            said = f"has response.output {shown(output)}"
        elif len(output) < streamed:
            said = f"lists {len(output)} item(s) in response.output"
        else:
            return
        self.flag(RS_EMPTY_SNAPSHOT, event, f"{label} {said}, though {streamed} were streamed")

    # --- the whole body -------------------------------------------------------------------
    def result(self, ending: ClientEnding) -> LintResult:
        if self.after_terminal:
            assert self.terminal is not None
            kind, number = self.terminal
            count = len(self.after_terminal)
            message = f"{count} event(s) after the {kind} of event {number}, the first here"
            self.findings.append(Finding(RS_AFTER_TERMINAL.id, self.after_terminal[0], message))
        clean_end = ending == "complete"
        if clean_end and self.terminal is None and not self.errored:
            message = "the body ended cleanly before a terminal event (and without an error)"
            self.findings.append(Finding(RS_NO_TERMINAL.id, self.scanned.end, message))
        failed = self.errored or not clean_end or self.terminal is None
        ordered = sorted(self.findings, key=lambda finding: finding.position.offset)
        return LintResult(tuple(ordered), frozenset(self.exercised), failed)
