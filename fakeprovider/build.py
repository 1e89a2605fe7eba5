"""A fluent builder for scenarios, for tests and generators.

Keyword arguments left out are *absent* from the chunk; ``None`` sends JSON ``null``.
That distinction is the whole point, so the default is the :data:`ABSENT` sentinel::

    scenario = (
        ScenarioBuilder("tool-null-continuation")
        .attempt(
            stream()
            .role()
            .tool_call(0, id="call_1", type="function", name="get_weather", arguments="")
            .tool_call(0, id=None, name=None, arguments='{"city": "Paris"}')
            .finish("tool_calls")
            .usage(prompt_tokens=11, completion_tokens=7)
            .done()
        )
        .build()
    )
"""

from __future__ import annotations

import enum
from typing import Any, Literal, Self

from pydantic import JsonValue

from .dialects import DEFAULT_DIALECT, DialectId, anthropic
from .scenario import (
    Attempt,
    ErrorAttempt,
    FaultAttempt,
    Provenance,
    Scenario,
    StreamAttempt,
)


class _Absent(enum.Enum):
    ABSENT = "ABSENT"

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent.ABSENT
"""Leave the field out of the JSON object altogether (``None`` sends ``null``)."""

Field = JsonValue | _Absent


def _present(**fields: Field) -> dict[str, JsonValue]:
    return {key: value for key, value in fields.items() if not isinstance(value, _Absent)}


def tool_call_entry(
    index: Field = ABSENT,
    *,
    id: Field = ABSENT,
    type: Field = ABSENT,
    name: Field = ABSENT,
    arguments: Field = ABSENT,
) -> dict[str, JsonValue]:
    """One element of ``delta.tool_calls``; ``function`` is left out when it would be empty."""
    entry = _present(index=index, id=id, type=type)
    function = _present(name=name, arguments=arguments)
    if function:
        entry["function"] = function
    return entry


def usage_object(
    prompt_tokens: Field = ABSENT,
    completion_tokens: Field = ABSENT,
    *,
    total_tokens: Field = ABSENT,
    cached_tokens: Field = ABSENT,
    reasoning_tokens: Field = ABSENT,
    prompt_cache_hit_tokens: Field = ABSENT,
    prompt_cache_miss_tokens: Field = ABSENT,
) -> dict[str, JsonValue]:
    """A ``usage`` object; ``total_tokens`` defaults to the sum when both parts are ints."""
    if (
        isinstance(total_tokens, _Absent)
        and isinstance(prompt_tokens, int)
        and isinstance(completion_tokens, int)
    ):
        total_tokens = prompt_tokens + completion_tokens
    usage = _present(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=total_tokens,
        prompt_cache_hit_tokens=prompt_cache_hit_tokens,
        prompt_cache_miss_tokens=prompt_cache_miss_tokens,
    )
    if not isinstance(cached_tokens, _Absent):
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    if not isinstance(reasoning_tokens, _Absent):
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return usage


class _StepsBuilder:
    """Steps of one stream attempt, in order: the framing and the steps every dialect has."""

    def __init__(self, *, status: int = 200, **framing: Any) -> None:
        self._status = status
        self._framing: dict[str, Any] = dict(framing)
        self._headers: dict[str, str] = {}
        self._steps: list[dict[str, Any]] = []

    # framing and headers -------------------------------------------------------------
    def framing(self, **options: Any) -> Self:
        """Set framing options (line_ending, bom, data_space, split, transfer, ...)."""
        self._framing.update(options)
        return self

    def split(self, mode: Literal["event", "fixed", "offsets", "byte"], **options: Any) -> Self:
        self._framing["split"] = {"mode": mode, **options}
        return self

    def header(self, name: str, value: str) -> Self:
        self._headers[name] = value
        return self

    # other steps ---------------------------------------------------------------------
    def raw(self, payload: str, *, event_end: bool = True) -> Self:
        return self._step({"raw": payload, "event_end": event_end})

    def done(self, *, event_end: bool = True) -> Self:
        return self._step({"done": True, "event_end": event_end})

    def comment(self, text: str = "", *, event_end: bool = True) -> Self:
        return self._step({"comment": text, "event_end": event_end})

    def field(self, name: str, value: str = "", *, event_end: bool = False) -> Self:
        return self._step({"field": name, "value": value, "event_end": event_end})

    def literal(self, text: str) -> Self:
        return self._step({"literal": text})

    def pause(self, ms: float) -> Self:
        return self._step({"pause_ms": ms})

    def stall(self) -> Self:
        return self._step({"stall": True})

    def reset(self) -> Self:
        return self._step({"reset": True})

    def end(self) -> Self:
        return self._step({"end": True})

    def disconnect(self) -> Self:
        return self._step({"disconnect": True})

    def _step(self, step: dict[str, Any]) -> Self:
        self._steps.append(step)
        return self

    def build(self) -> StreamAttempt:
        return StreamAttempt.model_validate({"stream": self._response()})

    def _response(self) -> dict[str, Any]:
        return {
            "status": self._status,
            "headers": self._headers,
            "framing": self._framing,
            "steps": self._steps,
        }


