"""What every shim shares: the library's assembled message → protocol events.

A shim drives its library to the end of the stream and hands back an :class:`Assembled`:
the text, reasoning, tool calls, usage and raw finish reason *as the library reported
them*. Nothing is repaired here (real-adapters.md §6): an empty id stays empty, a library
that returned without a finish reason finishes `stop` (it claimed a complete answer), and
only usage the provider actually sent is reported. A library
exception becomes one ``thrown`` event with the code of :mod:`.errors`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...events import (
    PROTOCOL_VERSION,
    Block,
    BlockEnd,
    BlockStart,
    Capabilities,
    DeclaredRetryPolicy,
    Event,
    Finish,
    FinishReason,
    Hello,
    ProtocolDialect,
    ReasoningBlock,
    RunCase,
    TextBlock,
    Thrown,
    ToolCallBlock,
    Usage,
)
from ...options import DEFAULT_TOOLS, RunOptions
from .errors import error_code

NATIVE_RETRY = "native_retry"
"""``RunOptions.extra`` key: keep the library's own retry defaults (the matrix's retry
column), and declare them (:func:`native_policy`)."""

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "length": "max-tokens",
}


@dataclass(frozen=True)
class AssembledCall:
    """A tool call's fields as the library handed them over: text, None, or whatever else
    it passed through from the wire (an object for `arguments`, a number for an `id`)."""

    id: object
    name: object
    arguments: object


@dataclass
class Assembled:
    """A library's final message, read from the rawest fields it exposes."""

    text: str | None = None
    reasoning: str | None = None
    tool_calls: list[AssembledCall] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None  # the wire's value, as the library reports it

    def blocks(self) -> list[Block]:
        """Reasoning, text, then tool calls; empty text opens nothing (C1)."""
        blocks: list[Block] = []
        if self.reasoning:
            blocks.append(ReasoningBlock(text=self.reasoning))
        if self.text:
            blocks.append(TextBlock(text=self.text))
        blocks += [
            ToolCallBlock(
                id=call_text(c.id), name=call_text(c.name), arguments=call_text(c.arguments)
            )
            for c in self.tool_calls
        ]
        return blocks

    def events(self) -> Iterator[Event]:
        yield from block_events(self.blocks())
        if self.usage is not None:
            yield self.usage
        yield finish_event(self.finish_reason)


class Outcome(Protocol):
    """What a shim's ``assemble`` returns: the events its library's answer reads as."""

    def events(self) -> Iterator[Event]: ...


def block_events(blocks: Iterable[Block]) -> Iterator[Event]:
    """Each assembled block as a start and its end, in the library's order."""
    for index, block in enumerate(blocks):
        yield BlockStart(index=index, block_type=block.type)
        yield BlockEnd(index=index, block=block)


def call_text(value: object) -> str:
    """A call's id, name or arguments as the protocol carries them: text, "" for none. A
    value the library handed over as something else is reported as its JSON text, not
    refused: the library did not crash on it, and whether its caller lost anything is the
    invariants' to judge (C3 under quirk D3 for object arguments, T1 for a numeric id)."""
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False)


def finish_event(reason: str | None) -> Finish:
    """The protocol finish for a wire finish reason. A library that returned normally
    without one claimed a complete answer: `stop`, as C5 reads a stream with no reason."""
    if not reason:
        return Finish(reason="stop")
    mapped = _FINISH.get(reason)
    if mapped is not None:
        return Finish(reason=mapped)
    return Finish(reason="error", code=reason.upper())


def usage_event(
    prompt: int | None,
    completion: int | None,
    cached: int | None,
    reasoning: int | None,
    written: int | None = None,
) -> Usage | None:
    """Protocol usage (C4: input excludes cached) from the provider's counts, ``prompt``
    including the cache reads and, when a library counts them (litellm's Anthropic route),
    the cache writes."""
    if prompt is None or completion is None:
        return None
    return Usage(
        input_tokens=prompt - (cached or 0) - (written or 0),
        output_tokens=completion,
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
        cache_write_tokens=written,
    )


def thrown(error: BaseException) -> Thrown:
    code = error_code(error)
    message = f"{type(error).__name__}: {error}"[:500]
    return Thrown(message=message, code=code) if code else Thrown(message=message)


