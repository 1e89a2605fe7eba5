"""The lint core (sans-IO): a response body in, wire-hazard findings with positions out.

Chat-completions is linted here; an Anthropic Messages body by ``messages.py``, an OpenAI
Responses one by ``responses.py``.

Shared by ``conformance lint`` (a captured body or a fixture) and gateway mode (the body a
gateway re-emitted, beside the upstream's). Besides the findings it says which rules the
stream *exercised* (tool-call rules only mean something when there are tool calls) and
whether the stream reports a failure, which gateway mode needs to judge ``[DONE]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fakeprovider.dialects import DialectId
from fakeprovider.recording import ClientEnding

from .findings import Finding, LintResult, shown
from .messages import MessagesLinter, speaks_messages
from .responses import ResponsesLinter, speaks_responses
from .rules import (
    COMMENT_AS_DATA,
    CONTINUATION_IDENTITY,
    DONE_AFTER_FAILURE,
    FINISH_MISSING,
    FIRST_DELTA_IDENTITY,
    MISSING_DONE,
    NULL_STRING,
    PLAIN_TEXT_ERROR,
    TOOL_INDEX,
    USAGE_DROPPED,
    LintRule,
)
from .scan import Event, Position, Scan, scan

DONE = "[DONE]"


def lint(
    body: bytes,
    *,
    status: int | None = 200,
    ending: ClientEnding = "complete",
    include_usage: bool = False,
    upstream_failed: bool = False,
    dialect: DialectId | None = None,
) -> LintResult:
    """Lint one response body against its dialect's wire rules.

    ``status`` None means no response came at all; ``include_usage`` that the request asked
    for usage; ``upstream_failed`` that the stream this one re-emits had failed (both
    chat-completions only). ``dialect`` None reads it from the body: an event typed or named
    ``response.…`` is OpenAI Responses, other named events, or a first event of type
    message_start, Anthropic Messages.
    """
    if status is None:
        return LintResult((), frozenset({DONE_AFTER_FAILURE.id}), failed=True)
    if not 200 <= status < 300:
        return _lint_error_response(body)
    scanned = scan(body)
    if dialect == "openai-responses" or (dialect is None and speaks_responses(scanned)):
        responses = ResponsesLinter(scanned)
        responses.read()
        return responses.result(ending)
    if dialect == "anthropic-messages" or (dialect is None and speaks_messages(scanned)):
        messages = MessagesLinter(scanned)
        messages.read()
        return messages.result(ending)
    linter = _StreamLinter(end=scanned.end)
    linter.read(scanned)
    return linter.result(ending, include_usage=include_usage, upstream_failed=upstream_failed)


def _lint_error_response(body: bytes) -> LintResult:
    # Any dialect's error body: every provider sends a JSON error object.
    findings = []
    if not isinstance(_json_or_none(body.decode("utf-8", errors="replace")), dict):
        excerpt = body[:60].decode("utf-8", errors="replace")
        message = f"error response body is not a JSON error object: {excerpt!r}"
        findings.append(Finding(PLAIN_TEXT_ERROR.id, Position(1, 0), message))
    exercised = frozenset({PLAIN_TEXT_ERROR.id, DONE_AFTER_FAILURE.id})
    return LintResult(tuple(findings), exercised, failed=True)


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _is_text(value: object) -> bool:
    """Only a non-empty string establishes a tool call's identity."""
    return isinstance(value, str) and bool(value)