class StreamBuilder(_StepsBuilder):
    """A chat-completions stream attempt: chunk steps and the envelope they start with."""

    def __init__(self, *, status: int = 200, **framing: Any) -> None:
        super().__init__(status=status, **framing)
        self._envelope: dict[str, JsonValue] | None = {}

    def envelope(self, fields: dict[str, JsonValue] | None) -> Self:
        """Envelope fields for every chunk; ``None`` sends chunks without any."""
        self._envelope = fields
        return self

    # chunks --------------------------------------------------------------------------
    def chunk(self, data: dict[str, JsonValue], *, envelope: bool = True) -> Self:
        """A chunk object exactly as given (plus the envelope unless ``envelope=False``)."""
        return self._step({"chunk": data, "envelope": envelope})

    def delta(
        self,
        *,
        finish_reason: Field = None,
        choice_index: Field = 0,
        usage: Field = ABSENT,
        **delta: Field,
    ) -> Self:
        """A chunk with one choice whose delta holds the given fields."""
        choice = _present(index=choice_index)
        choice["delta"] = _present(**delta)
        choice.update(_present(finish_reason=finish_reason))
        return self.chunk({"choices": [choice], **_present(usage=usage)})

    def role(self, **delta: Field) -> Self:
        """The first-chunk signature ``{"role": "assistant", "content": null}`` (+ fields)."""
        return self.delta(role="assistant", **({"content": None} | delta))

    def text(self, content: Field) -> Self:
        return self.delta(content=content)

    def reasoning(self, reasoning_content: Field) -> Self:
        return self.delta(reasoning_content=reasoning_content)

    def tool_calls(self, *entries: dict[str, JsonValue], **delta: Field) -> Self:
        """One chunk carrying several tool-call entries (see :func:`tool_call_entry`)."""
        return self.delta(tool_calls=list(entries), **delta)

    def tool_call(
        self,
        index: Field = ABSENT,
        *,
        id: Field = ABSENT,
        type: Field = ABSENT,
        name: Field = ABSENT,
        arguments: Field = ABSENT,
    ) -> Self:
        """One chunk carrying one tool-call entry."""
        entry = tool_call_entry(index, id=id, type=type, name=name, arguments=arguments)
        return self.tool_calls(entry)

    def finish(self, reason: Field, *, usage: Field = ABSENT) -> Self:
        """A chunk with an empty delta and the finish reason (optionally with usage)."""
        return self.delta(finish_reason=reason, usage=usage)

    def usage(
        self, prompt_tokens: Field = ABSENT, completion_tokens: Field = ABSENT, **more: Any
    ) -> Self:
        """The trailing usage chunk: ``choices: []`` plus a usage object."""
        usage = usage_object(prompt_tokens, completion_tokens, **more)
        return self.chunk({"choices": [], "usage": usage})

    def _response(self) -> dict[str, Any]:
        response = super()._response()
        if self._envelope is None or self._envelope:
            response["envelope"] = self._envelope
        return response


