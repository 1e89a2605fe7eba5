"""pydantic-ai: ``OpenAIChatModel.request_stream`` driven to the end, then ``get()``.

The finish is the raw ``provider_details["finish_reason"]``: ``ModelResponse.finish_reason``
is synthesised ``stop`` when the wire sent none. Usage is omitted when pydantic-ai marks
the request unmeasured (the provider sent none; its numbers are zeros). Arguments are the
raw string a ``ToolCallPart`` keeps (real-adapters.md §3.4).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from openai import AsyncOpenAI
from pydantic_ai.messages import ModelRequest, TextPart, ThinkingPart, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.tools import ToolDefinition

from ...events import RunCase
from ...options import RunOptions
from .common import (
    Assembled,
    AssembledCall,
    AsyncShim,
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


class PydanticAIShim(AsyncShim):
    def __init__(self, options: RunOptions) -> None:
        version = metadata.version("pydantic-ai-slim")
        # The openai client below runs its default loop: pydantic-ai copies it with another
        # max_retries only when ModelSettings sets one (pydantic_ai/models/_sdk_retries.py,
        # with_max_retries), which the shim does not.
        self.hello = hello(
            "pydantic-ai OpenAIChatModel",
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
            model = OpenAIChatModel(model_name(case), provider=OpenAIProvider(openai_client=client))
            parameters = ModelRequestParameters(
                function_tools=[_tool(schema) for schema in tool_schemas(case)],
                allow_text_output=True,
            )
            prompt = " ".join(str(m.get("content", "")) for m in user_messages(case))
            request = ModelRequest(parts=[UserPromptPart(content=prompt)])
            async with model.request_stream([request], None, parameters) as streamed:
                async for _ in streamed:
                    pass
                return _assembled(streamed.get())


def _tool(schema: dict[str, Any]) -> ToolDefinition:
    function = schema["function"]
    return ToolDefinition(
        name=function["name"],
        description=function.get("description"),
        parameters_json_schema=function.get("parameters", {}),
    )


def _assembled(response: Any) -> Assembled:
    texts = [part.content for part in response.parts if isinstance(part, TextPart)]
    thoughts = [part.content for part in response.parts if isinstance(part, ThinkingPart)]
    # A ToolCallPart keeps the streamed string; a dict (pydantic-ai parsed it) is reported
    # as its JSON text, like any non-text value a library hands over (common.Assembled).
    calls = [
        AssembledCall(part.tool_call_id, part.tool_name, part.args)
        for part in response.parts
        if isinstance(part, ToolCallPart)
    ]
    details = response.provider_details or {}
    return Assembled(
        text="".join(texts) or None,
        reasoning="".join(thoughts) or None,
        tool_calls=calls,
        usage=measured_usage(response.usage),
        finish_reason=details.get("finish_reason"),
    )


def measured_usage(usage: Any) -> Any:
    """pydantic-ai's usage, its ``input_tokens`` including the cache reads and writes it
    counts; none when it marks the request unmeasured (the provider sent no usage)."""
    if usage is None or usage.unmeasured_requests:
        return None
    reasoning = (usage.details or {}).get("reasoning_tokens")
    return usage_event(
        integer(usage.input_tokens),
        integer(usage.output_tokens),
        integer(usage.cache_read_tokens) if usage.cache_read_tokens else None,
        integer(reasoning),
        integer(usage.cache_write_tokens) if usage.cache_write_tokens else None,
    )


def factory(options: RunOptions) -> PydanticAIShim:
    return PydanticAIShim(options)
