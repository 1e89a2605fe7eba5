"""haystack-ai: ``OpenAIChatGenerator.run`` with a ``streaming_callback``, its first reply.

haystack assembles the streamed chunks into a ``ChatMessage`` whose tool calls hold
*parsed* arguments (a dict; a call whose arguments are not JSON is dropped with a log
warning), so the arguments reported are that dict serialised again: the raw string is
gone (real-adapters.md §3.6). The generator never reads ``reasoning_content`` or
``reasoning``, so the handshake says ``reasoning: false``. Telemetry is switched off
before haystack is imported (it would post to its own host).
"""

from __future__ import annotations

import json
import os
from importlib import metadata
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack.tools import Tool
from haystack.utils import Secret

from ...events import RunCase
from ...options import RunOptions
from .common import (
    Assembled,
    AssembledCall,
    SyncShim,
    ToolSpec,
    hello,
    integer,
    model_name,
    native_policy,
    native_retry,
    never_called,
    sdk_retries,
    tool_specs,
    usage_event,
    user_messages,
)
from .retry_policies import openai_sdk

# OpenAIChatGenerator hands the openai client `max_retries`, when not given
# `int(os.environ.get("OPENAI_MAX_RETRIES", "5"))` (haystack/components/generators/chat/
# openai.py): openai-python's loop with 5 retries.
HAYSTACK_MAX_RETRIES = 5


class HaystackShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        version = metadata.version("haystack-ai")
        self.hello = hello(
            "haystack-ai OpenAIChatGenerator",
            version,
            reasoning=False,
            retry_policy=native_policy(options, openai_sdk(HAYSTACK_MAX_RETRIES)),
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> Assembled:
        generator = OpenAIChatGenerator(
            api_key=Secret.from_token(case.api_key),
            model=model_name(case),
            api_base_url=case.base_url,
            streaming_callback=_ignore,
            generation_kwargs={"stream_options": case.request.get("stream_options")},
            timeout=case.idle_timeout_s,
            tools=[_tool(spec) for spec in tool_specs(case)],
            **sdk_retries(self.native_retry),
        )
        messages = [ChatMessage.from_user(str(m.get("content", ""))) for m in user_messages(case)]
        replies = generator.run(messages)["replies"]
        return _assembled(replies[0]) if replies else Assembled()


def _ignore(_chunk: StreamingChunk) -> None:
    """The callback that makes the generator stream; the shim reads the assembled reply."""


def _tool(spec: ToolSpec) -> Tool:
    return Tool(
        name=spec.name,
        description=spec.description,
        parameters=spec.parameters,
        function=never_called,
    )


def _assembled(reply: Any) -> Assembled:
    calls = [
        AssembledCall(call.id, call.tool_name, json.dumps(call.arguments))
        for call in reply.tool_calls
    ]
    meta = reply.meta or {}
    return Assembled(
        text=reply.text,
        tool_calls=calls,
        usage=_usage(meta.get("usage")),
        finish_reason=meta.get("finish_reason"),
    )


def _usage(usage: Any) -> Any:
    """haystack keeps the provider's usage object serialised as a dict."""
    if not isinstance(usage, dict):
        return None
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    return usage_event(
        integer(usage.get("prompt_tokens")),
        integer(usage.get("completion_tokens")),
        integer(prompt_details.get("cached_tokens")),
        integer(completion_details.get("reasoning_tokens")),
    )


def factory(options: RunOptions) -> HaystackShim:
    return HaystackShim(options)