def stream(*, status: int = 200, **framing: Any) -> StreamBuilder:
    """Start a stream attempt."""
    return StreamBuilder(status=status, **framing)


_EMPTY_INPUT: dict[str, JsonValue] = {}


def _copied(value: Field) -> Field:
    # The shared default must never become part of a step that a caller could mutate.
    return dict(value) if isinstance(value, dict) else value


class _NamedEventsBuilder(_StepsBuilder):
    """Named events (``event:`` = the data's type): every keyword left out is absent from
    the event, ``None`` sends ``null``, as for chunks. :meth:`named` and :meth:`data_only`
    change the last event's ``event:`` line."""

    def event(self, data: dict[str, JsonValue], *, event_end: bool = True) -> Self:
        """An event whose data object is exactly ``data``."""
        return self._step({"event": data, "event_end": event_end})

    def named(self, name: str) -> Self:
        """Give the last event another ``event:`` line than its type (a mismatch)."""
        self._last_event()["name"] = name
        return self

    def data_only(self) -> Self:
        """Send the last event without an ``event:`` line."""
        self._last_event()["event_line"] = False
        return self

    def _last_event(self) -> dict[str, Any]:
        if not self._steps or "event" not in self._steps[-1]:
            raise ValueError("named(), data_only() and unnumbered() change an event: add one first")
        return self._steps[-1]


class MessagesStreamBuilder(_NamedEventsBuilder):
    """An Anthropic Messages stream attempt::

    messages_stream().message_start(input_tokens=25).text_start(0).ping()
    .text_delta(0, "Hel").text_delta(0, "lo").named("content_block_start")
    .block_stop(0).message_delta("end_turn", output_tokens=15).message_stop()
    """

    # the message -----------------------------------------------------------------------
    def message_start(
        self,
        *,
        id: Field = "msg_fake",
        model: Field = "fake-model",
        input_tokens: Field = 0,
        output_tokens: Field = 1,
        cache_creation_input_tokens: Field = ABSENT,
        cache_read_input_tokens: Field = ABSENT,
        **message: Field,
    ) -> Self:
        """``message_start`` with the fields the real API sends (``content: []``, null
        stop reason, preliminary usage); ``message`` adds or overrides fields."""
        usage = _present(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_creation_input_tokens=cache_creation_input_tokens,
            cache_read_input_tokens=cache_read_input_tokens,
        )
        fields = _present(
            id=id,
            type="message",
            role="assistant",
            model=model,
            content=[],
            stop_reason=None,
            stop_sequence=None,
            usage=usage,
        )
        fields.update(_present(**message))
        return self.event({"type": "message_start", "message": fields})

    def message_delta(
        self,
        stop_reason: Field,
        *,
        stop_sequence: Field = None,
        output_tokens: Field = ABSENT,
        usage: Field = ABSENT,
        **delta: Field,
    ) -> Self:
        """``message_delta``: the stop reason and the cumulative usage (``output_tokens``,
        or a whole ``usage`` object)."""
        fields = _present(stop_reason=stop_reason, stop_sequence=stop_sequence, **delta)
        if isinstance(usage, _Absent) and not isinstance(output_tokens, _Absent):
            usage = {"output_tokens": output_tokens}
        return self.event({"type": "message_delta", "delta": fields, **_present(usage=usage)})

    def message_stop(self) -> Self:
        return self.event({"type": "message_stop"})

    def ping(self) -> Self:
        return self.event({"type": "ping"})

    def error(self, type: Field = "overloaded_error", message: Field = "Overloaded") -> Self:
        """A mid-stream ``error`` event, Anthropic's error body."""
        return self.event({"type": "error", "error": _present(type=type, message=message)})

    # content blocks --------------------------------------------------------------------
    def block_start(self, index: Field, block: Field) -> Self:
        """``content_block_start`` with the block exactly as given."""
        return self.event(
            {"type": "content_block_start", **_present(index=index, content_block=block)}
        )

    def text_start(self, index: Field, text: Field = "") -> Self:
        return self.block_start(index, _present(type="text", text=text))

    def tool_use_start(
        self, index: Field, id: Field, name: Field, input: Field = _EMPTY_INPUT
    ) -> Self:
        """A ``tool_use`` block: the call's identity, and its input (``{}`` until deltas)."""
        block = _present(type="tool_use", id=id, name=name, input=_copied(input))
        return self.block_start(index, block)

    def thinking_start(self, index: Field, thinking: Field = "", signature: Field = "") -> Self:
        return self.block_start(
            index, _present(type="thinking", thinking=thinking, signature=signature)
        )

    def redacted_thinking_start(self, index: Field, data: Field) -> Self:
        """A ``redacted_thinking`` block, complete in its start (no deltas follow)."""
        return self.block_start(index, _present(type="redacted_thinking", data=data))

    def delta(self, index: Field, delta: Field) -> Self:
        """``content_block_delta`` with the delta exactly as given."""
        return self.event({"type": "content_block_delta", **_present(index=index, delta=delta)})

    def text_delta(self, index: Field, text: Field) -> Self:
        return self.delta(index, _present(type="text_delta", text=text))

    def input_json(self, index: Field, partial_json: Field) -> Self:
        """An ``input_json_delta`` fragment of a tool call's arguments."""
        return self.delta(index, _present(type="input_json_delta", partial_json=partial_json))

    def thinking_delta(self, index: Field, thinking: Field) -> Self:
        return self.delta(index, _present(type="thinking_delta", thinking=thinking))

    def signature_delta(self, index: Field, signature: Field) -> Self:
        return self.delta(index, _present(type="signature_delta", signature=signature))

    def block_stop(self, index: Field) -> Self:
        return self.event({"type": "content_block_stop", **_present(index=index)})


