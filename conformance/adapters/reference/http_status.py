"""Classification of provider errors: non-2xx responses (INVARIANTS H1, H2) and error objects.

The rule order and the quota / context-length wording follow the harness contract (§b.7); the
first matching rule wins. A dialect adds to them through its `ErrorRules` (Anthropic: 402 and
the spend limit are QUOTA, `retry-after-ms` is read); the chat rules are
the harness's alone.
"""

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime

from conformance import codes
from conformance.adapters.reference.failure import Failure

# Words are separated by any run of whitespace; where the harness accepts `[ _-]`, by such a
# run, `_` or `-`.
_QUOTA_WORDING = re.compile(
    r"insufficient(?:\s+|[_-])(?:quota|balance|credits?)"
    r"|(?:quota|usage\s+limit)(?:\s+|[_-])(?:exceeded|exhausted|reached)"
    r"|exceed(?:ed|s)?\s+(?:(?:your|the)\s+)?(?:current\s+)?quota"
    r"|(?:balance|credits?)\s+(?:exhausted|depleted)"
    r"|out\s+of\s+(?:credits?|budget)",
    re.IGNORECASE,
)
_CONTEXT_WINDOW_WORDING = re.compile(
    r"context(?:\s+|[_-])length(?:\s+|[_-])exceeded"
    r"|maximum\s+context\s+length"
    r"|exceed(?:ed|s)?\s+(?:the\s+)?(?:model(?:'s)?\s+)?context\s+window"
    r"|too\s+large\s+for\s+(?:the\s+)?(?:model(?:'s)?\s+)?context",
    re.IGNORECASE,
)
_DELAY_SECONDS = re.compile(r"[0-9]+")  # RFC 9110 delay-seconds: digits only


@dataclass(frozen=True)
class ErrorRules:
    """What one dialect's providers add to the status rules."""

    quota_statuses: frozenset[int] = frozenset()
    quota_wording: re.Pattern[str] | None = None
    context_window_wording: re.Pattern[str] | None = None
    reads_retry_after_ms: bool = False  # `retry-after-ms` before `retry-after`


CHAT_ERRORS = ErrorRules()
# Anthropic's errors (reference dialects.md §2.6): a 429 whose `error.details.error_code` is
# `enforced_spend_limit_reached` will not clear by waiting, nor will a 402 (billing_error);
# an overlong prompt is "prompt is too long: N tokens > M maximum".
ANTHROPIC_ERRORS = ErrorRules(
    quota_statuses=frozenset({402}),
    quota_wording=re.compile(r"spend(?:\s+|[_-])limit|billing_error", re.IGNORECASE),
    context_window_wording=re.compile(r"prompt\s+is\s+too\s+long", re.IGNORECASE),
    reads_retry_after_ms=True,
)


def code_for_status(status: int, detail: str, rules: ErrorRules = CHAT_ERRORS) -> str:
    """The canonical code for an HTTP status, given the provider's error wording."""
    if status in (401, 403):
        return codes.AUTH
    if status == 413:
        return codes.INVALID_REQUEST  # even with context-length wording
    if status in rules.quota_statuses or _matches(detail, _QUOTA_WORDING, rules.quota_wording):
        return codes.QUOTA  # a 429 that will not clear by waiting
    if status == 429:
        return codes.RATE_LIMIT
    if status == 400:
        if _matches(detail, _CONTEXT_WINDOW_WORDING, rules.context_window_wording):
            return codes.CONTEXT_WINDOW_EXCEEDED
        return codes.INVALID_REQUEST
    if status >= 500:
        return codes.SERVER
    return codes.http_status_code(status)


def _matches(detail: str, *wordings: re.Pattern[str] | None) -> bool:
    return any(wording is not None and wording.search(detail) for wording in wordings)


def classify_http_error(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    now_epoch_s: float,
    rules: ErrorRules = CHAT_ERRORS,
) -> Failure:
    """The failure for a non-2xx response; `now_epoch_s` dates an HTTP-date Retry-After."""
    message, detail = _read_error_body(body)
    return Failure(
        code=code_for_status(status, detail, rules),
        message=message or f"provider API error (HTTP {status})",
        status=status,
        retry_after_ms=_provider_wait_ms(headers, rules, now_epoch_s),
    )


def _provider_wait_ms(
    headers: Mapping[str, str], rules: ErrorRules, now_epoch_s: float
) -> float | None:
    """The wait the provider asks for: `retry-after-ms` first where the dialect's SDKs read it
    (a positive, finite number of milliseconds), else `Retry-After`."""
    if rules.reads_retry_after_ms:
        milliseconds = _header(headers, "retry-after-ms")
        try:
            wait_ms = float(milliseconds) if milliseconds is not None else math.nan
        except ValueError:
            wait_ms = math.nan
        if math.isfinite(wait_ms) and wait_ms > 0:
            return wait_ms
    retry_after = _header(headers, "retry-after")
    return None if retry_after is None else parse_retry_after(retry_after, now_epoch_s)


