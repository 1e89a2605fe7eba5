"""The langchain-openai shim against the fixtures that characterise it (tox -e shim-langchain)."""

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
    "continuation-type-null": "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    "double-finish-tool-calls-then-stop": (
        "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; error TOOL_CALLSSTOP"
    ),
    "deepseek-reasoning-content": "text 'Answer'; stop",
    "http-429-forever": "raised OpenAIRateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised OpenAIConnectionError (TRANSPORT)",
}


def test_langchain_column_shows_its_known_behaviour() -> None:
    check_column("langchain", EXPECTED)


def test_langchain_declares_the_retry_policy_it_runs() -> None:
    check_declared_retries("langchain")