class ResponsesStreamBuilder(_NamedEventsBuilder):
    """An OpenAI Responses stream attempt; each event's ``sequence_number`` is filled in
    by the scenario (its position) unless given or left out with :meth:`unnumbered`::

        responses_stream().created().message_added(0, "msg_1").part_added(0, "msg_1")
        .text_delta(0, "msg_1", "Hel").text_delta(0, "msg_1", "lo")
        .completed(output=[], usage={"input_tokens": 5, "output_tokens": 2})
    """

    def unnumbered(self) -> Self:
        """Send the last event without a ``sequence_number``."""
        self._last_event()["numbered"] = False
        return self

    # the response ----------------------------------------------------------------------
    def lifecycle(self, type: str, **response: Field) -> Self:
        """``response.<type>`` (created, in_progress, completed, incomplete, failed) with a
        response object: ``id``, ``object``, ``created_at``, ``model``, ``status``,
        ``output: []`` and ``usage: null`` unless given (ABSENT leaves one out); the AI
        SDK refuses a response without ``created_at``, as the live API always sends it."""
        fields: dict[str, Field] = {
            "id": "resp_fake",
            "object": "response",
            "created_at": 1700000000,
            "model": "fake-model",
            "status": "in_progress",
            "output": [],
            "usage": None,
        }
        fields.update(response)
        return self.event({"type": f"response.{type}", "response": _present(**fields)})

    def created(self, **response: Field) -> Self:
        return self.lifecycle("created", **response)

    def in_progress(self, **response: Field) -> Self:
        return self.lifecycle("in_progress", **response)

    def completed(self, *, output: Field = ABSENT, usage: Field = None, **response: Field) -> Self:
        """``response.completed``: status ``completed``, the terminal ``output`` (``[]``
        unless given) and ``usage``."""
        output = [] if isinstance(output, _Absent) else output
        return self.lifecycle(
            "completed", status="completed", output=output, usage=usage, **response
        )

    def incomplete(self, reason: Field = "max_output_tokens", **response: Field) -> Self:
        """``response.incomplete`` with ``incomplete_details.reason``."""
        details: Field = None if reason is None else _present(reason=reason)
        return self.lifecycle(
            "incomplete", status="incomplete", incomplete_details=details, **response
        )

    def failed(
        self, code: Field = "server_error", message: Field = "fake failure", **response: Field
    ) -> Self:
        """``response.failed`` with ``error: {code, message}``."""
        error = _present(code=code, message=message)
        return self.lifecycle("failed", status="failed", error=error, **response)

    def error(
        self,
        code: Field = "server_error",
        message: Field = "fake failure",
        *,
        nested: bool = True,
        type: Field = ABSENT,
        param: Field = None,
    ) -> Self:
        """An ``error`` event: nested (``error: {type, code, message, param}``, as the live
        API sends it) or flat (``code``, ``message``, ``param``, as documented)."""
        fields = _present(type=code if isinstance(type, _Absent) else type, code=code)
        fields.update(_present(message=message, param=param))
        if nested:
            return self.event({"type": "error", "error": fields})
        del fields["type"]
        return self.event({"type": "error", **fields})

    def keepalive(self) -> Self:
        return self.event({"type": "keepalive"})

    # output items ----------------------------------------------------------------------
    def item_added(self, output_index: Field, item: Field) -> Self:
        """``response.output_item.added`` with the item exactly as given."""
        return self.event(
            {"type": "response.output_item.added", **_present(output_index=output_index, item=item)}
        )

    def item_done(self, output_index: Field, item: Field) -> Self:
        """``response.output_item.done`` with the item exactly as given."""
        return self.event(
            {"type": "response.output_item.done", **_present(output_index=output_index, item=item)}
        )

    def message_added(self, output_index: Field, id: Field = "msg_fake") -> Self:
        item = _present(type="message", id=id, status="in_progress", role="assistant", content=[])
        return self.item_added(output_index, item)

    def function_call_added(
        self, output_index: Field, id: Field, call_id: Field, name: Field, arguments: Field = ""
    ) -> Self:
        """A ``function_call`` item: the item ``id`` (``fc_…``), the ``call_id`` the next
        turn echoes (``call_…``) and the name; the arguments follow as deltas."""
        item = _present(
            type="function_call",
            id=id,
            call_id=call_id,
            name=name,
            arguments=arguments,
            status="in_progress",
        )
        return self.item_added(output_index, item)

    def reasoning_added(self, output_index: Field, id: Field = "rs_fake") -> Self:
        return self.item_added(output_index, _present(type="reasoning", id=id, summary=[]))

    def _routed(self, type: str, output_index: Field, item_id: Field, **fields: Field) -> Self:
        routing = _present(item_id=item_id, output_index=output_index)
        return self.event({"type": f"response.{type}", **routing, **_present(**fields)})

    def part_added(
        self, output_index: Field, item_id: Field, content_index: Field = 0, part: Field = ABSENT
    ) -> Self:
        """``response.content_part.added``: an empty ``output_text`` part unless given."""
        if isinstance(part, _Absent):
            part = {"type": "output_text", "text": "", "annotations": []}
        return self._routed(
            "content_part.added", output_index, item_id, content_index=content_index, part=part
        )

    def part_done(
        self, output_index: Field, item_id: Field, part: Field, content_index: Field = 0
    ) -> Self:
        return self._routed(
            "content_part.done", output_index, item_id, content_index=content_index, part=part
        )

    def text_delta(
        self, output_index: Field, item_id: Field, delta: Field, content_index: Field = 0
    ) -> Self:
        return self._routed(
            "output_text.delta", output_index, item_id, content_index=content_index, delta=delta
        )

    def text_done(
        self, output_index: Field, item_id: Field, text: Field, content_index: Field = 0
    ) -> Self:
        return self._routed(
            "output_text.done", output_index, item_id, content_index=content_index, text=text
        )

    def refusal_delta(
        self, output_index: Field, item_id: Field, delta: Field, content_index: Field = 0
    ) -> Self:
        return self._routed(
            "refusal.delta", output_index, item_id, content_index=content_index, delta=delta
        )

    def arguments_delta(self, output_index: Field, item_id: Field, delta: Field) -> Self:
        """``response.function_call_arguments.delta``: no name, no ``call_id``."""
        return self._routed("function_call_arguments.delta", output_index, item_id, delta=delta)

    def arguments_done(self, output_index: Field, item_id: Field, arguments: Field) -> Self:
        return self._routed(
            "function_call_arguments.done", output_index, item_id, arguments=arguments
        )

    def summary_delta(
        self, output_index: Field, item_id: Field, delta: Field, summary_index: Field = 0
    ) -> Self:
        """``response.reasoning_summary_text.delta``."""
        return self._routed(
            "reasoning_summary_text.delta",
            output_index,
            item_id,
            summary_index=summary_index,
            delta=delta,
        )


