"""langchain-openai: ``ChatOpenAI(...).bind_tools(...).stream(...)``, chunks added up with ``+``.

Tool calls are read from ``tool_call_chunks`` (raw argument strings), not ``tool_calls``,
which langchain parses with ``parse_partial_json`` (real-adapters.md §3.2). ChatOpenAI
does not read ``reasoning_content``, so the handshake says ``reasoning: false``.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from langchain_openai import ChatOpenAI

from ...events import RunCase
from ...options import RunOptions
from .common import (
    Assembled,
    AssembledCall,
    SyncShim,
    hello,
    integer,
    model_name,
    native_policy,
    native_retry,
    sdk_retries,
    tool_schemas,
    usage_event,
    user_messages,
)
from .retry_policies import openai_sdk


class LangchainShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        # ChatOpenAI.max_retries is None by default and then not passed to the openai client
        # (langchain_openai/chat_models/base.py: the field, and `if self.max_retries is not
        # None: client_params["max_retries"] = ...`): the client's default runs.
        self.hello = hello(
            "langchain-openai ChatOpenAI",
            metadata.version("langchain-openai"),
            reasoning=False,
            retry_policy=native_policy(options, openai_sdk()),
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> Assembled:
        model = ChatOpenAI(
            model=model_name(case),
            base_url=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            stream_usage=True,
            **sdk_retries(self.native_retry),
        ).bind_tools(tool_schemas(case))
        total: Any = None
        for chunk in model.stream(user_messages(case)):
            total = chunk if total is None else total + chunk
        return _assembled(total) if total is not None else Assembled()


def _assembled(message: Any) -> Assembled:
    content = message.content
    if isinstance(content, list):  # content blocks: keep the text ones, in order
        content = "".join(
            part if isinstance(part, str) else str(part.get("text", ""))
            for part in content
            if isinstance(part, str) or (isinstance(part, dict) and part.get("type") == "text")
        )
    calls = [
        AssembledCall(chunk.get("id"), chunk.get("name"), chunk.get("args"))
        for chunk in message.tool_call_chunks
    ]
    return Assembled(
        text=content or None,
        tool_calls=calls,
        usage=langchain_usage(message.usage_metadata),
        finish_reason=message.response_metadata.get("finish_reason"),
    )


def langchain_usage(usage: Any) -> Any:
    """Protocol usage from a message's ``usage_metadata`` (None when it has none)."""
    if not usage:
        return None
    cached = (usage.get("input_token_details") or {}).get("cache_read")
    reasoning = (usage.get("output_token_details") or {}).get("reasoning")
    return usage_event(
        integer(usage.get("input_tokens")),
        integer(usage.get("output_tokens")),
        integer(cached),
        integer(reasoning),
    )


def factory(options: RunOptions) -> LangchainShim:
    return LangchainShim(options)
