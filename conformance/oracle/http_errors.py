"""Non-2xx responses (H1, H2): the canonical code of a status and what Retry-After asks for."""

from __future__ import annotations

import dataclasses
import email.utils
import json
import re

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
    r"|out of (credits?|budget)",
    re.IGNORECASE,
)
_CONTEXT_WORDING = re.compile(
    r"context[ _-]length[ _-]exceeded|maximum context length|context window"
    r"|too large for (the )?model('s)? context",
    re.IGNORECASE,
)


def classify_status(status: int, detail: str) -> str:
    """The canonical code of a non-2xx response; the first matching rule wins (H1)."""
    rules: tuple[tuple[bool, str], ...] = (
        (status in (401, 403), AUTH),
        (status == 413, INVALID_REQUEST),
        (bool(_QUOTA_WORDING.search(detail)), QUOTA),
        (status == 429, RATE_LIMIT),
        (status == 400 and bool(_CONTEXT_WORDING.search(detail)), CONTEXT_WINDOW_EXCEEDED),
        (status == 400, INVALID_REQUEST),
        (status >= 500, SERVER),
    )
    return next((code for matches, code in rules if matches), f"HTTP_{status}")


def error_detail(body: bytes) -> str:
    """The error's code, type and message joined, as the classification reads them."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.decode("utf-8", errors="replace")
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        return body.decode("utf-8", errors="replace")
    return " ".join(str(error[key]) for key in ("code", "type", "message") if error.get(key))


def retry_after_ms(headers: dict[str, str], now: float) -> float | None:
    """Retry-After as milliseconds: seconds or an HTTP date; zero, past or junk is None."""
    value = _header(headers, "retry-after").strip()
    if not value:
        return None
    if value.isdigit():
        delay = int(value) * 1000.0 if len(value) < 16 else float("inf")
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        delay = (when.timestamp() - now) * 1000.0
    return delay if 0 < delay < float("inf") else None


def _header(headers: dict[str, str], name: str) -> str:
    return next((v for k, v in headers.items() if k.lower() == name), "")


def _http_error(number: int, response: ErrorResponse, now: float) -> ExpectedAttempt:
    failure = _status_failure(number, response.status, response.headers, error_body(response), now)
    if response.retry_after_date_in_s is None:
        return failure
    # A date the provider renders at send time: the wait it asks for, whenever that is.
    return dataclasses.replace(
        failure,
        retry_after_ms=response.retry_after_date_in_s * 1000.0,
        features=failure.features | {"retry-after", "retry-after-date"},
    )


def _status_failure(
    number: int, status: int, headers: dict[str, str], body: bytes, now: float
) -> ExpectedAttempt:
    code = classify_status(status, error_detail(body))
    after = retry_after_ms(headers, now)
    features = {"http-error"}
    if after is not None:
        features.add("retry-after")
        if not _header(headers, "retry-after").strip().isdigit():
            features.add("retry-after-date")
    return ExpectedAttempt(
        number, "error", code, retry_after_ms=after, status=status, features=frozenset(features)
    )
