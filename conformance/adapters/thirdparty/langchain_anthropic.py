"""langchain-anthropic: ``ChatAnthropic(...).bind_tools(...).stream(...)``, chunks added up
with ``+``.

The merged message's ``content`` blocks give the order and the text, thinking and signature;
a tool call is read from ``tool_call_chunks`` (the raw argument text langchain concatenated:
a start's input as JSON, then every ``partial_json``), not the parsed ``tool_calls``. Usage
is ``usage_metadata``, which langchain builds from each ``message_delta`` alone
(``chat_models.py`` ``_make_message_chunk_from_anthropic_event``, ``message_start``'s counts
are not read) and whose ``input_tokens`` adds the cache counters back
(``_create_usage_metadata``): the shim takes them out again for the protocol's input.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from langchain_anthropic import ChatAnthropic

from ...events import Block, RunCase, TextBlock, ToolCallBlock, Usage
from ...options import RunOptions
from .common import SyncShim, call_text, hello, integer, native_policy, native_retry
from .messages import (
    DIALECTS,
    MessageTurn,
    anthropic_messages,
    content_blocks,
    max_tokens,
    part,
)
from .retry_policies import anthropic_sdk

_EPHEMERAL_WRITES = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")


class LangchainAnthropicShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        # ChatAnthropic.max_retries defaults to 2 and is handed to the anthropic client
        # (chat_models.py: the field, and _client_params "max_retries"): its loop runs.
        self.hello = hello(
            "langchain-anthropic ChatAnthropic",
            metadata.version("langchain-anthropic"),
            reasoning=True,
            retry_policy=native_policy(options, anthropic_sdk()),
            dialects=DIALECTS,
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> MessageTurn:
        retries: dict[str, Any] = {} if self.native_retry else {"max_retries": 0}
        model = ChatAnthropic(
            model_name=str(case.request.get("model", "claude-fake")),
            base_url=case.base_url,
            api_key=case.api_key,
            max_tokens=max_tokens(case),
            default_request_timeout=case.idle_timeout_s,
            **retries,
        )
        tools = case.request.get("tools")
        runnable: Any = model.bind_tools(tools) if isinstance(tools, list) and tools else model
        total: Any = None
        for chunk in runnable.stream(anthropic_messages(case)):
            total = chunk if total is None else total + chunk
        return _turn(total) if total is not None else MessageTurn()


def _turn(message: Any) -> MessageTurn:
    return MessageTurn(
        blocks=_blocks(message.content, message.tool_call_chunks),
        usage=_usage(message.usage_metadata),
        stop_reason=message.response_metadata.get("stop_reason"),
    )


def _blocks(content: Any, call_chunks: list[Any]) -> list[Block]:
    """The merged content in order; a tool_use block's call from its tool_call_chunk."""
    if isinstance(content, str):
        return [TextBlock(text=content)] if content else []
    calls = {chunk.get("index"): chunk for chunk in call_chunks}
    blocks: list[Block] = []
    for item in content:
        if isinstance(item, str):
            blocks += [TextBlock(text=item)] if item else []
        elif part(item, "type") == "tool_use" and part(item, "index") in calls:
            chunk = calls[part(item, "index")]
            blocks.append(
                ToolCallBlock(
                    id=call_text(chunk.get("id")),
                    name=call_text(chunk.get("name")),
                    arguments=call_text(chunk.get("args")),
                )
            )
        else:
            blocks += content_blocks([item])
    return blocks


def _usage(usage: Any) -> Usage | None:
    if not usage:
        return None
    details = usage.get("input_token_details") or {}
    read = integer(details.get("cache_read"))
    ephemeral = [integer(details.get(key)) for key in _EPHEMERAL_WRITES]
    written = sum(n for n in ephemeral if n) or integer(details.get("cache_creation"))
    total, output = integer(usage.get("input_tokens")), integer(usage.get("output_tokens"))
    if total is None or output is None:
        return None
    return Usage(
        input_tokens=total - (read or 0) - (written or 0),
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def factory(options: RunOptions) -> LangchainAnthropicShim:
    return LangchainAnthropicShim(options)
