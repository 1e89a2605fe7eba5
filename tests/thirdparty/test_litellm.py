"""The litellm shims, openai/ and hosted_vllm/ routes (tox -e shim-litellm)."""

from __future__ import annotations

import pytest
from shim_cases import check_column, check_declared_retries

BOTH_ROUTES = {
    "continuation-id-null": "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    "tool-arguments-invalid-json": "call 'call_1'/'get_weather' '{\"city\": \"Par'; tool-calls",
    "usage-absent": "text 'Hi'; stop",
    "llamacpp-identity-repeated": "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    "truncated-no-finish-no-done": "raised MidStreamFallbackError (STREAM_CLOSED)",
    "lmstudio-id-empty": "tool-calls",
    "no-arg-call-empty-arguments": "call 'call_n0'/'get_time' '{}'; tool-calls",
    "http-429-forever": "raised RateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised MidStreamFallbackError (TRANSPORT)",
}


def test_openai_route_shows_its_known_behaviour() -> None:
    check_column(
        "litellm-openai",
        BOTH_ROUTES
        | {
            "retry-field-only-event": "raised MidStreamFallbackError (TRANSPORT)",
            "event-over-two-data-lines": "text 'Hello'; stop",
        },
    )


def test_hosted_vllm_route_has_its_own_sse_parser() -> None:
    check_column(
        "litellm-hosted-vllm",
        BOTH_ROUTES
        | {
            "retry-field-only-event": "text 'Hi'; stop",
            "event-over-two-data-lines": "text 'lo'; stop",
        },
    )


@pytest.mark.parametrize("column", ["litellm-openai", "litellm-hosted-vllm"])
def test_each_route_declares_the_retry_policy_it_runs(column: str) -> None:
    check_declared_retries(column)
