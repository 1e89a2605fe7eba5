"""mirascope: its OpenAI chat-completions provider's ``stream``, consumed with ``finish()``.

What ``llm.Model("openai/…:completions").stream(...)`` runs, on a provider built with the
case's base URL. The ``StreamResponse`` holds texts (a refusal is folded into them), the
tool calls its chunk processor closed, summed usage and a ``finish_reason`` that is set
only for an abnormal end (real-adapters.md §3.10): ``None`` is a normal end, reported as
the finish its caller acts on (:func:`.common.implied_finish`). The completions decoder
reads no reasoning field (``reasoning: false``). mirascope builds its own openai client
with the SDK's defaults; the shim derives the case's client from it (``with_options``).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from mirascope import llm
from mirascope.llm.providers.openai import OpenAICompletionsProvider
from mirascope.llm.tools import Tool, Toolkit, ToolParameterSchema

from ...events import RunCase
from ...options import RunOptions
from .common import (
    Assembled,
    AssembledCall,
    SyncShim,
    ToolSpec,
    hello,
    implied_finish,
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

# mirascope's FinishReason (set only for an abnormal end) → the wire's finish_reason.
_WIRE_FINISH = {"max_tokens": "length", "refusal": "content_filter"}


class MirascopeShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        # The provider's OpenAI client keeps the SDK's defaults (mirascope/llm/providers/
        # openai/completions/base_provider.py); mirascope's own llm.retries wrap a call only
        # when asked to.
        self.hello = hello(
            "mirascope OpenAICompletionsProvider",
            metadata.version("mirascope"),
            reasoning=False,
            retry_policy=native_policy(options, openai_sdk()),
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> Assembled:
        provider = OpenAICompletionsProvider(api_key=case.api_key, base_url=case.base_url)
        provider.client = provider.client.with_options(
            timeout=case.idle_timeout_s, **sdk_retries(self.native_retry)
        )
        response = provider.stream(
            model_id=f"openai/{model_name(case)}",
            messages=[llm.messages.user(str(m.get("content", ""))) for m in user_messages(case)],
            toolkit=Toolkit(tools=[_tool(spec) for spec in tool_specs(case)]),
        )
        response.finish()
        return _assembled(response)


def _tool(spec: ToolSpec) -> Tool[..., Any]:
    parameters = ToolParameterSchema(properties=spec.properties, required=spec.required)
    return Tool(
        fn=never_called,
        name=spec.name,
        description=spec.description,
        parameters=parameters,
        strict=False,
    )


def _assembled(response: Any) -> Assembled:
    calls = [AssembledCall(call.id, call.name, call.args) for call in response.tool_calls]
    finish = response.finish_reason
    return Assembled(
        text="".join(text.text for text in response.texts) or None,
        tool_calls=calls,
        usage=_usage(response.usage),
        finish_reason=implied_finish(calls)
        if finish is None
        else _WIRE_FINISH.get(finish.value, finish.value),
    )


def _usage(usage: Any) -> Any:
    """mirascope's usage counts all input tokens, cached ones included, as the wire does."""
    if usage is None:
        return None
    return usage_event(
        integer(usage.input_tokens),
        integer(usage.output_tokens),
        integer(usage.cache_read_tokens),
        integer(usage.reasoning_tokens),
    )


def factory(options: RunOptions) -> MirascopeShim:
    return MirascopeShim(options)
