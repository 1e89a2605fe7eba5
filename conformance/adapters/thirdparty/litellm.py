"""litellm: ``litellm.completion(stream=True)`` chunks rebuilt by ``stream_chunk_builder``.

Two columns: the ``openai/`` route (openai-python underneath) and ``hosted_vllm/`` (litellm's
own httpx handler and SSE line parser). ``stream_chunk_builder`` estimates usage with a
local tokenizer when the provider sent none, so usage is only reported when some chunk
carried it (real-adapters.md §3.3).
"""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any

import litellm

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
    tool_schemas,
    usage_event,
    user_messages,
)
from .retry_policies import NO_RETRIES, openai_sdk

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import

# The retry layer each route runs by default. openai/: litellm's OpenAI handler hands the
# openai client `max_retries = inference_params.pop("max_retries", 2)`
# (litellm/llms/openai/openai.py), openai-python's default loop. hosted_vllm/: litellm's own
# HTTP handler, which retries only when `num_retries` is set (litellm.num_retries is None,
# litellm/__init__.py; main.py passes it on as max_retries only when given).
NATIVE_POLICIES = {"openai": openai_sdk(), "hosted_vllm": NO_RETRIES}


class LitellmShim(SyncShim):
    def __init__(self, options: RunOptions, route: str) -> None:
        self.hello = hello(
            f"litellm {route}/",
            metadata.version("litellm"),
            reasoning=True,
            retry_policy=native_policy(options, NATIVE_POLICIES[route]),
        )
        self.route = route
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> Assembled:
        retries: dict[str, Any] = {} if self.native_retry else {"max_retries": 0, "num_retries": 0}
        messages = user_messages(case)
        stream = litellm.completion(
            model=f"{self.route}/{model_name(case)}",
            api_base=case.base_url,
            api_key=case.api_key,
            messages=messages,
            tools=tool_schemas(case),
            stream=True,
            stream_options=case.request.get("stream_options"),
            timeout=case.idle_timeout_s,
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
    )


def openai_route(options: RunOptions) -> LitellmShim:
    return LitellmShim(options, "openai")


def hosted_vllm_route(options: RunOptions) -> LitellmShim:
    return LitellmShim(options, "hosted_vllm")