# The HTTP status each Anthropic `error.type` stands for (the errors page of the API docs): an
# `event: error` inside a 200 stream is classified by the status rules through it.
ANTHROPIC_ERROR_STATUSES: Mapping[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def classify_anthropic_error(error: object) -> Failure:
    """The failure for the `error` of an Anthropic `event: error`: the status its type stands
    for, classified with the dialect's rules; SERVER for an unknown type or a bare string."""
    message, detail = _describe_error(error)
    kind = error.get("type") if isinstance(error, dict) else None
    status = ANTHROPIC_ERROR_STATUSES.get(kind, 500) if isinstance(kind, str) else 500
    return Failure(
        code=code_for_status(status, detail, ANTHROPIC_ERRORS),
        message=message or "provider reported an error inside the stream",
        status=None,  # the response's own status was 200
    )


# OpenAI Responses `error.code` (or `type`): codes.RESPONSES_ERROR_CODES; any other code is
# upper-cased, its non-word runs made `_` (RS-H1).
_NOT_CODE_CHARACTERS = re.compile(r"[^A-Za-z0-9]+")


def classify_responses_error(error: object) -> Failure:
    """The failure for an OpenAI Responses error object: an `error` event's (nested or
    flat), `response.failed`'s `response.error`, a chat-style payload's `error`. A known
    `code` or `type` by the table; a status it names by the status rules, as inside a chat
    stream; another string code upper-cased; none at all SERVER."""
    if not isinstance(error, dict):
        return classify_stream_error(error)
    known = [value for value in (error.get("code"), error.get("type")) if isinstance(value, str)]
    mapped = next(
        (codes.RESPONSES_ERROR_CODES[k] for k in known if k in codes.RESPONSES_ERROR_CODES), None
    )
    if mapped is None and _embedded_status(error) is not None:
        return classify_stream_error(error)
    if mapped is None:
        wire_code = error.get("code")
        named = _NOT_CODE_CHARACTERS.sub("_", wire_code if isinstance(wire_code, str) else "")
        named = named.strip("_")
        mapped = codes.finish_reason_code(named) if named[:1].isalpha() else codes.SERVER
    message, _ = _describe_error(error)
    return Failure(
        code=mapped,
        message=message or "provider reported an error inside the stream",
        status=None,  # the response's own status was 200
    )


def classify_stream_error(error: object) -> Failure:
    """The failure for an `{"error": ...}` payload received inside a 200 stream.

    SERVER unless the object carries an HTTP status (as `status` or a numeric `code`), in which
    case the status rules above apply to it.
    """
    message, detail = _describe_error(error)
    status = _embedded_status(error)
    return Failure(
        code=codes.SERVER if status is None else code_for_status(status, detail),
        message=message or "provider reported an error inside the stream",
        status=status,
    )


def parse_retry_after(value: str, now_epoch_s: float) -> float | None:
    """A `Retry-After` value (delay-seconds or HTTP-date) as milliseconds from now.

    None when zero, in the past, non-finite or unparsable: such a value carries no usable wait.
    """
    text = value.strip()
    if _DELAY_SECONDS.fullmatch(text):
        delay_ms = float(text) * 1000  # float() of a huge digit string is inf, rejected below
    else:
        try:
            moment = parsedate_to_datetime(text)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)  # HTTP-dates are GMT
            delay_ms = (moment.timestamp() - now_epoch_s) * 1000
        except (TypeError, ValueError, OverflowError):
            return None
    if not math.isfinite(delay_ms) or delay_ms <= 0:
        return None
    return delay_ms


def _read_error_body(body: bytes) -> tuple[str | None, str]:
    """(message, wording to classify) from an error response body."""
    text = body.decode("utf-8", errors="replace")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None, text
    if isinstance(document, dict) and isinstance(document.get("error"), dict | str):
        return _describe_error(document["error"])
    return None, text  # JSON without an error object or string: classify on the raw text


def _describe_error(error: object) -> tuple[str | None, str]:
    """(message, wording) of an OpenAI-style error object or a bare error string."""
    if isinstance(error, str):
        return error or None, error
    if not isinstance(error, dict):
        return None, ""
    message = error.get("message")
    details = error.get("details")
    # Anthropic puts the reason a 429 will not clear in `details.error_code`.
    detail_code = details.get("error_code") if isinstance(details, dict) else None
    wording = [
        str(value)
        for value in (error.get("code"), error.get("type"), message, detail_code)
        if isinstance(value, str | int) and not isinstance(value, bool) and value
    ]
    return (message if isinstance(message, str) and message else None), " ".join(wording)


def _embedded_status(error: object) -> int | None:
    if not isinstance(error, dict):
        return None
    for key in ("status", "code"):
        value = error.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    # Plain dicts are case-sensitive; HTTP header names are not.
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None
