"""autogen-ext: ``OpenAIChatCompletionClient.create_stream``, its closing ``CreateResult``.

The result's ``content`` is the text or the list of ``FunctionCall``s; ``thought`` is the
reasoning beside a text answer, and the *text* beside tool calls (autogen keeps no
reasoning there): read as the library defines it (real-adapters.md §3.8). Usage is what
the result holds: autogen reports 0/0 when the provider sent none, and the caller cannot
tell the difference. The finish is autogen's own vocabulary mapped back to the wire's;
its ``unknown`` (no finish it kept) is reported as it is, an error finish.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from autogen_core.models import CreateResult, ModelInfo, UserMessage
from autogen_core.tools import ToolSchema
from autogen_ext.models.openai import OpenAIChatCompletionClient

from ...events import RunCase
from ...options import RunOptions
from .common import (
    Assembled,
    AssembledCall,
    AsyncShim,
    ToolSpec,
    hello,
    integer,
    model_name,
    native_policy,
    native_retry,
    sdk_retries,
    tool_specs,
    usage_event,
    user_messages,
)
from .retry_policies import openai_sdk

# What autogen must be told about a model it does not know by name.
MODEL_INFO = ModelInfo(
    vision=False,
    function_calling=True,
    json_output=False,
    family="unknown",
    structured_output=False,
)
_WIRE_FINISH = {"function_calls": "tool_calls"}  # autogen's name → the wire's


class AutogenShim(AsyncShim):
    def __init__(self, options: RunOptions) -> None:
        version = metadata.version("autogen-ext")
        # OpenAIChatCompletionClient hands its max_retries (none by default) to AsyncOpenAI
        # (autogen_ext/models/openai/_openai_client.py, _openai_client_from_config) and has
        # no retry layer of its own: openai-python's loop.
        self.hello = hello(
            "autogen-ext OpenAIChatCompletionClient",
            version,
            reasoning=True,
            retry_policy=native_policy(options, openai_sdk()),
        )
        self.native_retry = native_retry(options)

    async def assemble(self, case: RunCase) -> Assembled:
        client = OpenAIChatCompletionClient(
            model=model_name(case),
            base_url=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            model_info=MODEL_INFO,
            **sdk_retries(self.native_retry),
        )
        try:
            messages = [
                UserMessage(content=str(m.get("content", "")), source="user")
                for m in user_messages(case)
            ]
            result: CreateResult | None = None
            async for item in client.create_stream(
                messages,
                tools=[_tool(spec) for spec in tool_specs(case)],
                include_usage=True,
            ):
                if isinstance(item, CreateResult):
                    result = item
            return Assembled() if result is None else _assembled(result)
        finally:
            await client.close()


def _tool(spec: ToolSpec) -> ToolSchema:
    return ToolSchema(
        name=spec.name,
        description=spec.description,
        parameters={"type": "object", "properties": spec.properties, "required": spec.required},
    )


def _assembled(result: CreateResult) -> Assembled:
    content: Any = result.content
    if isinstance(content, str):
        text, reasoning, calls = content, result.thought, []
    else:  # tool calls: `thought` is the text streamed beside them
        text, reasoning = result.thought, None
        calls = [AssembledCall(call.id, call.name, call.arguments) for call in content]
    return Assembled(
        text=text or None,
        reasoning=reasoning or None,
        tool_calls=calls,
        usage=usage_event(
            integer(result.usage.prompt_tokens), integer(result.usage.completion_tokens), None, None
        ),
        finish_reason=_WIRE_FINISH.get(result.finish_reason, result.finish_reason),
    )


def factory(options: RunOptions) -> AutogenShim:
    return AutogenShim(options)
