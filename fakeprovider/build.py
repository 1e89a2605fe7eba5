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


class StreamBuilder:
    """Steps of one stream attempt, in order."""

    def __init__(self, *, status: int = 200, **framing: Any) -> None:
        self._status = status
        self._framing: dict[str, Any] = dict(framing)
        self._headers: dict[str, str] = {}
        self._envelope: dict[str, JsonValue] | None = {}
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
        response: dict[str, Any] = {
            "status": self._status,
            "headers": self._headers,
            "framing": self._framing,
            "steps": self._steps,
        }
        if self._envelope is None or self._envelope:
            response["envelope"] = self._envelope
        return StreamAttempt.model_validate({"stream": response})


def stream(*, status: int = 200, **framing: Any) -> StreamBuilder:
    """Start a stream attempt."""
    return StreamBuilder(status=status, **framing)


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
    ) -> None:
        self._fields: dict[str, Any] = {
            "id": id,
            "title": title,
            "description": description,
            "tags": tags,
            "profiles": profiles,
            "provenance": provenance or Provenance(),
        }
        self._attempts: list[Attempt] = []

    def attempt(self, attempt: StreamBuilder | Attempt) -> Self:
        """Add the attempt that answers the next request."""
        self._attempts.append(attempt.build() if isinstance(attempt, StreamBuilder) else attempt)
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