def responses_stream(*, status: int = 200, **framing: Any) -> ResponsesStreamBuilder:
    """Start an OpenAI Responses stream attempt (for a scenario of that dialect)."""
    return ResponsesStreamBuilder(status=status, **framing)


def messages_stream(*, status: int = 200, **framing: Any) -> MessagesStreamBuilder:
    """Start an Anthropic Messages stream attempt (for a scenario of that dialect)."""
    return MessagesStreamBuilder(status=status, **framing)


def anthropic_error(
    status: int,
    *,
    type: Field = ABSENT,
    message: str | None = None,
    should_retry: bool | None = None,
    retry_after_ms: float | None = None,
    retry_after: float | str | None = None,
    headers: dict[str, str] | None = None,
    **error: Field,
) -> ErrorAttempt:
    """An HTTP error as Anthropic sends it: ``{"type": "error", "error": {…}}`` (the type
    for the status unless given, e.g. 529 ``overloaded_error``), and the headers its SDKs
    read: ``x-should-retry`` (overrides their retry rule), ``retry-after-ms``,
    ``retry-after``. ``error`` adds fields such as ``details``."""
    body = anthropic.error_object(status, message)
    assert isinstance(body, dict) and isinstance(body["error"], dict)
    if not isinstance(type, _Absent):
        body["error"]["type"] = type
    body["error"].update(_present(**error))
    all_headers = dict(headers or {})
    if should_retry is not None:
        all_headers["x-should-retry"] = "true" if should_retry else "false"
    if retry_after_ms is not None:
        all_headers["retry-after-ms"] = f"{retry_after_ms:g}"
    return http_error(status, headers=all_headers, body=body, retry_after=retry_after)


