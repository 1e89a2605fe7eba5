"""Shims that drive real third-party libraries through the adapter protocol.

Each shim module imports its library at import time, so nothing here imports them: the
registry below names each shim, the library that must be importable for it to run and the
distributions whose versions the compatibility matrix records. A shim runs in the tox
environment of its extra (``tox -e shim-openai``), never in the main test suite. The
JavaScript libraries' shims are programs in ``shims/js/`` (:mod:`.node`, ``tox -e shim-js``).
An Anthropic Messages client's shim declares ``dialects: ["anthropic-messages"]`` (protocol
1.1) and builds on :mod:`.messages`, an OpenAI Responses client's ``["openai-responses"]`` on
:mod:`.responses`; ``conformance matrix column`` runs each shim over the
cases of the dialects it declares.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from importlib import metadata

from ...options import RunOptions
from ..base import PythonAdapterSession, load_python_adapter
from .node import NodeShim as NodeShim


@dataclass(frozen=True)
class Shim:
    name: str  # the matrix column, e.g. "litellm-hosted-vllm"
    title: str  # what the column drives
    module: str  # the shim module, under conformance.adapters.thirdparty
    factory: str  # its factory function
    library: str  # the import name that must be present
    distributions: tuple[str, ...]  # whose versions the matrix records
    extra: str  # the pyproject extra (and tox environment shim-<extra>)

    @property
    def target(self) -> str:
        """The ``--adapter`` value that loads this shim."""
        return f"conformance.adapters.thirdparty.{self.module}:{self.factory}"

    @property
    def installed(self) -> bool:
        return importlib.util.find_spec(self.library) is not None

    @property
    def setup(self) -> str:
        """How to install what the shim needs."""
        return f"pip install '.[{self.extra}]' (or tox -e shim-{self.extra})"

    def versions(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for distribution in self.distributions:
            try:
                found[distribution] = metadata.version(distribution)
            except metadata.PackageNotFoundError:
                continue
        return found

    def invocation(self, options: RunOptions) -> str:
        """The ``conformance run`` words that select this shim (for reproducers)."""
        return f"--adapter {self.target}"

    async def open(self, options: RunOptions) -> PythonAdapterSession:
        """A session on the shim; raises AdapterLoadError."""
        return load_python_adapter(self.target, options)


SHIMS: dict[str, Shim | NodeShim] = {
    shim.name: shim
    for shim in (
        Shim(
            "openai",
            "openai-python ChatCompletionStreamState",
            "openai_state",
            "factory",
            "openai",
            ("openai",),
            "openai",
        ),
        Shim(
            "langchain",
            "langchain-openai ChatOpenAI.stream, chunks added up",
            "langchain",
            "factory",
            "langchain_openai",
            ("langchain-openai", "langchain-core", "openai"),
            "langchain",
        ),
        Shim(
            "litellm-openai",
            "litellm.completion openai/ route + stream_chunk_builder",
            "litellm",
            "openai_route",
            "litellm",
            ("litellm", "openai"),
            "litellm",
        ),
        Shim(
            "litellm-hosted-vllm",
            "litellm.completion hosted_vllm/ route (own SSE parser) + stream_chunk_builder",
            "litellm",
            "hosted_vllm_route",
            "litellm",
            ("litellm",),
            "litellm",
        ),
        Shim(
            "pydantic-ai",
            "pydantic-ai OpenAIChatModel.request_stream",
            "pydantic_ai",
            "factory",
            "pydantic_ai",
            ("pydantic-ai-slim", "openai"),
            "pydantic-ai",
        ),
        Shim(
            "llama-index",
            "llama-index-llms-openai OpenAI.stream_chat_with_tools",
            "llama_index",
            "factory",
            "llama_index.llms.openai",
            ("llama-index-llms-openai", "llama-index-core", "openai"),
            "llama-index",
        ),
        Shim(
            "openai-agents",
            "openai-agents OpenAIChatCompletionsModel.stream_response",
            "openai_agents",
            "factory",
            "agents",
            ("openai-agents", "openai"),
            "openai-agents",
        ),
        Shim(
            "autogen-ext",
            "autogen-ext OpenAIChatCompletionClient.create_stream",
            "autogen_ext",
            "factory",
            "autogen_ext.models.openai",
            ("autogen-ext", "autogen-core", "openai"),
            "autogen-ext",
        ),
        Shim(
            "haystack",
            "haystack-ai OpenAIChatGenerator with a streaming_callback",
            "haystack",
            "factory",
            "haystack",
            ("haystack-ai", "openai"),
            "haystack",
        ),
        Shim(
            "smolagents",
            "smolagents OpenAIServerModel.generate_stream + agglomerate_stream_deltas",
            "smolagents",
            "factory",
            "smolagents",
            ("smolagents", "openai"),
            "smolagents",
        ),
        Shim(
            "mirascope",
            "mirascope OpenAI completions provider stream",
            "mirascope",
            "factory",
            "mirascope",
            ("mirascope", "openai"),
            "mirascope",
        ),
        # Anthropic Messages clients (hello.dialects: anthropic-messages).
        Shim(
            "anthropic",
            "anthropic-python messages.stream + get_final_message",
            "anthropic_sdk",
            "factory",
            "anthropic",
            ("anthropic",),
            "anthropic",
        ),
        Shim(
            "langchain-anthropic",
            "langchain-anthropic ChatAnthropic.stream, chunks added up",
            "langchain_anthropic",
            "factory",
            "langchain_anthropic",
            ("langchain-anthropic", "langchain-core", "anthropic"),
            "langchain-anthropic",
        ),
        Shim(
            "litellm-anthropic",
            "litellm.completion anthropic/ route (OpenAI-shaped chunks) + stream_chunk_builder",
            "litellm",
            "anthropic_route",
            "litellm",
            ("litellm",),
            "litellm",
        ),
        Shim(
            "pydantic-ai-anthropic",
            "pydantic-ai AnthropicModel.request_stream",
            "pydantic_ai_anthropic",
            "factory",
            "pydantic_ai",
            ("pydantic-ai-slim", "anthropic"),
            "pydantic-ai",
        ),
        # OpenAI Responses clients (hello.dialects: openai-responses).
        Shim(
            "openai-responses",
            "openai-python responses.stream + get_final_response",
            "openai_responses",
            "factory",
            "openai",
            ("openai",),
            "openai",
        ),
        Shim(
            "openai-agents-responses",
            "openai-agents OpenAIResponsesModel, one Runner.run_streamed turn",
            "openai_agents_responses",
            "factory",
            "agents",
            ("openai-agents", "openai"),
            "openai-agents",
        ),
        Shim(
            "langchain-responses",
            "langchain-openai ChatOpenAI(use_responses_api=True).stream, chunks added up",
            "langchain_responses",
            "factory",
            "langchain_openai",
            ("langchain-openai", "langchain-core", "openai"),
            "langchain",
        ),
        # JavaScript libraries: one npm package, shims/js/, one entry point each.
        NodeShim(
            "openai-node",
            "openai-node chat.completions.stream + finalChatCompletion",
            "openai-node.js",
            ("openai",),
        ),
        NodeShim(
            "vercel-ai",
            "AI SDK streamText over @ai-sdk/openai-compatible, fullStream parts",
            "vercel-ai.js",
            ("ai", "@ai-sdk/openai-compatible"),
        ),
        NodeShim(
            "langchain-js",
            "@langchain/openai ChatOpenAI.stream, chunks concatenated",
            "langchain-js.js",
            ("@langchain/openai", "@langchain/core", "openai"),
        ),
        NodeShim(
            "anthropic-node",
            "@anthropic-ai/sdk messages.stream + finalMessage",
            "anthropic-node.js",
            ("@anthropic-ai/sdk",),
        ),
        NodeShim(
            "vercel-ai-anthropic",
            "AI SDK streamText over @ai-sdk/anthropic, fullStream parts",
            "vercel-ai-anthropic.js",
            ("ai", "@ai-sdk/anthropic"),
        ),
        NodeShim(
            "langchain-js-anthropic",
            "@langchain/anthropic ChatAnthropic.stream, chunks concatenated",
            "langchain-js-anthropic.js",
            ("@langchain/anthropic", "@langchain/core"),
        ),
        NodeShim(
            "openai-node-responses",
            "openai-node responses.stream + finalResponse",
            "openai-node-responses.js",
            ("openai",),
        ),
        NodeShim(
            "vercel-ai-responses",
            "AI SDK streamText over @ai-sdk/openai's Responses model, fullStream parts",
            "vercel-ai-responses.js",
            ("ai", "@ai-sdk/openai"),
        ),
        NodeShim(
            "openai-agents-js-responses",
            "@openai/agents OpenAIResponsesModel, one run(..., { stream: true }) turn",
            "openai-agents-js-responses.js",
            ("@openai/agents", "@openai/agents-openai", "openai"),
        ),
    )
}
