"""What every Anthropic Messages shim shares: the run line's Anthropic body in, the library's
assembled message out as protocol events.

A shim of this dialect declares ``dialects: ["anthropic-messages"]``, takes the run line's
``base_url`` as its SDK takes it (without ``/v1``: the Anthropic SDKs append
``/v1/messages``) and hands :class:`MessageTurn` the content blocks, usage and stop reason
*as the library reported them*. Nothing is repaired, as in :mod:`.common`: a library that
returned without a stop reason finishes ``stop`` (it claimed a complete answer), a block the
protocol has no event for (a server tool's result) is left out, and a tool input the library
parsed is reported as its JSON text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...codes import PAUSE_TURN, REFUSAL
from ...events import (
    Block,
    Event,
    Finish,
    FinishReason,
    ProtocolDialect,
    ReasoningBlock,
    RunCase,
    ServerToolBlock,
    TextBlock,
    ToolCallBlock,
    Usage,
)
from .common import ToolSpec, block_events, call_text, integer

DIALECTS: list[ProtocolDialect] = ["anthropic-messages"]
DEFAULT_MAX_TOKENS = 1024

# stop_reason → (finish, code): DIALECTS.md "Non-success ends".
_STOPS: dict[str, tuple[FinishReason, str | None]] = {
    "end_turn": ("stop", None),
    "stop_sequence": ("stop", None),
    "tool_use": ("tool-calls", None),
    "max_tokens": ("max-tokens", None),
    "model_context_window_exceeded": ("max-tokens", None),
    "refusal": ("error", REFUSAL),
    "pause_turn": ("error", PAUSE_TURN),
}


def stop_finish(stop_reason: object) -> Finish:
    """The protocol finish for a stop reason as the library kept it (none: ``stop``)."""
    if not isinstance(stop_reason, str) or not stop_reason:
        return Finish(reason="stop")
    reason, code = _STOPS.get(stop_reason, ("error", stop_reason.upper()))
    return Finish(reason=reason, code=code)


@dataclass
class MessageTurn:
    """A library's assembled Anthropic message: its blocks in order, usage, stop reason."""

    blocks: list[Block] = field(default_factory=list)
    usage: Usage | None = None
    stop_reason: object = None

    def events(self) -> Iterator[Event]:
        yield from block_events(self.blocks)
        if self.usage is not None:
            yield self.usage
        yield stop_finish(self.stop_reason)


def part(block: object, name: str) -> Any:
    """A field of a content block, whether the library hands over objects or dicts."""
    if isinstance(block, Mapping):
        return block.get(name)
    return getattr(block, name, None)


def content_blocks(content: Iterable[object]) -> list[Block]:
    """Protocol blocks from an Anthropic ``content`` list (SDK objects or dicts): text,
    thinking (with its signature), redacted thinking (its data), tool and server-tool uses
    (their input as the library kept it). Empty text opens nothing (C1)."""
    blocks: list[Block] = []
    for block in content:
        kind = part(block, "type")
        if kind == "text" and part(block, "text"):
            blocks.append(TextBlock(text=str(part(block, "text"))))
        elif kind == "thinking":
            blocks.append(reasoning_block(part(block, "thinking"), part(block, "signature")))
        elif kind == "redacted_thinking":
            blocks.append(redacted_block(part(block, "data")))
        elif kind in ("tool_use", "server_tool_use"):
            call = ToolCallBlock if kind == "tool_use" else ServerToolBlock
            blocks.append(
                call(
                    id=call_text(part(block, "id")),
                    name=call_text(part(block, "name")),
                    arguments=call_text(part(block, "input")),
                )
            )
    return blocks


def reasoning_block(text: object, signature: object) -> ReasoningBlock:
    """A thinking block: its text, and its signature when the library kept a non-empty one."""
    return ReasoningBlock(
        text=str(text or ""),
        signature=signature if isinstance(signature, str) and signature else None,
    )


def redacted_block(data: object) -> ReasoningBlock:
    """A redacted thinking block: no text, its opaque data verbatim."""
    return ReasoningBlock(text="", redacted=call_text(data))


def message_usage(usage: object) -> Usage | None:
    """Protocol usage from an Anthropic usage object: its ``input_tokens`` already leaves
    out cache reads and writes (C4), which get their own fields."""
    if usage is None:
        return None
    prompt, completion = integer(part(usage, "input_tokens")), integer(part(usage, "output_tokens"))
    if prompt is None or completion is None:
        return None
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        cache_read_tokens=integer(part(usage, "cache_read_input_tokens")),
        cache_write_tokens=integer(part(usage, "cache_creation_input_tokens")),
    )


def message_params(case: RunCase) -> dict[str, Any]:
    """The run line's Anthropic body as an SDK's ``messages.stream`` keywords: everything
    but ``stream`` (the helper sets it), ``max_tokens`` defaulted as the API requires one."""
    params = {k: v for k, v in case.request.items() if k != "stream"}
    params.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
    return params


def max_tokens(case: RunCase) -> int:
    return integer(case.request.get("max_tokens")) or DEFAULT_MAX_TOKENS


def anthropic_messages(case: RunCase) -> list[dict[str, Any]]:
    messages = case.request.get("messages")
    return list(messages) if isinstance(messages, list) else []


def prompt_text(case: RunCase) -> str:
    """The request's user text, for a library that takes a prompt, not a message list."""
    texts: list[str] = []
    for message in anthropic_messages(case):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [str(part(p, "text")) for p in content if part(p, "type") == "text"]
    return " ".join(texts)


def anthropic_tools(case: RunCase) -> list[ToolSpec]:
    """The request's tools (Anthropic's ``input_schema`` form), for a library that declares
    tools its own way."""
    tools = case.request.get("tools")
    return [
        ToolSpec(
            name=str(tool["name"]),
            description=str(tool.get("description", "")),
            parameters=dict(tool.get("input_schema", {})),
        )
        for tool in (tools if isinstance(tools, list) else [])
        if isinstance(tool, dict) and "name" in tool
    ]


def openai_tools(case: RunCase) -> list[dict[str, Any]]:
    """The request's tools as chat-completions function tools, for a library whose caller
    speaks that shape whatever the provider's wire (litellm)."""
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
            },
        }
        for spec in anthropic_tools(case)
    ]
