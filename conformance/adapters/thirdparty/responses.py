"""What every OpenAI Responses shim shares: the run line's Responses body in, the library's
final response (or the items it handed over) out as protocol events.

A shim of this dialect declares ``dialects: ["openai-responses"]``, takes the run line's
``base_url`` as the openai SDKs take it (``/v1`` included: they append ``/responses``) and
hands :class:`ResponseTurn` the output items, usage and status *as the library reported
them*. Nothing is repaired, as in :mod:`.common`: a call is reported under the ``call_id``
the library kept (its item ``id`` beside it), a reasoning item's ``encrypted_content`` only
when the library kept one, and a library that returned without a status finishes as a
complete answer would (DIALECTS.md's finish mapping: tool calls, else ``stop``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...codes import CONTENT_FILTER, REFUSAL, RESPONSES_ERROR_CODES, SERVER
from ...events import (
    Block,
    Event,
    Finish,
    FinishReason,
    ProtocolDialect,
    ReasoningBlock,
    RunCase,
    TextBlock,
    ToolCallBlock,
    Usage,
)
from .common import block_events, call_text, integer
from .messages import part

DIALECTS: list[ProtocolDialect] = ["openai-responses"]

# incomplete_details.reason → (finish, code); none given reads as the token limit.
_INCOMPLETE: dict[str, tuple[FinishReason, str | None]] = {
    "max_output_tokens": ("max-tokens", None),
    "content_filter": ("error", CONTENT_FILTER),
}


def failure_code(code: object) -> str | None:
    """The canonical code of a Responses error code (None for none): :data:`.errors.
    RESPONSES_ERROR_CODES`, else its own name upper-cased, as a chat finish reason's is."""
    if not isinstance(code, str) or not code:
        return None
    return RESPONSES_ERROR_CODES.get(code, code.upper())


@dataclass
class ResponseTurn:
    """A library's assembled Responses turn: its blocks in order, usage, and how it ended
    (``status`` ``completed``/``incomplete``/``failed`` or None when the library kept none,
    the incomplete reason, the failure's error code); ``refused`` when an output message
    carried a refusal part."""

    blocks: list[Block] = field(default_factory=list)
    usage: Usage | None = None
    status: object = None
    incomplete_reason: object = None
    error_code: object = None
    refused: bool = False

    def events(self) -> Iterator[Event]:
        yield from block_events(self.blocks)
        if self.usage is not None:
            yield self.usage
        yield self.finish()

    def finish(self) -> Finish:
        if self.status == "failed":
            return Finish(reason="error", code=failure_code(self.error_code) or SERVER)
        if self.status == "incomplete":
            reason = self.incomplete_reason
            if not isinstance(reason, str) or not reason:
                reason = "max_output_tokens"
            finish, code = _INCOMPLETE.get(reason, ("error", reason.upper()))
            return Finish(reason=finish, code=code)
        if self.refused:
            return Finish(reason="error", code=REFUSAL)
        if any(isinstance(block, ToolCallBlock) for block in self.blocks):
            return Finish(reason="tool-calls")
        return Finish(reason="stop")


def response_turn(response: object) -> ResponseTurn:
    """The turn of a final Response (an SDK object or a dict): its ``output`` items, usage,
    status, incomplete reason and error code, as the library kept them."""
    details, error = part(response, "incomplete_details"), part(response, "error")
    return ResponseTurn(
        blocks=output_blocks(part(response, "output") or ()),
        usage=response_usage(part(response, "usage")),
        status=part(response, "status"),
        incomplete_reason=part(details, "reason") if details is not None else None,
        error_code=part(error, "code") if error is not None else None,
        refused=refused(part(response, "output") or ()),
    )


def output_blocks(output: Iterable[object]) -> list[Block]:
    """Protocol blocks from a Responses ``output`` list: each message's ``output_text``
    parts as one text, a reasoning item's summary (or its content) with its ``id`` and
    ``encrypted_content``, a function call under its ``call_id`` with its item ``id``. An
    item of a type the protocol has no block for is left out; empty text opens nothing."""
    blocks: list[Block] = []
    for item in output:
        kind = part(item, "type")
        if kind == "message":
            text = "".join(
                str(part(p, "text") or "")
                for p in part(item, "content") or ()
                if part(p, "type") == "output_text"
            )
            if text:
                blocks.append(TextBlock(text=text))
        elif kind == "reasoning":
            blocks.append(reasoning_block(item))
        elif kind == "function_call":
            blocks.append(
                ToolCallBlock(
                    id=call_text(part(item, "call_id")),
                    name=call_text(part(item, "name")),
                    arguments=call_text(part(item, "arguments")),
                    item_id=optional_text(part(item, "id")),
                )
            )
    return blocks


def reasoning_block(item: object) -> ReasoningBlock:
    """A reasoning item: its summary texts joined (its ``reasoning_text`` content when it has
    no summary), its ``encrypted_content`` and ``id`` verbatim when present (RS-C2)."""
    texts = [str(part(p, "text") or "") for p in part(item, "summary") or ()]
    if not texts:
        texts = [str(part(p, "text") or "") for p in part(item, "content") or ()]
    return ReasoningBlock(
        text="".join(texts),
        encrypted_content=optional_text(part(item, "encrypted_content")),
        item_id=optional_text(part(item, "id")),
    )


def refused(output: Iterable[object]) -> bool:
    """Whether any output message carries a refusal part."""
    return any(
        part(p, "type") == "refusal"
        for item in output
        if part(item, "type") == "message"
        for p in part(item, "content") or ()
    )


def optional_text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def response_usage(usage: object) -> Usage | None:
    """Protocol usage from a Responses usage object: input without the cached tokens (C4),
    the cache reads, output, and the reasoning tokens its details carry."""
    if usage is None:
        return None
    prompt, completion = integer(part(usage, "input_tokens")), integer(part(usage, "output_tokens"))
    if prompt is None or completion is None:
        return None
    input_details = part(usage, "input_tokens_details")
    output_details = part(usage, "output_tokens_details")
    cached = integer(part(input_details, "cached_tokens")) if input_details else None
    reasoning = integer(part(output_details, "reasoning_tokens")) if output_details else None
    return Usage(
        input_tokens=prompt - (cached or 0),
        output_tokens=completion,
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


def response_params(case: RunCase) -> dict[str, Any]:
    """The run line's Responses body as an SDK's ``responses.stream`` keywords: everything
    but ``stream`` (the helper sets it)."""
    return {k: v for k, v in case.request.items() if k != "stream"}
