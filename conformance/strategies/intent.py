"""What a generated case *means*: the intended response M and the outcome it stands for.

The generators (:mod:`conformance.strategies`) draw an intended response, encode it on the
wire in one of many meaning-preserving ways, and state here, without reading the wire,
what a caller must end up with. That statement is the scenario's ``expect`` block (the
fixture format of ``fixtures/README.md``), so a generated case saved as a
fixture carries an expectation written from the intent, independently of the oracle that
reads the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from ..codes import EMPTY_RESPONSE, MALFORMED_TOOL_CALL
from ..events import RetryPolicy

FinishMeanings = Mapping[str, str]
"""A wire's finish reasons and the finish each means; any other reason is a failure coded
with its upper-cased name (so Anthropic's ``refusal`` is ``REFUSAL``)."""

CHAT_FINISHES: FinishMeanings = {"stop": "stop", "tool_calls": "tool-calls", "length": "max-tokens"}


@dataclass(frozen=True)
class IntendedCall:
    id: str
    name: str
    arguments: str  # raw, possibly not JSON: passed through untouched (C3)
    item_id: str | None = None  # Responses: the function_call item's id beside the call id


@dataclass(frozen=True)
class IntendedUsage:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None = None  # part of prompt_tokens
    reasoning_tokens: int | None = None  # part of completion_tokens
    cache_write_tokens: int | None = None  # not part of prompt_tokens (Anthropic's writes)

    def expect(self) -> dict[str, JsonValue]:
        """The disjoint usage of C4, as ``expect`` lists it."""
        usage: dict[str, JsonValue] = {
            "input_tokens": self.prompt_tokens - (self.cached_tokens or 0),
            "output_tokens": self.completion_tokens,
        }
        if self.cached_tokens is not None:
            usage["cache_read_tokens"] = self.cached_tokens
        if self.reasoning_tokens is not None:
            usage["reasoning_tokens"] = self.reasoning_tokens
        if self.cache_write_tokens is not None:
            usage["cache_write_tokens"] = self.cache_write_tokens
        return usage


@dataclass(frozen=True)
class IntendedResponse:
    """M: what the model said, whatever the wire makes of it."""

    reasoning: str = ""
    text: str = ""
    calls: tuple[IntendedCall, ...] = ()
    usage: IntendedUsage | None = None
    finish: str | None = None  # the wire's finish reason; None: never sent
    # Continuity tokens a reasoning block carries (Anthropic): its signature, or the opaque
    # data of a redacted block. Either makes the block content, even with no text.
    signature: str | None = None
    redacted: str | None = None
    encrypted_content: str | None = None  # a Responses reasoning item's, beside its text

    @property
    def reasoned(self) -> bool:
        """The response has a reasoning block (text, a signature or redacted data)."""
        return bool(self.reasoning) or self.signature is not None or self.redacted is not None

    @property
    def empty(self) -> bool:
        return not (self.reasoned or self.text or self.calls)


@dataclass(frozen=True)
class FailedAttempt:
    """An attempt before the last that is meant to fail with ``code``."""

    code: str
    retry_after_ms: float | None = None  # the provider's Retry-After, when honoured
    usage: IntendedUsage | None = None  # billed by a refused response (E1, T5)


def failure_expect(code: str, usage: IntendedUsage | None = None) -> dict[str, JsonValue]:
    """A failed attempt's outcome; only a refused response (E1, T5) keeps its usage."""
    return {"finish": "error", "code": code} | ({"usage": usage.expect()} if usage else {})


def response_expect(
    response: IntendedResponse,
    call_order: Sequence[int],
    *,
    unidentified: bool = False,
    finishes: FinishMeanings = CHAT_FINISHES,
) -> dict[str, JsonValue]:
    """The outcome of an attempt that delivers ``response`` up to ``[DONE]``.

    ``call_order`` lists the calls in the order the wire opens them; ``unidentified``: a
    call never got its id or name (T5). E1 and T5 refuse the response but still report its
    usage; a finish reason ``finishes`` does not know is a failure that keeps its usage.
    """
    usage: dict[str, JsonValue] = {}
    if response.usage is not None:
        usage["usage"] = response.usage.expect()
    mapped = finishes.get(response.finish or "stop")
    if unidentified:
        return {"finish": "error", "code": MALFORMED_TOOL_CALL, **usage}
    if mapped is None:
        assert response.finish is not None
        return {"finish": "error", "code": response.finish.upper(), **usage}
    if mapped == "stop" and response.empty:
        return {"finish": "error", "code": EMPTY_RESPONSE, **usage}
    outcome: dict[str, JsonValue] = {"finish": mapped}
    if response.text:
        outcome["text"] = response.text
    if response.reasoned:  # a signature-only or redacted block's text is ""
        outcome["reasoning"] = response.reasoning
    if response.signature is not None:
        outcome["signature"] = response.signature
    if response.redacted is not None:
        outcome["redacted"] = response.redacted
    if response.encrypted_content is not None:
        outcome["encrypted_content"] = response.encrypted_content
    if response.calls:
        outcome["tool_calls"] = [_call(response.calls[index]) for index in call_order]
    return outcome | usage


def _call(call: IntendedCall) -> dict[str, JsonValue]:
    listed: dict[str, JsonValue] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    return listed if call.item_id is None else listed | {"item_id": call.item_id}


def case_expect(
    before: Sequence[FailedAttempt], final: dict[str, JsonValue], policy: RetryPolicy
) -> dict[str, JsonValue]:
    """The caller-visible outcome once the retry layer is done (``expect``).

    ``before`` are the scenario's attempts before the last; ``final`` is the last one's
    outcome, which repeats for any further request, as the fake provider plays it.
    """
    for number, failed in enumerate(before, 1):
        if not _retried(failed.code, failed.retry_after_ms, number - 1, policy):
            return failure_expect(failed.code, failed.usage) | _attempts(number)
    made = len(before) + 1
    final_code = final.get("code") if final["finish"] == "error" else None
    while isinstance(final_code, str) and _retried(final_code, None, made - 1, policy):
        made += 1
    return final | _attempts(made)


def _retried(code: str, retry_after_ms: float | None, retries: int, policy: RetryPolicy) -> bool:
    waitable = retry_after_ms is None or retry_after_ms <= policy.max_delay_ms
    return code in policy.retryable_codes and retries < policy.max_retries and waitable


def _attempts(made: int) -> dict[str, JsonValue]:
    return {"attempts": made} if made > 1 else {}
