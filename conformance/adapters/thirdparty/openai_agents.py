"""openai-agents: ``OpenAIChatCompletionsModel.stream_response`` to its ``response.completed``.

The model layer an ``Agent`` runs on, over the chat-completions wire: the stream is turned
into a Responses-shaped ``Response`` whose output items are read here (real-adapters.md
§3.9). A refusal part is not text (as in the openai shim). The Response carries no finish
reason, so the finish is the one its Runner acts on (:func:`.common.implied_finish`).
Tracing is switched off: it would export spans to OpenAI.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from agents import FunctionTool, ModelSettings, set_tracing_disabled
from agents.models.interface import ModelTracing
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from openai import AsyncOpenAI

from ...events import RunCase
from ...options import RunOptions
from .common import (
    Assembled,
    AssembledCall,
    AsyncShim,
    ToolSpec,
    first_text,
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

COMPLETED = "response.completed"


class OpenAIAgentsShim(AsyncShim):
    def __init__(self, options: RunOptions) -> None:
        set_tracing_disabled(True)
        version = metadata.version("openai-agents")
        # The shim's AsyncOpenAI runs openai-python's loop; the runner's own retries
        # (ModelSettings.retry, agents/retry.py) are opt-in, off by default.
        self.hello = hello(
            "openai-agents OpenAIChatCompletionsModel",
            version,
            reasoning=True,
            retry_policy=native_policy(options, openai_sdk()),
        )
        self.native_retry = native_retry(options)

    async def assemble(self, case: RunCase) -> Assembled:
        client = AsyncOpenAI(
            base_url=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            **sdk_retries(self.native_retry),
        )
        async with client:
            model = OpenAIChatCompletionsModel(model_name(case), openai_client=client)
            completed: Any = None
            async for event in model.stream_response(
                system_instructions=None,
                input=user_messages(case),  # chat messages are valid input items
                model_settings=ModelSettings(include_usage=True),
                tools=[_tool(spec) for spec in tool_specs(case)],
                output_schema=None,
                handoffs=[],
                tracing=ModelTracing.DISABLED,
            ):
                if event.type == COMPLETED:
                    completed = event.response
            return Assembled() if completed is None else _assembled(completed)


def _tool(spec: ToolSpec) -> FunctionTool:
    """The request's tool as sent (non-strict: the SDK would rewrite a strict schema)."""
    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=spec.parameters,
        on_invoke_tool=_never_invoked,
        strict_json_schema=False,
    )


async def _never_invoked(_context: Any, _arguments: str) -> Any:
    return never_called()


def _assembled(response: Any) -> Assembled:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[AssembledCall] = []
    for item in response.output:
        if item.type == "message":
            texts += [part.text for part in item.content if part.type == "output_text"]
        elif item.type == "reasoning":
            summary = "".join(part.text for part in item.summary)
            content = "".join(part.text for part in item.content or ())
            thoughts.append(first_text([summary, content]) or "")
        elif item.type == "function_call":
            calls.append(AssembledCall(item.call_id, item.name, item.arguments))
    return Assembled(
        text="".join(texts) or None,
        reasoning="".join(thoughts) or None,
        tool_calls=calls,
        usage=_usage(response.usage),
        finish_reason=implied_finish(calls),
    )


def _usage(usage: Any) -> Any:
    """The Responses usage the SDK built from the provider's (None when none was sent)."""
    if usage is None:
        return None
    input_details, output_details = usage.input_tokens_details, usage.output_tokens_details
    return usage_event(
        integer(usage.input_tokens),
        integer(usage.output_tokens),
        integer(input_details.cached_tokens) if input_details else None,
        integer(output_details.reasoning_tokens) if output_details else None,
    )


def factory(options: RunOptions) -> OpenAIAgentsShim:
    return OpenAIAgentsShim(options)
