"""The llama-index-llms-openai shim against its telling fixtures (tox -e shim-llama-index)."""

from __future__ import annotations

from shim_cases import check_column, check_declared_retries

EXPECTED = {
    "continuation-id-null": "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    "tool-arguments-invalid-json": "call 'call_1'/'get_weather' '{\"city\": \"Par'; tool-calls",
    "usage-absent": "text 'Hi'; stop",
    "continuation-id-repeated": (
        "call 'call_1call_1call_1call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls"
    ),
    "tool-parallel-oneshot": "call 'call_a'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    "retry-field-only-event": "raised JSONDecodeError (MALFORMED_RESPONSE)",
    "http-429-forever": "raised RateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised ReadError (TRANSPORT)",
}


def test_llama_index_column_shows_its_known_behaviour() -> None:
    check_column("llama-index", EXPECTED)


def test_llama_index_declares_the_retry_policy_it_runs() -> None:
    check_declared_retries("llama-index")
