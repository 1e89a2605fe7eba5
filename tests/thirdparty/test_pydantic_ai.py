"""The pydantic-ai shim against the fixtures that characterise it (tox -e shim-pydantic-ai)."""

from __future__ import annotations

from shim_cases import check_column, check_declared_retries

EXPECTED = {
    "continuation-id-null": "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    "tool-arguments-invalid-json": "call 'call_1'/'get_weather' '{\"city\": \"Par'; tool-calls",
    "usage-absent": "text 'Hi'; stop",
    "llamacpp-identity-repeated": (
        "call 'call_1'/'get_weatherget_weatherget_weatherget_weather' "
        '\'{"city": "Paris"}\'; tool-calls'
    ),
    "retry-field-only-event": "raised ModelAPIError (MALFORMED_RESPONSE)",
    "truncated-no-finish-no-done": "text 'Hel'; stop",  # returned normally: S5's loss
    "http-429-forever": "raised ModelRateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised ModelConnectionError (TRANSPORT)",
    "deepseek-reasoning-content": "reasoning 'Let me think.'; text 'Answer'; stop",
}


def test_pydantic_ai_column_shows_its_known_behaviour() -> None:
    check_column("pydantic-ai", EXPECTED)


def test_pydantic_ai_declares_the_retry_policy_it_runs() -> None:
    check_declared_retries("pydantic-ai")
