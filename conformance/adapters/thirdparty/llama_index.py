"""llama-index-llms-openai: ``OpenAI.stream_chat_with_tools``, the last ``ChatResponse`` kept.

Tool calls are the raw ``ChoiceDeltaToolCall`` objects llama-index accumulates in
``additional_kwargs["tool_calls"]`` (not ``get_tool_calls_from_response``, which parses
partial JSON); the finish is the last non-null finish_reason of the raw chunks
(real-adapters.md §3.5). The model name must be one llama-index knows.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ThinkingBlock
from llama_index.core.tools import FunctionTool, ToolMetadata
from llama_index.llms.openai import OpenAI
from pydantic import create_model

from ...events import RunCase
from ...options import RunOptions
from .common import (
    Assembled,
    AssembledCall,
    SyncShim,
    ToolSpec,
    first_text,
    hello,
    integer,
    native_policy,
    native_retry,
    never_called,
    sdk_retries,
    tool_specs,
    usage_event,
    user_messages,
)
from .retry_policies import openai_sdk

KNOWN_MODEL = "gpt-4o-mini"  # llama-index looks up the context window by model name
# OpenAI.max_retries defaults to 3 and is handed to the openai client
# (llama_index/llms/openai/base.py: the field, and _get_credential_kwargs). Its tenacity
# llm_retry_decorator wraps _stream_chat, which only returns a lazy generator: an error
# raised while streaming never reaches it, so the client's loop is the one that runs.
LLAMA_INDEX_MAX_RETRIES = 3


class LlamaIndexShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        version = metadata.version("llama-index-llms-openai")
        self.hello = hello(
            "llama-index-llms-openai OpenAI",
            version,
            reasoning=True,
            retry_policy=native_policy(options, openai_sdk(LLAMA_INDEX_MAX_RETRIES)),
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> Assembled:
        llm = OpenAI(
            model=KNOWN_MODEL,
            api_base=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            additional_kwargs={"stream_options": case.request.get("stream_options")},
            **sdk_retries(self.native_retry),
        )
        history = [
            ChatMessage(role=m["role"], content=m.get("content")) for m in user_messages(case)
        ]
        last: Any = None
        finish: str | None = None
        for response in llm.stream_chat_with_tools(
            [_tool(spec) for spec in tool_specs(case)], chat_history=history
        ):
            last = response
            choices = getattr(response.raw, "choices", None) or ()
            reason = choices[0].finish_reason if choices else None
            finish = reason or finish
        if last is None:
            return Assembled()
        return _assembled(last, finish)


def _tool(spec: ToolSpec) -> FunctionTool:
    """A tool with the request's name, description and parameters; it is never called."""
    required = set(spec.required)
    fields: dict[str, Any] = {
        name: (str if schema.get("type") == "string" else Any, ... if name in required else None)
        for name, schema in spec.properties.items()
    }
    metadata = ToolMetadata(
        name=spec.name,
        description=spec.description,
        fn_schema=create_model(spec.name, **fields),
    )
    return FunctionTool(fn=never_called, metadata=metadata)


def _assembled(response: Any, finish: str | None) -> Assembled:
    message = response.message
    thinking = [b.content for b in message.blocks if isinstance(b, ThinkingBlock) and b.content]
    calls = [
        AssembledCall(call.id, call.function.name, call.function.arguments)
        for call in message.additional_kwargs.get("tool_calls") or ()
    ]
    usage = response.additional_kwargs
    return Assembled(
        text=message.content,
        reasoning=first_text(["".join(thinking)]),
        tool_calls=calls,
        usage=usage_event(
            integer(usage.get("prompt_tokens")), integer(usage.get("completion_tokens")), None, None
        ),
        finish_reason=finish,
    )


def factory(options: RunOptions) -> LlamaIndexShim:
    return LlamaIndexShim(options)
