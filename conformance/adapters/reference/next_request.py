"""The next request of a two-turn case, built from what the reference assembled (sans-IO).

A library's users send the assistant turn back as the library handed it to them, then a
tool result per call: so does the reference, from the final attempt's blocks. Ids and
continuity tokens go back exactly as assembled (signatures, redacted data,
``encrypted_content``): the provider refuses anything else (DIALECTS.md "Continuity
tokens"). The shim's part is only the tool results and the user's message (``follow_up``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from conformance.events import (
    Block,
    FollowUpTurn,
    ProtocolDialect,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
)

NextRequest = Callable[
    [ProtocolDialect, dict[str, Any], Sequence[Block], FollowUpTurn], dict[str, Any]
]


def next_request(
    dialect: ProtocolDialect,
    request: dict[str, Any],
    blocks: Sequence[Block],
    turn: FollowUpTurn,
) -> dict[str, Any]:
    """``request`` with the assembled turn and its answers appended, in ``dialect``."""
    calls = [block for block in blocks if isinstance(block, ToolCallBlock)]
    results = list(zip(calls, turn.tool_results, strict=False))
    if dialect == "anthropic-messages":
        answers: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": call.id, "content": result}
            for call, result in results
        ]
        if turn.message is not None:
            answers.append({"type": "text", "text": turn.message})
        content = [part for block in blocks for part in _anthropic_blocks(block)]
        assistant = {"role": "assistant", "content": content}
        messages = [*request["messages"], assistant, {"role": "user", "content": answers}]
        return {**request, "messages": messages}
    if dialect == "openai-responses":
        items = [item for block in blocks for item in _responses_items(block)]
        items += [
            {"type": "function_call_output", "call_id": call.id, "output": result}
            for call, result in results
        ]
        if turn.message is not None:
            items.append({"role": "user", "content": turn.message})
        return {**request, "input": [*request["input"], *items]}
    text = "".join(block.text for block in blocks if isinstance(block, TextBlock))
    reply: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        reply["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ]
    tools = [{"role": "tool", "tool_call_id": call.id, "content": r} for call, r in results]
    user = [] if turn.message is None else [{"role": "user", "content": turn.message}]
    return {**request, "messages": [*request["messages"], reply, *tools, *user]}


def _anthropic_blocks(block: Block) -> list[dict[str, Any]]:
    if isinstance(block, ReasoningBlock):
        if block.redacted is not None:
            return [{"type": "redacted_thinking", "data": block.redacted}]
        thinking = {"type": "thinking", "thinking": block.text}
        signed = (
            {**thinking, "signature": block.signature} if block.signature is not None else thinking
        )
        return [signed]
    if isinstance(block, ToolCallBlock):
        return [{"type": "tool_use", "id": block.id, "name": block.name, "input": _input(block)}]
    if isinstance(block, TextBlock) and block.text:
        return [{"type": "text", "text": block.text}]
    # An empty text block is refused on replay; a server tool's block the provider keeps.
    return []


def _input(call: ToolCallBlock) -> Any:
    # The API takes an object: arguments that are none (or no JSON) go back as {}.
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _responses_items(block: Block) -> list[dict[str, Any]]:
    if isinstance(block, ReasoningBlock):
        item: dict[str, Any] = {"type": "reasoning"}
        if block.item_id is not None:
            item["id"] = block.item_id
        item["summary"] = [{"type": "summary_text", "text": block.text}] if block.text else []
        if block.encrypted_content is not None:
            item["encrypted_content"] = block.encrypted_content
        return [item]
    if isinstance(block, ToolCallBlock):
        call = {"type": "function_call", "call_id": block.id, "name": block.name}
        if block.item_id is not None:
            call["id"] = block.item_id
        return [{**call, "arguments": block.arguments}]
    if isinstance(block, TextBlock) and block.text:
        part = {"type": "output_text", "text": block.text}
        return [{"type": "message", "role": "assistant", "content": [part]}]
    return []
