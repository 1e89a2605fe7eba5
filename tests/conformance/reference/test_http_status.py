"""Tests of HTTP status classification and Retry-After parsing (invariants H1, H2)."""

import json
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from conformance.adapters.reference import (
    Failure,
    classify_http_error,
    classify_stream_error,
    parse_retry_after,
)

NOW = 1_750_000_000.0


def http_date(epoch_s: float) -> str:
    return format_datetime(datetime.fromtimestamp(epoch_s, UTC), usegmt=True)


def error_body(message: str | None = None, **fields: object) -> bytes:
    error = dict(fields)
    if message is not None:
        error["message"] = message
    return json.dumps({"error": error}).encode()


def code_of(status: int, body: bytes = b"") -> str:
    return classify_http_error(status, {}, body, now_epoch_s=NOW).code


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (401, error_body("bad key", code="invalid_api_key"), "AUTH"),
        (403, error_body("insufficient_quota"), "AUTH"),  # status first, wording second
        (429, error_body("slow down"), "RATE_LIMIT"),
        (429, error_body("account credits exhausted", code="insufficient_quota"), "QUOTA"),
        (
            400,
            error_body(
                "This model's maximum context length is 128000 tokens; "
                "your input exceeds that limit.",
                type="invalid_request_error",
                code="context_length_exceeded",
            ),
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        (400, error_body("input exceeds the model context window"), "CONTEXT_WINDOW_EXCEEDED"),
        (400, error_body("request too large for model context"), "CONTEXT_WINDOW_EXCEEDED"),
        (
            400,
            error_body("invalid input: temperature exceeds maximum allowed value"),
            "INVALID_REQUEST",
        ),
        (413, error_body(code="context_length_exceeded"), "INVALID_REQUEST"),
        (500, b"", "SERVER"),
        (502, b"Bad Gateway", "SERVER"),
        (503, error_body("busy"), "SERVER"),
        (503, error_body("You exceeded your current quota"), "QUOTA"),
        (402, error_body("Insufficient Balance"), "QUOTA"),
        (402, b"Insufficient Balance", "QUOTA"),
        (402, b"", "HTTP_402"),
        (400, error_body("Quota exceeded for this project"), "QUOTA"),
        (404, error_body("out of budget"), "QUOTA"),
        (409, error_body("usage limit reached"), "QUOTA"),
        (404, b"", "HTTP_404"),
        (408, b"", "HTTP_408"),
        (418, b"", "HTTP_418"),
        (422, error_body("unprocessable"), "HTTP_422"),
        # Decisions where the spec is silent (docs/decisions.md).
        (429, error_body("You exceeded  your\ncurrent quota"), "QUOTA"),
        (400, error_body("the context window of this model is 8192 tokens"), "INVALID_REQUEST"),
        (400, error_body("input exceeded the context window"), "CONTEXT_WINDOW_EXCEEDED"),
        (429, json.dumps({"error": ["insufficient_quota"]}).encode(), "QUOTA"),
    ],
)
def test_status_mapping(status: int, body: bytes, code: str) -> None:
    assert code_of(status, body) == code


def test_failure_carries_message_and_status() -> None:
    failure = classify_http_error(
        429, {"Retry-After": "2"}, error_body("slow down"), now_epoch_s=NOW
    )
    assert failure == Failure(
        code="RATE_LIMIT", message="slow down", status=429, retry_after_ms=2000
    )


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, json.dumps({"error": {"type": "x"}}).encode()),
        (502, b"Bad Gateway"),
        (500, b""),
        (500, b"\xff\xfe"),
    ],
)
def test_message_falls_back_to_the_status(status: int, body: bytes) -> None:
    failure = classify_http_error(status, {}, body, now_epoch_s=NOW)
    assert f"HTTP {status}" in failure.message
    assert failure.code == "SERVER"


def test_bare_string_error_is_the_message() -> None:
    body = json.dumps({"error": "Insufficient credits"}).encode()
    assert classify_http_error(402, {}, body, now_epoch_s=NOW) == Failure(
        code="QUOTA", message="Insufficient credits", status=402
    )


def test_retry_after_header_name_is_case_insensitive_and_http_date_is_read() -> None:
    headers = {"RETRY-AFTER": http_date(NOW + 3)}
    assert classify_http_error(503, headers, b"", now_epoch_s=NOW).retry_after_ms == 3000


def test_retry_after_ms_header_is_not_read() -> None:
    # The harness reads only `retry-after` (harness-contract §b.7).
    assert (
        classify_http_error(429, {"retry-after-ms": "300"}, b"", now_epoch_s=NOW).retry_after_ms
        is None
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2", 2000.0),
        (" 2 ", 2000.0),
        ("120", 120_000.0),
        (http_date(NOW + 3), 3000.0),
        ("0", None),
        ("9" * 400, None),
        ("not-a-date", None),
        ("", None),
        ("-5", None),
        ("1.5", None),  # delay-seconds is an integer
        (http_date(NOW - 60), None),
        (http_date(NOW), None),
        ("Thu, 01 Jan 1970 00:00:00 GMT", None),
        # Decisions where the spec is silent (docs/decisions.md).
        ("0000000000000002", 2000.0),
        ("1" + "0" * 17, 1e20),
        ("\u00b2", None),  # "²".isdigit() is true, but delay-seconds is ASCII digits
        ("\u0663", None),
        ("Sun, 06 Nov 1994 99999999999999999999:49:37 GMT", None),
    ],
)
def test_parse_retry_after(value: str, expected: float | None) -> None:
    assert parse_retry_after(value, NOW) == expected


@pytest.mark.parametrize("date", ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
def test_obsolete_http_date_formats_are_read(date: str) -> None:
    epoch_1994 = datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC).timestamp()
    assert parse_retry_after(date, epoch_1994 - 10) == pytest.approx(10_000)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ({"message": "overloaded", "type": "server_error"}, Failure("SERVER", "overloaded")),
        ("boom", Failure("SERVER", "boom")),
        ({}, Failure("SERVER", "provider reported an error inside the stream")),
        (["x"], Failure("SERVER", "provider reported an error inside the stream")),
        ({"message": "slow", "code": 429}, Failure("RATE_LIMIT", "slow", status=429)),
        ({"message": "down", "status": 503}, Failure("SERVER", "down", status=503)),
        (
            {"message": "insufficient_quota", "code": 429},
            Failure("QUOTA", "insufficient_quota", status=429),
        ),
        ({"message": "x", "code": "rate_limit"}, Failure("SERVER", "x")),
        ({"message": "x", "code": True}, Failure("SERVER", "x")),
        ({"message": "x", "code": 42}, Failure("SERVER", "x")),
    ],
    ids=repr,
)
def test_classify_stream_error(error: object, expected: Failure) -> None:
    assert classify_stream_error(error) == expected
