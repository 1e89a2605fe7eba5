"""openai-python's own accumulator: ``chat.completions.create(stream=True)`` chunks fed to
``ChatCompletionStreamState``, read from ``current_completion_snapshot``.

The snapshot, not ``get_final_completion()``, which raises on length and content_filter
(real-adapters.md §3.1). Reasoning is whatever the SDK kept of ``reasoning_content`` (or
``reasoning``) in the message's extra fields.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.lib.streaming.chat import ChatCompletionStreamState

from ...events import RunCase
from ...options import RunOptions
from .common import (
    Assembled,
    AssembledCall,
    SyncShim,
    first_text,
    hello,
    integer,
    native_policy,
    native_retry,
    sdk_retries,
    usage_event,
)
from .retry_policies import openai_sdk


class OpenAIStateShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        self.hello = hello(
            "openai-python ChatCompletionStreamState",
            openai.__version__,
            reasoning=True,
            retry_policy=native_policy(options, openai_sdk()),  # the client's default
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> Assembled:
        client = openai.OpenAI(
            base_url=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            **sdk_retries(self.native_retry),
        )
        with client:
            state = ChatCompletionStreamState()
            received = 0
            for chunk in client.chat.completions.create(**case.request):
                state.handle_chunk(chunk)
                received += 1
            if not received:
                return Assembled()
            return _assembled(state.current_completion_snapshot)


def _assembled(snapshot: Any) -> Assembled:
    usage = snapshot.usage
    if not snapshot.choices:
        return Assembled(usage=_usage(usage))
    choice = snapshot.choices[0]
    message = choice.message
    extra = message.model_extra or {}
    calls = [
        AssembledCall(call.id, call.function.name, call.function.arguments)
        for call in message.tool_calls or ()
    ]
    return Assembled(
        text=message.content,
        reasoning=first_text([extra.get("reasoning_content"), extra.get("reasoning")]),
        tool_calls=calls,
        usage=_usage(usage),
        finish_reason=choice.finish_reason,
    )


def _usage(usage: Any) -> Any:
    if usage is None:
        return None
    prompt_details = usage.prompt_tokens_details
    completion_details = usage.completion_tokens_details
    return usage_event(
        integer(usage.prompt_tokens),
        integer(usage.completion_tokens),
        integer(prompt_details.cached_tokens) if prompt_details else None,
        integer(completion_details.reasoning_tokens) if completion_details else None,
    )


def factory(options: RunOptions) -> OpenAIStateShim:
    return OpenAIStateShim(options)
