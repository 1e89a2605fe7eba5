"""The haystack-ai shim against the fixtures that characterise it (tox -e shim-haystack)."""

from __future__ import annotations

from shim_cases import check_column, check_declared_retries

EXPECTED = {
    "continuation-id-null": "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    # An id of "" on a continuation overwrites the real one.
    "tool-cont-empty-id-name": "call ''/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    # Names are concatenated, ids assigned.
    "llamacpp-identity-repeated": (
        "call 'call_1'/'get_weatherget_weatherget_weatherget_weather' "
        '\'{"city": "Paris"}\'; tool-calls'
    ),
    # Arguments that are not JSON drop the call (a log warning only)...
    "tool-arguments-invalid-json": "tool-calls",
    # ...and parsed arguments are all it keeps: re-serialised, "" becomes {}.
    "tool-call-finish-stop": (
        "call 'call_Yk3pQ8rT2mW6vN0sB4xL7dHf'/'get_weather' '{\"city\": \"Paris\"}'; stop"
    ),
    "no-arg-call-empty-arguments": "call 'call_n0'/'get_time' '{}'; tool-calls",
    # Its StreamingChunk refuses content beside tool calls and a call without index.
    "content-and-tool-same-chunk": "raised ValueError",
    "ollama-index-omitted": "raised ValueError",
    "usage-choices-null": "raised TypeError",
    "deepseek-reasoning-content": "text 'Answer'; stop",
    "truncated-no-finish-no-done": "text 'Hel'; stop",
    "retry-field-only-event": "raised JSONDecodeError (MALFORMED_RESPONSE)",
    "http-429-forever": "raised RateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised APIConnectionError (TRANSPORT)",
}


def test_haystack_column_shows_its_known_behaviour() -> None:
    check_column("haystack", EXPECTED)


def test_haystack_declares_the_retry_policy_it_runs() -> None:
    check_declared_retries("haystack")
