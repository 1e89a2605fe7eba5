"""The Anthropic Messages lint (sans-IO): a body's named events against the wire grammar.

The grammar is the one the real API keeps (reference dialects.md §2.2): ``message_start``,
then blocks each started, given deltas that fit it and stopped, then ``message_delta`` and
one ``message_stop``; ``ping`` anywhere, an ``error`` event instead of the rest. The event is
identified by its data's ``type`` (the name is checked against it, AN-W8); unknown event and
block types are skipped, as clients must skip them. Each finding names the event by its
number in the body and its type, at the line and byte where it begins.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fakeprovider.dialects.anthropic import DELTA_BLOCK_TYPES
from fakeprovider.recording import ClientEnding

from .findings import Finding, LintResult, shown, without_object
from .rules import (
    AFTER_STOP,
    BLOCK_NOT_OPEN,
    DELTA_MISFIT,
    EMPTY_DATA,
    EVENT_NAME,
    FIRST_EVENT,
    INDEX_REUSED,
    LEFT_OPEN,
    ONE_END,
    TOOL_ID_REPEATED,
    TOOL_IDENTITY,
    TOOL_INPUT_JSON,
    USAGE_DECREASES,
    LintRule,
)
from .scan import Event, Position, Scan, json_object

KNOWN_BLOCKS = frozenset().union(*DELTA_BLOCK_TYPES.values())
"""Block types whose deltas AN-W3 judges; a delta or block type unknown to the table is a
newer one, skipped rather than judged."""
TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use"})
CLOSING_STOP_REASONS = frozenset({"end_turn", "tool_use", "stop_sequence"})
"""Stop reasons after which no block may be left open (AN-W7): only max_tokens cuts one."""
USAGE_COUNTERS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
TOLERATED_AFTER_STOP = frozenset({"done", "[DONE]", "ping"})
"""`event: done` and `data: [DONE]` (F1), and a ping, which may come anywhere."""


def speaks_messages(scanned: Scan) -> bool:
    """Whether a body is Anthropic Messages: its first event is named, or its data's type is
    ``message_start`` (a data-only stream that opens as the API's does)."""
    first = next(iter(scanned.in_order()), None)
    if first is None:
        return False
    if first[0].name is not None:
        return True
    document = json_object(first[0].data)
    return document is not None and document.get("type") == "message_start"


_EVERY_STREAM = (
    BLOCK_NOT_OPEN,
    INDEX_REUSED,
    DELTA_MISFIT,
    ONE_END,
    AFTER_STOP,
    FIRST_EVENT,
    EVENT_NAME,
    EMPTY_DATA,
)
"""The rules any stream of this dialect exercises; the others need tools, usage or a stop."""


@dataclass
class _Block:
    type: object  # content_block.type as sent
    number: int  # the start event's number, for messages
    open: bool = True
    partial_json: list[str] = field(default_factory=list)


@dataclass
class MessagesLinter:
    """Reads a scanned body once; :meth:`result` says what it found."""

    scanned: Scan
    findings: list[Finding] = field(default_factory=list)
    exercised: set[str] = field(default_factory=set)
    blocks: dict[str, _Block] = field(default_factory=dict)  # shown(index) -> its block
    tool_ids: dict[str, int] = field(default_factory=dict)  # id -> the start event's number
    usage: dict[str, tuple[int, int]] = field(default_factory=dict)  # counter -> (value, event)
    opened: bool = False  # an event other than ping has come
    ends: list[tuple[str, int]] = field(default_factory=list)  # (type, event number)
    after_stop: list[Position] = field(default_factory=list)  # events after message_stop
    errored: bool = False

    def read(self) -> None:
        self.exercised |= {rule.id for rule in _EVERY_STREAM}
        for number, (event, has_data) in enumerate(self.scanned.in_order(), 1):
            self._event(number, event, has_data)

    def flag(self, rule: LintRule, event: Event, message: str) -> None:
        self.findings.append(Finding(rule.id, event.at, message))

    # --- one event ------------------------------------------------------------------------
    def _event(self, number: int, event: Event, has_data: bool) -> None:
        if self.ends and self.ends[-1][0] == "message_stop":
            data = json_object(event.data) or {}
            said = {event.name, event.data, data.get("type")}
            if said.isdisjoint(TOLERATED_AFTER_STOP):
                self.after_stop.append(event.at)
            return  # a client stops reading at message_stop
        document = json_object(event.data)
        if document is None:
            self._no_object(number, event, has_data)
            return
        typed = document.get("type")
        label = f"event {number} ({shown(typed)})"
        if event.name is None:
            self.flag(EVENT_NAME, event, f"{label} has no event: line")
        elif event.name != typed:
            self.flag(EVENT_NAME, event, f"{label} is named {shown(event.name)}")
        # Read by its type; by its name where the data has none (a nonstandard error body).
        kind = typed if isinstance(typed, str) else event.name
        if kind == "ping":
            return
        # An error may come instead of the whole message, before message_start too.
        if not self.opened and kind not in ("message_start", "error"):
            self.flag(FIRST_EVENT, event, f"{label} comes before message_start")
        self.opened = True
        match kind:
            case "message_start":
                message = document.get("message")
                if isinstance(message, dict):
                    # Its output_tokens is preliminary (the SDK's recorded refusal sends 1,
                    # then 0 in message_delta): only the later counts are cumulative.
                    usage = message.get("usage")
                    if isinstance(usage, dict):
                        usage = {k: v for k, v in usage.items() if k != "output_tokens"}
                    self._usage(usage, number, event, label)
            case "content_block_start":
                self._block_start(document, number, event, label)
            case "content_block_delta":
                self._block_delta(document, event, label)
            case "content_block_stop":
                self._block_stop(document, event, label)
            case "message_delta":
                self._message_delta(document, number, event, label)
            case "message_stop" | "error":
                self._end(kind, number, event, label)

    def _no_object(self, number: int, event: Event, has_data: bool) -> None:
        """An event whose data is no JSON object: only a ping may carry that."""
        if event.name == "ping":
            return
        label = f"event {number} ({shown(event.name)})" if event.name else f"event {number}"
        self.flag(EMPTY_DATA, event, without_object(label, event, has_data))

    def _block_start(self, document: dict[str, Any], number: int, event: Event, label: str) -> None:
        key = shown(document.get("index"))
        block = document.get("content_block")
        block = block if isinstance(block, dict) else {}
        earlier = self.blocks.get(key)
        if earlier is not None:
            state = "open" if earlier.open else "stopped"
            self.flag(
                INDEX_REUSED,
                event,
                f"{label} starts index {key} again (event {earlier.number} started it; {state})",
            )
        # The reuse is flagged: the new block is read on, so its own deltas are judged.
        self.blocks[key] = _Block(block.get("type"), number)
        if block.get("type") in TOOL_BLOCKS:
            self._tool_start(block, number, event, label)

    def _tool_start(self, block: dict[str, Any], number: int, event: Event, label: str) -> None:
        self.exercised |= {TOOL_IDENTITY.id, TOOL_ID_REPEATED.id, TOOL_INPUT_JSON.id}
        tool_id, name = block.get("id"), block.get("name")
        if block.get("type") == "tool_use":
            missing = [
                f"{field} {shown(value) if field in block else 'absent'}"
                for field, value in (("id", tool_id), ("name", name))
                if not (isinstance(value, str) and value)
            ]
            if missing:
                self.flag(TOOL_IDENTITY, event, f"{label} tool_use with {', '.join(missing)}")
        if isinstance(tool_id, str) and tool_id:
            first = self.tool_ids.setdefault(tool_id, number)
            if first != number:
                message = f"{label} reuses tool id {shown(tool_id)} of event {first}"
                self.flag(TOOL_ID_REPEATED, event, message)

    def _open_block(self, document: dict[str, Any], event: Event, label: str) -> _Block | None:
        key = shown(document.get("index"))
        block = self.blocks.get(key)
        if block is None:
            self.flag(BLOCK_NOT_OPEN, event, f"{label} for index {key}, never started")
        elif not block.open:
            self.flag(BLOCK_NOT_OPEN, event, f"{label} for index {key}, already stopped")
        return block if block is not None and block.open else None

    def _block_delta(self, document: dict[str, Any], event: Event, label: str) -> None:
        block = self._open_block(document, event, label)
        delta = document.get("delta")
        if block is None or not isinstance(delta, dict):
            return
        kind = delta.get("type")
        fits = DELTA_BLOCK_TYPES.get(kind) if isinstance(kind, str) else None
        if fits is not None and block.type in KNOWN_BLOCKS and block.type not in fits:
            message = f"{label} {shown(kind)} into the {shown(block.type)} block of event "
            self.flag(DELTA_MISFIT, event, message + str(block.number))
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            block.partial_json.append(delta["partial_json"])

    def _block_stop(self, document: dict[str, Any], event: Event, label: str) -> None:
        block = self._open_block(document, event, label)
        if block is None:
            return
        block.open = False
        arguments = "".join(block.partial_json)
        if block.type in TOOL_BLOCKS and arguments.strip() and not _is_json(arguments):
            message = f"{label} stops the {shown(block.type)} block of event {block.number}"
            self.flag(TOOL_INPUT_JSON, event, f"{message}: its partial_json is not JSON")

    def _message_delta(
        self, document: dict[str, Any], number: int, event: Event, label: str
    ) -> None:
        self._usage(document.get("usage"), number, event, label)
        delta = document.get("delta")
        reason = delta.get("stop_reason") if isinstance(delta, dict) else None
        if not isinstance(reason, str) or reason not in CLOSING_STOP_REASONS:
            return
        self.exercised.add(LEFT_OPEN.id)
        still_open = [key for key, block in self.blocks.items() if block.open]
        if still_open:
            message = f"{label} stop_reason {shown(reason)} with index {', '.join(still_open)} open"
            self.flag(LEFT_OPEN, event, message)

    def _usage(self, usage: object, number: int, event: Event, label: str) -> None:
        if not isinstance(usage, dict):
            return
        self.exercised.add(USAGE_DECREASES.id)
        for counter in USAGE_COUNTERS:
            value = usage.get(counter)
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            earlier = self.usage.get(counter)
            if earlier is not None and value < earlier[0]:
                message = f"{label} {counter} {value}, down from {earlier[0]} at event {earlier[1]}"
                self.flag(USAGE_DECREASES, event, message)
            if earlier is None or value >= earlier[0]:
                self.usage[counter] = (value, number)

    def _end(self, kind: str, number: int, event: Event, label: str) -> None:
        if kind == "error":
            self.errored = True
        if self.ends:
            first_kind, first = self.ends[0]
            self.flag(
                ONE_END, event, f"{label} is a second end, after the {first_kind} of event {first}"
            )
        self.ends.append((kind, number))

    # --- the whole body -------------------------------------------------------------------
    def result(self, ending: ClientEnding) -> LintResult:
        if self.after_stop:
            count = len(self.after_stop)
            message = f"{count} event(s) after message_stop, the first here"
            self.findings.append(Finding(AFTER_STOP.id, self.after_stop[0], message))
        clean_end = ending == "complete"
        if clean_end and not self.ends:
            message = "the body ended cleanly before message_stop (and without an error event)"
            self.findings.append(Finding(ONE_END.id, self.scanned.end, message))
        stopped = any(kind == "message_stop" for kind, _ in self.ends)
        failed = self.errored or not clean_end or not stopped
        ordered = sorted(self.findings, key=lambda finding: finding.position.offset)
        return LintResult(tuple(ordered), frozenset(self.exercised), failed)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True
