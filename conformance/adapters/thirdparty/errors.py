"""One exception → canonical code table for every shim (real-adapters.md §6).

Exceptions are matched by class name along the MRO, so this module imports no third-party
library. A library's own wrapper is looked through (its cause chain, litellm's
``original_exception``); an HTTP status carried by the exception is classified exactly as
the oracle classifies it. An Anthropic error body the exception keeps (an ``event: error``
raised on a 200 response) is classified by the status its ``error.type`` stands for. Anything
unknown gets no code: ``thrown`` is non-strict either way.
"""

from __future__ import annotations

from fakeprovider.dialects.anthropic import ERROR_TYPES

from ...codes import (
    EMPTY_RESPONSE,
    MALFORMED_RESPONSE,
    MALFORMED_TOOL_CALL,
    MAX_TOKENS,
    RATE_LIMIT,
    RESPONSES_ERROR_CODES,
    SERVER,
    STREAM_CLOSED,
    TIMEOUT,
    TRANSPORT,
)
from ...oracle import classify_status

# Most specific first: a name found earlier in an exception's MRO wins.
_BY_NAME = {
    "APITimeoutError": TIMEOUT,
    "ModelTimeoutError": TIMEOUT,  # pydantic-ai: a ModelConnectionError, but a timeout
    "TimeoutException": TIMEOUT,
    "Timeout": TIMEOUT,
    "ReadTimeout": TIMEOUT,
    "RemoteProtocolError": TRANSPORT,
    "APIConnectionError": TRANSPORT,
    "ModelConnectionError": TRANSPORT,
    "ConnectError": TRANSPORT,
    "ReadError": TRANSPORT,
    "JSONDecodeError": MALFORMED_RESPONSE,
    "RateLimitError": RATE_LIMIT,
    "ModelRateLimitError": RATE_LIMIT,
    "ModelOverloadedError": SERVER,
    "ModelServerError": SERVER,
    "InternalServerError": SERVER,
}
# Wrappers whose own status says nothing (litellm's is always 503): read what they wrap.
_WRAPPERS = {"MidStreamFallbackError"}
_END_WITHOUT_FINISH = "Stream ended before a finish_reason"  # litellm MidStreamFallbackError
# A library's own refusal of a stream with nothing in it (langchain, pydantic-ai): E1's.
_EMPTY = ("No generation chunks were returned", "ended without content or tool calls")
# openai-agents' ModelBehaviorError for a `length` finish with no output: E4's empty
# max-tokens turn, refused and typed.
_CUT_EMPTY = "finish_reason='length' but produced no"
_UNDECODABLE = "Failed to decode"  # pydantic-ai ModelAPIError around a JSON error
# mirascope's refusal of a call that opens without its id or name: T5's.
_UNIDENTIFIED = ("Missing id for tool call", "Missing name for tool call")
_MAX_DEPTH = 5
# A Responses error code (an `error` event's, a `response.failed`'s error) → canonical code:
# DIALECTS.md's finish mapping. The openai SDKs raise an `error` event as an APIError whose
# body is the error object.
# Anthropic's error.type → the HTTP status it is sent with (the fake provider's table).
_ANTHROPIC_STATUS = {kind: status for status, kind in ERROR_TYPES.items()}


def error_code(error: BaseException) -> str | None:
    """The canonical code of a library exception, or None when it says nothing usable."""
    for depth, current in enumerate(_chain(error)):
        code = _own_code(current)
        if code is not None or depth >= _MAX_DEPTH:
            return code
    return None


def _chain(error: BaseException) -> list[BaseException]:
    """The exception, then what it wraps (litellm's original_exception, then the cause)."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen and len(seen) <= _MAX_DEPTH:
        seen.append(current)
        wrapped = getattr(current, "original_exception", None)
        current = wrapped if isinstance(wrapped, BaseException) else current.__cause__
    return seen


def _own_code(error: BaseException) -> str | None:
    message = str(error)
    if _END_WITHOUT_FINISH in message:
        return STREAM_CLOSED
    if any(words in message for words in _EMPTY):
        return EMPTY_RESPONSE
    if _CUT_EMPTY in message:
        return MAX_TOKENS
    if _UNDECODABLE in message:
        return MALFORMED_RESPONSE
    if message.startswith(_UNIDENTIFIED):
        return MALFORMED_TOOL_CALL
    names = [cls.__name__ for cls in type(error).__mro__]
    if _WRAPPERS & set(names):
        return None
    by_name = next((_BY_NAME[name] for name in names if name in _BY_NAME), None)
    if by_name is not None and by_name != SERVER:
        return by_name
    status = _status(error) or _anthropic_status(error)
    if status is not None:
        return classify_status(status, message)
    if by_name is not None:
        return by_name
    if "APIError" in names:  # raised from a {"error": …} frame: the provider's own failure
        return _failure_code(error) or SERVER
    return None


def _failure_code(error: BaseException) -> str | None:
    """The canonical code of the Responses error code an APIError's body carries."""
    body = getattr(error, "body", None)
    code = body.get("code") if isinstance(body, dict) else None
    return RESPONSES_ERROR_CODES.get(code) if isinstance(code, str) else None


def _status(error: BaseException) -> int | None:
    """An error HTTP status the exception carries, or the numeric code of an error frame. A
    2xx is the status of a body that failed later (the Anthropic SDK raises an ``event:
    error`` with its response's 200): it says nothing about the failure."""
    for attribute in ("status_code", "status", "code"):
        value = getattr(error, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool) and 300 <= value <= 599:
            return value
    return None


def _anthropic_status(error: BaseException) -> int | None:
    """The status an Anthropic error body's ``error.type`` stands for (``overloaded_error``:
    529), when the exception keeps the body (``body``, the Anthropic SDK's and litellm's)."""
    body = getattr(error, "body", None)
    inner = body.get("error") if isinstance(body, dict) else None
    kind = inner.get("type") if isinstance(inner, dict) else None
    return _ANTHROPIC_STATUS.get(kind) if isinstance(kind, str) else None
