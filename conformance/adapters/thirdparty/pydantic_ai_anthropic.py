"""pydantic-ai's Anthropic model: ``AnthropicModel.request_stream`` over an
``AnthropicProvider`` whose client points at the case's base URL, driven to the end, then
``get()``.

The parts are what the caller gets, in order: text, thinking (with its signature; a
``redacted_thinking`` block is a ThinkingPart with id ``redacted_thinking`` and the data as
its signature, ``models/anthropic/_streaming.py``), tool calls (the raw string pydantic-ai
kept, or a start's input it parsed), server tools. The stop reason is the raw
``provider_details["finish_reason"]`` (``ModelResponse.finish_reason`` maps it, and is
unset when none came); usage as in the chat shim (:func:`.pydantic_ai.measured_usage`).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from anthropic import AsyncAnthropic
from pydantic_ai.messages import (
    ModelRequest,
    NativeToolCallPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.tools import ToolDefinition

from ...events import Block, RunCase, ServerToolBlock, TextBlock, ToolCallBlock
from ...options import RunOptions
from .common import AsyncShim, call_text, hello, native_policy, native_retry, sdk_retries
from .messages import (
    DIALECTS,
    MessageTurn,
    anthropic_tools,
    max_tokens,
    prompt_text,
    reasoning_block,
    redacted_block,
)
from .pydantic_ai import measured_usage
from .retry_policies import anthropic_sdk

_REDACTED = "redacted_thinking"


class PydanticAIAnthropicShim(AsyncShim):
    def __init__(self, options: RunOptions) -> None:
        # The anthropic client below runs its default loop: pydantic-ai copies it with another
        # max_retries only when ModelSettings sets one (pydantic_ai/models/_sdk_retries.py,
        # with_max_retries), which the shim does not.
        self.hello = hello(
            "pydantic-ai AnthropicModel",
            metadata.version("pydantic-ai-slim"),
            reasoning=True,
            retry_policy=native_policy(options, anthropic_sdk()),
            dialects=DIALECTS,
        )
        self.native_retry = native_retry(options)

    async def assemble(self, case: RunCase) -> MessageTurn:
        client = AsyncAnthropic(
            base_url=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            **sdk_retries(self.native_retry),
        )
        async with client:
            model = AnthropicModel(
                str(case.request.get("model", "claude-fake")),
                provider=AnthropicProvider(anthropic_client=client),
            )
            parameters = ModelRequestParameters(
                function_tools=[
                    ToolDefinition(
                        name=spec.name,
                        description=spec.description,
                        parameters_json_schema=spec.parameters,
                    )
                    for spec in anthropic_tools(case)
                ],
                allow_text_output=True,
            )
            request = ModelRequest(parts=[UserPromptPart(content=prompt_text(case))])
            settings: Any = {"max_tokens": max_tokens(case)}
            async with model.request_stream([request], settings, parameters) as streamed:
                async for _ in streamed:
                    pass
                response = streamed.get()
        return MessageTurn(
            blocks=[block for part in response.parts if (block := _block(part)) is not None],
            usage=measured_usage(response.usage),
            stop_reason=(response.provider_details or {}).get("finish_reason"),
        )


def _block(part: Any) -> Block | None:
    if isinstance(part, TextPart):
        return TextBlock(text=part.content) if part.content else None
    if isinstance(part, ThinkingPart):
        if part.id == _REDACTED:
            return redacted_block(part.signature)
        return reasoning_block(part.content, part.signature)
    if isinstance(part, ToolCallPart | NativeToolCallPart):
        call = ToolCallBlock if isinstance(part, ToolCallPart) else ServerToolBlock
        return call(
            id=call_text(part.tool_call_id),
            name=call_text(part.tool_name),
            arguments=call_text(part.args),
        )
    return None


def factory(options: RunOptions) -> PydanticAIAnthropicShim:
    return PydanticAIAnthropicShim(options)