@dataclass
class _StreamLinter:
    end: Position  # just past the body: where a missing [DONE] would have been
    findings: list[Finding] = field(default_factory=list)
    exercised: set[str] = field(default_factory=set)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)  # wire key -> first entry
    done: Position | None = None
    error: Position | None = None  # the first error payload
    garbage: Position | None = None  # the first payload that is not JSON
    choices_seen: bool = False
    finish_seen: bool = False
    usage_seen: bool = False

    def flag(self, rule: LintRule, at: Position, message: str) -> None:
        self.findings.append(Finding(rule.id, at, message))

    def read(self, scanned: Scan) -> None:
        if scanned.comments:
            self.exercised.add(COMMENT_AS_DATA.id)
        for event in scanned.events:
            if self.done is not None:
                break  # a client stops at [DONE]; what follows is not read
            self._event(event)

    def _event(self, event: Event) -> None:
        if event.data == DONE:
            self.done = event.start
            return
        if event.data.startswith(":"):
            self.exercised.add(COMMENT_AS_DATA.id)
            self.flag(COMMENT_AS_DATA, event.start, f"comment sent as data: {event.data[:60]!r}")
            return
        document = _json_or_none(event.data)
        if document is None:
            self.garbage = self.garbage or event.start
            self.exercised.add(PLAIN_TEXT_ERROR.id)
            self.flag(PLAIN_TEXT_ERROR, event.start, f"data is not JSON: {event.data[:60]!r}")
            return
        if not isinstance(document, dict):
            return
        if document.get("error") is not None and not document.get("choices"):
            self.error = self.error or event.start
            self.exercised.add(PLAIN_TEXT_ERROR.id)
            return
        if document.get("usage") is not None:
            self.usage_seen = True
        choices = document.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict):
                self._choice(choice, event.start)

    def _choice(self, choice: dict[str, Any], at: Position) -> None:
        self.choices_seen = True
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self.finish_seen = True
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        self.exercised.add(NULL_STRING.id)
        opening = delta.get("role") is not None  # OpenAI's own opening delta: content null
        names = ("role", "reasoning_content", "tool_calls", *(() if opening else ("content",)))
        for name in names:
            if name in delta and delta[name] is None:
                self.flag(NULL_STRING, at, f"delta.{name} is null")
        entries = delta.get("tool_calls")
        for position, entry in enumerate(entries if isinstance(entries, list) else ()):
            if isinstance(entry, dict):
                self._tool_call(position, entry, at)

    def _tool_call(self, position: int, entry: dict[str, Any], at: Position) -> None:
        function = entry.get("function")
        if "function" in entry and function is None:
            self.flag(NULL_STRING, at, "tool_calls[].function is null")
        function = function if isinstance(function, dict) else {}
        if "arguments" in function and function["arguments"] is None:
            self.flag(NULL_STRING, at, "function.arguments is null")
        index = entry.get("index")
        key = json.dumps(position if index is None else index)
        if key in self.calls:
            self._continuation(key, entry, function, at)
            return
        self.exercised |= {FIRST_DELTA_IDENTITY.id, TOOL_INDEX.id}
        number = len(self.calls) + 1  # messages name calls by order, as indexes may shift
        self.calls[key] = {"#": number, "id": entry.get("id"), "type": entry.get("type")}
        self.calls[key]["name"] = function.get("name")
        missing = [] if index is not None else ["index"]
        missing += [
            label
            for label, value in (("id", entry.get("id")), ("name", function.get("name")))
            if not _is_text(value)
        ]
        if missing:
            self.flag(
                FIRST_DELTA_IDENTITY,
                at,
                f"first delta of tool call #{number} lacks {', '.join(missing)}",
            )
        if "type" in entry and entry["type"] is None:
            self.flag(NULL_STRING, at, "tool_calls[].type is null on the first delta")
        self._index(index, at)

    def _index(self, index: object, at: Position) -> None:
        if index is None:
            return  # reported by W1
        expected = len(self.calls) - 1  # this call is already counted
        if not isinstance(index, int) or isinstance(index, bool) or index != expected:
            message = f"tool call #{expected + 1} at index {shown(index)}; expected {expected}"
            self.flag(TOOL_INDEX, at, message)

    def _continuation(
        self, key: str, entry: dict[str, Any], function: dict[str, Any], at: Position
    ) -> None:
        self.exercised.add(CONTINUATION_IDENTITY.id)
        first = self.calls[key]
        for name, holder in (("id", entry), ("type", entry), ("name", function)):
            if name not in holder:
                continue
            value = holder[name]
            if _is_text(value) and not _is_text(first.get(name)):
                first[name] = value  # a late identity: W1 flagged the first delta already
                continue
            if _is_text(value) and value == first.get(name):
                what = "repeated"
            elif value is None or value == "":
                what = f"repeated as {shown(value)}"
            else:
                what = f"changed to {shown(value)}"
            message = f"tool call #{first['#']} continuation: {name} {what}"
            self.flag(CONTINUATION_IDENTITY, at, message)

    def _in_stream_failure(self) -> str | None:
        """What in the stream itself reports a failure, if anything."""
        # No positions in the text: gateway mode matches findings by what they say.
        if self.error is not None:
            return "an error payload"
        if self.garbage is not None:
            return "data that is not JSON"
        return None

    def result(
        self, ending: ClientEnding, *, include_usage: bool, upstream_failed: bool
    ) -> LintResult:
        clean_end = ending == "complete"
        in_stream = self._in_stream_failure()
        failed = in_stream is not None or not clean_end or self.done is None
        completed = self.done is not None and in_stream is None
        if clean_end and in_stream is None:
            self.exercised.add(MISSING_DONE.id)
            if self.done is None:
                self.flag(MISSING_DONE, self.end, "the body ended cleanly without [DONE]")
        if in_stream is not None or upstream_failed:
            self.exercised.add(DONE_AFTER_FAILURE.id)
            # An upstream failure the stream shows (its error passed on) is judged as such.
            after = in_stream or "an upstream failure the stream does not mention"
            if self.done is not None:
                self.flag(DONE_AFTER_FAILURE, self.done, f"[DONE] after {after}")
        if include_usage and completed:
            self.exercised.add(USAGE_DROPPED.id)
            if not self.usage_seen:
                assert self.done is not None
                self.flag(USAGE_DROPPED, self.done, "no usage object before [DONE]")
        if completed and self.choices_seen:
            self.exercised.add(FINISH_MISSING.id)
            if not self.finish_seen:
                assert self.done is not None
                self.flag(FINISH_MISSING, self.done, "no non-empty finish_reason before [DONE]")
        ordered = sorted(self.findings, key=lambda finding: finding.position.offset)
        return LintResult(tuple(ordered), frozenset(self.exercised), failed)
