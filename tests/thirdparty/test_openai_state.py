"""The openai-python ChatCompletionStreamState shim on its telling fixtures (tox -e shim-openai)."""

from __future__ import annotations

from shim_cases import check_column, check_declared_retries

EXPECTED = {
    "continuation-id-null": "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    "tool-arguments-invalid-json": "call 'call_1'/'get_weather' '{\"city\": \"Par'; tool-calls",
    "usage-absent": "text 'Hi'; stop",
    "llamacpp-identity-repeated": (
        "call 'call_1call_1call_1call_1'/'get_weatherget_weatherget_weatherget_weather' "
        '\'{"city": "Paris"}\'; tool-calls'
    ),
    "continuation-type-null": "raised AssertionError",
    "retry-field-only-event": "raised JSONDecodeError (MALFORMED_RESPONSE)",
    "truncated-no-finish-no-done": "text 'Hel'; stop",  # returned normally: S5's loss
    "lmstudio-id-empty": "call ''/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    "http-429-forever": "raised RateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised APIConnectionError (TRANSPORT)",
    "deepseek-reasoning-content": "reasoning 'Let me think.'; text 'Answer'; stop",
}


def test_openai_column_shows_its_known_behaviour() -> None:
    check_column("openai", EXPECTED)


def test_openai_declares_the_retry_policy_it_runs() -> None:
    check_declared_retries("openai")
