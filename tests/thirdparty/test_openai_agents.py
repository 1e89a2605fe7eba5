"""The openai-agents shim against the fixtures that characterise it (tox -e shim-openai-agents)."""

from __future__ import annotations

from shim_cases import check_column, check_declared_retries, run_cases, usages

CALL = "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls"
EXPECTED = {
    "continuation-id-null": CALL,
    # Identity assigned when non-empty, never concatenated: repeats are inert...
    "llamacpp-identity-repeated": CALL,
    # ...and a name sent in fragments keeps only its last one.
    "tool-name-fragmented": "call 'call_1'/'weather' '{\"city\": \"Paris\"}'; tool-calls",
    "lmstudio-id-changes-each-delta": (
        "call 'call_x4'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls"
    ),
    "tool-arguments-invalid-json": "call 'call_1'/'get_weather' '{\"city\": \"Par'; tool-calls",
    "deepseek-reasoning-content": "reasoning 'Let me think.'; text 'Answer'; stop",
    "openrouter-reasoning-field": "reasoning 'Let me think.'; text 'Answer'; stop",
    "usage-choices-null": "text 'Hi'; stop",
    # The Response has no finish reason: a cut answer looks complete...
    "finish-length-partial-text": "text 'Hel'; stop",
    "truncated-no-finish-no-done": "text 'Hel'; stop",
    # ...except a length finish with nothing produced, which the model layer refuses, typed.
    "length-no-content": "raised ModelBehaviorError (MAX_TOKENS)",
    "retry-field-only-event": "raised JSONDecodeError (MALFORMED_RESPONSE)",
    "http-429-forever": "raised RateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised APIConnectionError (TRANSPORT)",
}


def test_openai_agents_column_shows_its_known_behaviour() -> None:
    check_column("openai-agents", EXPECTED)


def test_usage_is_reported_only_when_the_provider_sent_it() -> None:
    results = run_cases("openai-agents", "usage-absent", "usage-every-chunk")
    assert usages(results["usage-absent"]) == []
    # Cumulative usage: the last figure wins (zero-filled details are the SDK's).
    assert usages(results["usage-every-chunk"]) == [
        {"input_tokens": 20, "output_tokens": 2, "cache_read_tokens": 0, "reasoning_tokens": 0}
    ]


def test_openai_agents_declares_the_retry_policy_it_runs() -> None:
    check_declared_retries("openai-agents")