def http_error(
    status: int,
    *,
    headers: dict[str, str] | None = None,
    body: JsonValue = None,
    raw_body: str | None = None,
    retry_after: float | str | None = None,
) -> ErrorAttempt:
    """A complete HTTP response (an OpenAI-shaped error body unless one is given)."""
    all_headers = dict(headers or {})
    if retry_after is not None:
        all_headers["retry-after"] = str(retry_after)
    error = {"status": status, "headers": all_headers, "body": body, "raw_body": raw_body}
    return ErrorAttempt.model_validate({"error": error})


def fault(kind: Literal["reset", "close", "stall"]) -> FaultAttempt:
    """A connection that fails before any response byte."""
    return FaultAttempt(fault=kind)


class ScenarioBuilder:
    def __init__(
        self,
        id: str,
        *,
        title: str = "",
        description: str = "",
        tags: tuple[str, ...] = (),
        profiles: tuple[str, ...] = (),
        provenance: Provenance | None = None,
        dialect: DialectId = DEFAULT_DIALECT,
    ) -> None:
        self._fields: dict[str, Any] = {
            "id": id,
            "dialect": dialect,
            "title": title,
            "description": description,
            "tags": tags,
            "profiles": profiles,
            "provenance": provenance or Provenance(),
        }
        self._attempts: list[Attempt] = []

    def attempt(self, attempt: _StepsBuilder | Attempt) -> Self:
        """Add the attempt that answers the next request."""
        self._attempts.append(attempt.build() if isinstance(attempt, _StepsBuilder) else attempt)
        return self

    def expect(self, **outcome: JsonValue) -> Self:
        self._fields["expect"] = outcome
        return self

    def retry_policy(self, **fields: JsonValue) -> Self:
        """Retry-policy fields the case runs under (suite data; the provider ignores it)."""
        self._fields["retry_policy"] = fields
        return self

    def build(self) -> Scenario:
        return Scenario(**self._fields, attempts=tuple(self._attempts))
