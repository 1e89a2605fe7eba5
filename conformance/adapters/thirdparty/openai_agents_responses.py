"""openai-agents over its default model, ``OpenAIResponsesModel``: one model turn of
``Runner.run_streamed``, read from the turn's ``ModelResponse``.

What an ``Agent``'s caller builds on is the runner's ``ModelResponse``: the output items of
``response.completed`` (``run_internal/run_loop.py:2656-2698``), except that an empty terminal
``output`` is replaced by the items the stream's ``output_item.done`` events carried
(2668-2673); a stream that ends without ``response.completed`` raises ``ModelBehaviorError``
("did not produce a final response", 2704), and so do ``response.incomplete``,
``response.failed`` and an ``error`` event (2659-2666, ``models/_response_terminal.py``). The
agent stops at its first tool call (``tool_use_behavior="stop_on_first_tool"``), so the run is
that one turn: its tools are declared, never run (each returns a fixed text the run ends
with). Tracing is switched off: it would export spans to OpenAI.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from agents import Agent, FunctionTool, Runner, set_tracing_disabled
from agents.models.openai_responses import OpenAIResponsesModel
from openai import AsyncOpenAI

from ...events import RunCase
from ...options import RunOptions
from .common import AsyncShim, hello, model_name, native_policy, native_retry, sdk_retries
from .responses import DIALECTS, ResponseTurn, output_blocks, refused, response_usage
from .retry_policies import openai_sdk

NOT_RUN = "the shim never runs tools"


class OpenAIAgentsResponsesShim(AsyncShim):
    def __init__(self, options: RunOptions) -> None:
        set_tracing_disabled(True)
        # The shim's AsyncOpenAI runs openai-python's loop; the runner's own retries
        # (ModelSettings.retry, agents/retry.py) are opt-in, off by default.
        self.hello = hello(
            "openai-agents OpenAIResponsesModel",
            metadata.version("openai-agents"),
            reasoning=True,
            retry_policy=native_policy(options, openai_sdk()),
            dialects=DIALECTS,
        )
        self.native_retry = native_retry(options)

    async def assemble(self, case: RunCase) -> ResponseTurn:
        client = AsyncOpenAI(
            base_url=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            **sdk_retries(self.native_retry),
        )
        async with client:
            agent: Agent[Any] = Agent(
                name="streamconform",
                model=OpenAIResponsesModel(model_name(case), openai_client=client),
                tools=[_tool(tool) for tool in _function_tools(case)],
                tool_use_behavior="stop_on_first_tool",
            )
            result = Runner.run_streamed(agent, _input(case))
            async for _ in result.stream_events():
                pass
            (turn, *_) = result.raw_responses
            return ResponseTurn(
                blocks=output_blocks(turn.output),
                usage=response_usage(_provider_usage(turn)),
                refused=refused(turn.output),
            )


def _input(case: RunCase) -> list[Any]:
    items = case.request.get("input")
    return list(items) if isinstance(items, list) else []


def _function_tools(case: RunCase) -> list[dict[str, Any]]:
    tools = case.request.get("tools")
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []


def _tool(tool: dict[str, Any]) -> FunctionTool:
    """The request's tool as sent (non-strict: the SDK would rewrite a strict schema)."""
    return FunctionTool(
        name=str(tool["name"]),
        description=str(tool.get("description", "")),
        params_json_schema=dict(tool.get("parameters", {})),
        on_invoke_tool=_not_run,
        strict_json_schema=False,
    )


async def _not_run(_context: Any, _arguments: str) -> str:
    return NOT_RUN


def _provider_usage(turn: Any) -> Any:
    """The provider's usage as the runner kept it: its Usage with the request count it
    adds, read as a Responses usage (None when the provider sent none: zero requests)."""
    usage = turn.usage
    return usage if usage.requests else None


def factory(options: RunOptions) -> OpenAIAgentsResponsesShim:
    return OpenAIAgentsResponsesShim(options)
