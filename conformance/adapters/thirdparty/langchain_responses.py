"""langchain-openai over the Responses API: ``ChatOpenAI(use_responses_api=True)
.bind_tools(...).stream(...)``, chunks added up with ``+``.

The chunks' content blocks are the caller's answer (``output_version`` "responses/v1", the
default): text blocks, reasoning blocks (summary, ``id``, the ``encrypted_content`` an item's
``done`` carried) and calls from ``tool_call_chunks`` (the item's ``call_id`` as id, raw
argument strings). Its rules, in the pinned ``chat_models/base.py``
``_convert_responses_chunk_to_generation_chunk``: blocks are built from the deltas, and the
terminal event contributes only metadata and usage (5531-5549), so its ``output`` is never
read; ``response.failed`` and an ``error`` event raise ``ValueError`` (5524-5530);
``response.incomplete`` is the last chunk like ``response.completed``, its ``status`` and
``incomplete_details`` in ``response_metadata``. The turn ends as that metadata says.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from langchain_openai import ChatOpenAI

from ...events import Block, ReasoningBlock, RunCase, TextBlock, ToolCallBlock
from ...options import RunOptions
from .common import SyncShim, call_text, hello, model_name, native_policy, native_retry, sdk_retries
from .langchain import langchain_usage
from .responses import DIALECTS, ResponseTurn, optional_text
from .retry_policies import openai_sdk


class LangchainResponsesShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        # ChatOpenAI.max_retries is None by default and then not passed to the openai client:
        # the client's default runs (see .langchain).
        self.hello = hello(
            "langchain-openai ChatOpenAI(use_responses_api=True)",
            metadata.version("langchain-openai"),
            reasoning=True,
            retry_policy=native_policy(options, openai_sdk()),
            dialects=DIALECTS,
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> ResponseTurn:
        tools = case.request.get("tools")
        model = ChatOpenAI(
            model=model_name(case),
            base_url=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            use_responses_api=True,
            **sdk_retries(self.native_retry),
        ).bind_tools(list(tools) if isinstance(tools, list) else [])
        total: Any = None
        for chunk in model.stream(_input(case)):
            total = chunk if total is None else total + chunk
        return _turn(total) if total is not None else ResponseTurn()


def _input(case: RunCase) -> list[Any]:
    items = case.request.get("input")
    return list(items) if isinstance(items, list) else []


def _turn(message: Any) -> ResponseTurn:
    blocks: list[Block] = []
    content = message.content if isinstance(message.content, list) else [message.content]
    calls = iter(message.tool_call_chunks)
    for part in content:
        if isinstance(part, str) and part:
            blocks.append(TextBlock(text=part))
        elif not isinstance(part, dict):
            continue
        elif part.get("type") == "text" and part.get("text"):
            blocks.append(TextBlock(text=str(part["text"])))
        elif part.get("type") == "reasoning":
            blocks.append(
                ReasoningBlock(
                    text="".join(str(s.get("text", "")) for s in part.get("summary") or ()),
                    encrypted_content=optional_text(part.get("encrypted_content")),
                    item_id=optional_text(part.get("id")),
                )
            )
        elif part.get("type") == "function_call":
            # the call's tool_call_chunk, merged by the same index: its call_id and raw args
            call: dict[str, Any] = next(calls, {})
            blocks.append(
                ToolCallBlock(
                    id=call_text(call.get("id")),
                    name=call_text(call.get("name")),
                    arguments=call_text(call.get("args")),
                    item_id=optional_text(part.get("id")),
                )
            )
    meta = message.response_metadata
    details = meta.get("incomplete_details") or {}
    return ResponseTurn(
        blocks=blocks,
        usage=langchain_usage(message.usage_metadata),
        status=meta.get("status"),
        incomplete_reason=details.get("reason") if isinstance(details, dict) else None,
        refused=any(isinstance(p, dict) and p.get("type") == "refusal" for p in content),
    )


def factory(options: RunOptions) -> LangchainResponsesShim:
    return LangchainResponsesShim(options)