def hello(
    name: str,
    version: str,
    *,
    reasoning: bool,
    usage: bool = True,
    retry_policy: DeclaredRetryPolicy | None = None,
    dialects: list[ProtocolDialect] | None = None,
) -> Hello:
    """The handshake every shim sends: assembled blocks only, failures classified by the
    shared table. No retry layer, unless ``retry_policy`` declares the one the library runs
    (pass :func:`native_policy`'s answer): a layer of its own, never the case's policy.
    ``dialects`` (protocol 1.1) names the wire the library reads; absent, chat-completions."""
    return Hello(
        protocol=PROTOCOL_VERSION,
        name=name,
        version=version,
        capabilities=Capabilities(
            deltas=False,
            reasoning=reasoning,
            usage=usage,
            retry=retry_policy is not None,
            error_codes=True,
        ),
        retry_policy=retry_policy,
        dialects=dialects,
    )


def native_retry(options: RunOptions) -> bool:
    """Whether the run keeps the library's own retries (else the shim turns them off)."""
    return bool(options.extra.get(NATIVE_RETRY, False))


def sdk_retries(native: bool) -> dict[str, Any]:
    """The openai client's retry keyword: its default budget for the native retry profile,
    none for the content cases (each attempt is then one request the suite can judge)."""
    return {} if native else {"max_retries": 0}


def native_policy(options: RunOptions, policy: DeclaredRetryPolicy) -> DeclaredRetryPolicy | None:
    """What a shim declares (``hello(..., retry_policy=...)``): ``policy``, its library's
    default retry policy (:mod:`.retry_policies`), when the run keeps the library's retries;
    None, no retry layer, when they are off."""
    return policy if native_retry(options) else None


def user_messages(case: RunCase) -> list[dict[str, Any]]:
    messages = case.request.get("messages")
    return list(messages) if isinstance(messages, list) else []


def tool_schemas(case: RunCase) -> list[dict[str, Any]]:
    tools = case.request.get("tools")
    return list(tools) if isinstance(tools, list) else list(DEFAULT_TOOLS)


@dataclass(frozen=True)
class ToolSpec:
    """One function tool of the request, for a library that declares tools its own way."""

    name: str
    description: str
    parameters: dict[str, Any]

    @property
    def properties(self) -> dict[str, dict[str, Any]]:
        return dict(self.parameters.get("properties", {}))

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", ()))


def tool_specs(case: RunCase) -> list[ToolSpec]:
    return [
        ToolSpec(
            name=str(function["name"]),
            description=str(function.get("description", "")),
            parameters=dict(function.get("parameters", {})),
        )
        for function in (schema["function"] for schema in tool_schemas(case))
    ]


def never_called(*_: Any, **__: Any) -> Any:
    """The body of every tool a shim declares: shims assemble calls, they never run them."""
    raise AssertionError("the shim never executes tools")


def model_name(case: RunCase) -> str:
    return str(case.request.get("model", "fake-model"))


def integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def implied_finish(calls: Sequence[object]) -> str | None:
    """The finish of a library that exposes no finish reason (its turn is a Responses-style
    item list or a bare message): its callers run the tools when it returned calls, and take
    the answer as complete otherwise (``None``: `stop`)."""
    return "tool_calls" if calls else None


def first_text(values: Sequence[object]) -> str | None:
    """The first non-empty string among ``values`` (a library's alternative fields)."""
    return next((v for v in values if isinstance(v, str) and v), None)


class SyncShim:
    """A shim whose library blocks: ``run`` is a plain generator (the suite runs it on a
    thread). Subclasses implement :meth:`assemble`."""

    hello: Hello

    def assemble(self, case: RunCase) -> Outcome:
        raise NotImplementedError

    def run(self, case: RunCase) -> Iterator[Event]:
        try:
            assembled = self.assemble(case)
        except Exception as error:  # the library's failure is the outcome under test
            yield thrown(error)
            return
        yield from assembled.events()


class AsyncShim:
    """A shim over an asyncio library: ``run`` is an async generator."""

    hello: Hello

    async def assemble(self, case: RunCase) -> Outcome:
        raise NotImplementedError

    async def run(self, case: RunCase) -> AsyncIterator[Event]:
        try:
            assembled = await self.assemble(case)
        except Exception as error:  # the library's failure is the outcome under test
            yield thrown(error)
            return
        for event in assembled.events():
            yield event
