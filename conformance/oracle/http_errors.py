"""Non-2xx responses (H1, H2): the canonical code of a status and what Retry-After asks for."""

from __future__ import annotations

import dataclasses
import email.utils
import json
import re
from datetime import UTC
from typing import Any

from fakeprovider.scenario import ErrorResponse
from fakeprovider.wire import error_body

from ..codes import AUTH, CONTEXT_WINDOW_EXCEEDED, INVALID_REQUEST, QUOTA, RATE_LIMIT, SERVER
from .outcome import ExpectedAttempt

# --- HTTP errors (H1, H2) ------------------------------------------------------------------

_QUOTA_WORDING = re.compile(
    r"insufficient[ _-](quota|balance|credits?)"
    r"|(quota|usage limit)[ _-](exceeded|exhausted|reached)"
    r"|exceed(ed|s)? (your |the )?(current )?quota"
    r"|(balance|credits?) (exhausted|depleted)"
    r"|out of (credits?|budget)"
    r"|spend[ _-]limit"  # Anthropic's enforced_spend_limit_reached: not to be retried
    r"|billing[ _-]error",  # Anthropic's 402 type
    re.IGNORECASE,
)
_CONTEXT_WORDING = re.compile(
    r"context[ _-]length[ _-]exceeded|maximum context length"
    r"|exceed(ed|s)? (the )?(model('s)? )?context window"
    r"|too large for (the )?(model('s)? )?context"
    r"|prompt is too long",  # Anthropic's
    re.IGNORECASE,
)


def classify_status(status: int, detail: str) -> str:
    """The canonical code of a non-2xx response; the first matching rule wins (H1).

    The wording is read with every run of whitespace as one space.
    """
    wording = " ".join(detail.split())
    rules: tuple[tuple[bool, str], ...] = (
        (status in (401, 403), AUTH),
        (status == 413, INVALID_REQUEST),
        (bool(_QUOTA_WORDING.search(wording)), QUOTA),
        (status == 429, RATE_LIMIT),
        (status == 400 and bool(_CONTEXT_WORDING.search(wording)), CONTEXT_WINDOW_EXCEEDED),
        (status == 400, INVALID_REQUEST),
        (status >= 500, SERVER),
    )
    return next((code for matches, code in rules if matches), f"HTTP_{status}")


def error_detail(body: bytes) -> str:
    """The wording the classification reads in an error body: its error object's, a bare
    error string, or else the whole body as text (UTF-8)."""
    text = body.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return text
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, str):
        return error
    return error_object_detail(error) if isinstance(error, dict) else text


def error_object_detail(error: dict[str, Any]) -> str:
    """An error object's code, type and message joined, then its details' code (where
    Anthropic names a spend limit); only strings and integers count."""
    details = error.get("details")
    parts = [error.get(key) for key in ("code", "type", "message")]
    if isinstance(details, dict):
        parts.append(details.get("error_code"))
    return " ".join(str(part) for part in parts if _is_wording(part))


def _is_wording(part: Any) -> bool:
    return isinstance(part, str | int) and not isinstance(part, bool) and bool(part)


def retry_after_ms(headers: dict[str, str], now: float) -> float | None:
    """Retry-After as milliseconds: seconds or an HTTP date (GMT); zero, past, infinite or
    junk is None."""
    value = _header(headers, "retry-after").strip()
    if not value:
        return None
    if _is_delay_seconds(value):
        delay = float(value) * 1000.0  # inf (ignored below) only for ~306 digits or more
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
            if when.tzinfo is None:  # asctime and "-0000" carry no zone: HTTP-dates are GMT
                when = when.replace(tzinfo=UTC)
            delay = (when.timestamp() - now) * 1000.0
        except (TypeError, ValueError, OverflowError):
            return None
    return delay if 0 < delay < float("inf") else None


def _is_delay_seconds(value: str) -> bool:
    """RFC 9110 delay-seconds: ASCII digits only (``"²".isdigit()`` is true)."""
    return value.isascii() and value.isdigit()


def _header(headers: dict[str, str], name: str) -> str:
    return next((v for k, v in headers.items() if k.lower() == name), "")


def _http_error(number: int, response: ErrorResponse, now: float) -> ExpectedAttempt:
    failure = status_failure(number, response.status, response.headers, error_body(response), now)
    if response.retry_after_date_in_s is None:
        return failure
    # A date the provider renders at send time: the wait it asks for, whenever that is.
    return dataclasses.replace(
        failure,
        retry_after_ms=response.retry_after_date_in_s * 1000.0,
        features=failure.features | {"retry-after", "retry-after-date"},
    )


def status_failure(
    number: int, status: int, headers: dict[str, str], body: bytes, now: float
) -> ExpectedAttempt:
    code = classify_status(status, error_detail(body))
    after = retry_after_ms(headers, now)
    features = {"http-error"}
    if after is not None:
        features.add("retry-after")
        if not _is_delay_seconds(_header(headers, "retry-after").strip()):
            features.add("retry-after-date")
    return ExpectedAttempt(
        number,
        "error",
        code,
        retry_after_ms=after,
        status=status,
        headers=tuple(sorted((name.lower(), value) for name, value in headers.items())),
        features=frozenset(features),
    )
