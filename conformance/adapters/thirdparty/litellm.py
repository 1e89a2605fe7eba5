"""litellm: ``litellm.completion(stream=True)`` chunks rebuilt by ``stream_chunk_builder``.

Three columns: the ``openai/`` route (openai-python underneath), ``hosted_vllm/`` (litellm's
own httpx handler and SSE line parser), and ``anthropic/``, an Anthropic Messages client: its
own handler reads the Anthropic events (``llms/anthropic/chat/handler.py``
``ModelResponseIterator``) and hands its caller OpenAI-shaped chunks, which are what this
column reports, rebuilt the same way. Its run line's ``base_url`` has no ``/v1``: litellm
appends ``v1/messages`` (``main.py`` ``_complete_anthropic``, ``ensure_api_route``).

``stream_chunk_builder`` estimates usage with a local tokenizer when the provider sent none,
so usage is only reported when some chunk carried it (real-adapters.md §3.3).
"""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any

import litellm

from ...events import ProtocolDialect, RunCase
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
    tool_schemas,
    usage_event,
    user_messages,
)
from .messages import DIALECTS, anthropic_messages, max_tokens, openai_tools
from .retry_policies import NO_RETRIES, openai_sdk

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import

# The retry layer each route runs by default. openai/: litellm's OpenAI handler hands the
# openai client `max_retries = inference_params.pop("max_retries", 2)`
# (litellm/llms/openai/openai.py), openai-python's default loop. hosted_vllm/: litellm's own
# HTTP handler, which retries only when `num_retries` is set (litellm.num_retries is None,
# litellm/__init__.py; main.py passes it on as max_retries only when given). anthropic/: the
# same own handler, handed no retry count at all (main.py _complete_anthropic).
NATIVE_POLICIES = {"openai": openai_sdk(), "hosted_vllm": NO_RETRIES, "anthropic": NO_RETRIES}


class LitellmShim(SyncShim):
    dialects: list[ProtocolDialect] | None = None  # chat-completions

    def __init__(self, options: RunOptions, route: str) -> None:
        self.hello = hello(
            f"litellm {route}/",
            metadata.version("litellm"),
            reasoning=True,
            retry_policy=native_policy(options, NATIVE_POLICIES[route]),
            dialects=self.dialects,
        )
        self.route = route
        self.native_retry = native_retry(options)

    def request(self, case: RunCase) -> dict[str, Any]:
        """The completion keywords the run line's request stands for."""
        return {
            "messages": user_messages(case),
            "tools": tool_schemas(case),
            "stream_options": case.request.get("stream_options"),
        }

    def assemble(self, case: RunCase) -> Assembled:
        retries: dict[str, Any] = {} if self.native_retry else {"max_retries": 0, "num_retries": 0}
        request = self.request(case)
        messages = request["messages"]
        stream = litellm.completion(
            model=f"{self.route}/{model_name(case)}",
            api_base=case.base_url,
            api_key=case.api_key,
            stream=True,
            timeout=case.idle_timeout_s,
            **request,
            **retries,
        )
        chunks = list(stream)
        if not chunks:
            return Assembled()
        built = litellm.stream_chunk_builder(chunks, messages=messages)
        sent_usage = any(getattr(chunk, "usage", None) is not None for chunk in chunks)
        return _assembled(built, sent_usage)


def _assembled(response: Any, sent_usage: bool) -> Assembled:
    if response is None or not response.choices:
        return Assembled()
    choice = response.choices[0]
    message = choice.message
    calls = [
        AssembledCall(call.id, call.function.name, call.function.arguments)
        for call in message.tool_calls or ()
    ]
    return Assembled(
        text=message.content,
        reasoning=getattr(message, "reasoning_content", None),
        tool_calls=calls,
        usage=_usage(response.usage) if sent_usage else None,
        finish_reason=choice.finish_reason,
    )


def _usage(usage: Any) -> Any:
    if usage is None:
        return None
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    return usage_event(
        integer(usage.prompt_tokens),
        integer(usage.completion_tokens),
        integer(getattr(prompt_details, "cached_tokens", None)),
        integer(getattr(completion_details, "reasoning_tokens", None)),
        integer(getattr(prompt_details, "cache_write_tokens", None)),
    )


class LitellmAnthropicShim(LitellmShim):
    """The anthropic/ route: an Anthropic body in, the chunks litellm hands its caller out."""

    dialects = DIALECTS

    def request(self, case: RunCase) -> dict[str, Any]:
        # litellm's caller speaks chat-completions: the Anthropic tools as functions, usage
        # asked for as a chat caller asks for it.
        tools = openai_tools(case)
        return {
            "messages": anthropic_messages(case),
            "max_tokens": max_tokens(case),
            "stream_options": {"include_usage": True},
            **({"tools": tools} if tools else {}),
        }


def openai_route(options: RunOptions) -> LitellmShim:
    return LitellmShim(options, "openai")


def hosted_vllm_route(options: RunOptions) -> LitellmShim:
    return LitellmShim(options, "hosted_vllm")


def anthropic_route(options: RunOptions) -> LitellmShim:
    return LitellmAnthropicShim(options, "anthropic")
