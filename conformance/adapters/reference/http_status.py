"""Classification of provider errors: non-2xx responses (INVARIANTS H1, H2) and error objects.

The rule order and the quota / context-length wording follow the harness contract (§b.7); the
first matching rule wins.
"""

import json
import math
import re
from collections.abc import Mapping
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


def code_for_status(status: int, detail: str) -> str:
    """The canonical code for an HTTP status, given the provider's error wording."""
    if status in (401, 403):
        return codes.AUTH
    if status == 413:
        return codes.INVALID_REQUEST  # even with context-length wording
    if _QUOTA_WORDING.search(detail):
        return codes.QUOTA  # a 429 that will not clear by waiting
    if status == 429:
        return codes.RATE_LIMIT
    if status == 400:
        if _CONTEXT_WINDOW_WORDING.search(detail):
            return codes.CONTEXT_WINDOW_EXCEEDED
        return codes.INVALID_REQUEST
    if status >= 500:
        return codes.SERVER
    return codes.http_status_code(status)


def classify_http_error(
    status: int, headers: Mapping[str, str], body: bytes, *, now_epoch_s: float
) -> Failure:
    """The failure for a non-2xx response; `now_epoch_s` dates an HTTP-date Retry-After."""
    message, detail = _read_error_body(body)
    retry_after = _header(headers, "retry-after")
    return Failure(
        code=code_for_status(status, detail),
        message=message or f"provider API error (HTTP {status})",
        status=status,
        retry_after_ms=None if retry_after is None else parse_retry_after(retry_after, now_epoch_s),
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
    wording = [
        str(value)
        for value in (error.get("code"), error.get("type"), message)
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
