"""smolagents: ``OpenAIServerModel.generate_stream`` deltas joined by ``agglomerate_stream_deltas``.

What a streaming ``CodeAgent``/``ToolCallingAgent`` step does with the model's deltas
(real-adapters.md §3.7). The deltas carry content, tool-call fragments and usage only: no
finish reason (the finish is the one an agent acts on, :func:`.common.implied_finish`)
and no reasoning (``reasoning: false``). ``agglomerate_stream_deltas`` sums usage and
reports 0/0 when no delta carried any, so usage is reported only when some delta did
(as for litellm). Retries off means the SDK client's and smolagents' own rate-limit
retryer (3 attempts, 60 s base wait) both off.
"""

from __future__ import annotations

from typing import Any

import smolagents
from smolagents import ChatMessage, MessageRole, OpenAIServerModel, Tool
from smolagents.models import agglomerate_stream_deltas

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


class SmolagentsShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        version = smolagents.__version__
        # Two layers run by default, and a declaration describes one: the SDK client's loop
        # (openai-python's defaults, declared) inside ApiModel's Retrying (smolagents/models.py:
        # RETRY_MAX_ATTEMPTS 3, RETRY_WAIT 60, base 2, jitter), which repeats the whole SDK
        # call, up to 3 requests each time, when the error's text names a 429 or a rate limit,
        # after 120-240 s, then 240-960 s. That outer budget and those waits cannot be
        # declared; within the retry column's 40 s timeout its first wait never ends, so a
        # case sees the SDK's requests only and then times out.
        self.hello = hello(
            "smolagents OpenAIServerModel",
            version,
            reasoning=False,
            retry_policy=native_policy(options, openai_sdk()),
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> Assembled:
        own_retries: dict[str, Any] = {} if self.native_retry else {"retry": False}
        model = OpenAIServerModel(
            model_id=model_name(case),
            api_base=case.base_url,
            api_key=case.api_key,
            client_kwargs={"timeout": case.idle_timeout_s, **sdk_retries(self.native_retry)},
            **own_retries,
        )
        messages = [
            ChatMessage(
                role=MessageRole.USER, content=[{"type": "text", "text": str(m.get("content", ""))}]
            )
            for m in user_messages(case)
        ]
        deltas = list(
            model.generate_stream(
                messages, tools_to_call_from=[_tool(spec) for spec in tool_specs(case)]
            )
        )
        if not deltas:
            return Assembled()
        sent_usage = any(delta.token_usage is not None for delta in deltas)
        return _assembled(agglomerate_stream_deltas(deltas), sent_usage)


def _tool(spec: ToolSpec) -> Tool:
    """A smolagents Tool with the request's name, description and string inputs."""
    attributes = {
        "name": spec.name,
        "description": spec.description,
        "inputs": {
            name: {"type": schema.get("type", "any"), "description": name}
            for name, schema in spec.properties.items()
        },
        "output_type": "string",
        "skip_forward_signature_validation": True,  # forward takes **kwargs: never called
        "forward": never_called,
    }
    tool_class: type[Tool] = type(f"{spec.name}_tool", (Tool,), attributes)
    return tool_class()


def _assembled(message: Any, sent_usage: bool) -> Assembled:
    calls = [
        AssembledCall(call.id, call.function.name, call.function.arguments)
        for call in message.tool_calls or ()
    ]
    usage = message.token_usage if sent_usage else None
    return Assembled(
        text=message.content if isinstance(message.content, str) else None,
        tool_calls=calls,
        usage=None
        if usage is None
        else usage_event(integer(usage.input_tokens), integer(usage.output_tokens), None, None),
        finish_reason=implied_finish(calls),
    )


def factory(options: RunOptions) -> SmolagentsShim:
    return SmolagentsShim(options)
