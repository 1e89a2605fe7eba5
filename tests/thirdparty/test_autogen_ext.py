"""The autogen-ext shim against the fixtures that characterise it (tox -e shim-autogen-ext)."""

from __future__ import annotations

from shim_cases import check_column, check_declared_retries, run_cases, usages

EXPECTED = {
    "continuation-id-null": "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls",
    # Identity concatenated on every delta.
    "llamacpp-identity-repeated": (
        "call 'call_1call_1call_1call_1'/'get_weatherget_weatherget_weatherget_weather' "
        '\'{"city": "Paris"}\'; tool-calls'
    ),
    # A delta with content skips its tool calls: the call is lost.
    "content-and-tool-same-chunk": "text 'Sure.'; tool-calls",
    # Reasoning unwrapped with a character-set strip of "<think>" and "</think>".
    "reasoning-exact-text": "reasoning ': the kitte'; text 'Answer'; stop",
    # Only reasoning_content is read, and it is dropped beside tool calls.
    "openrouter-reasoning-field": "text 'Answer'; stop",
    "deepseek-reasoning-then-tool": (
        "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls"
    ),
    # A finish on a chunk that carries usage is ignored: finish_reason 'unknown'.
    "usage-on-finish-chunk": "text 'Hi'; error UNKNOWN",
    "truncated-no-finish-no-done": "text 'Hel'; error UNKNOWN",
    "finish-length-partial-text": "text 'Hel'; max-tokens",
    "usage-choices-null": "raised TypeError",
    "retry-field-only-event": "raised JSONDecodeError (MALFORMED_RESPONSE)",
    "http-429-forever": "raised RateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised APIConnectionError (TRANSPORT)",
}


def test_autogen_column_shows_its_known_behaviour() -> None:
    check_column("autogen-ext", EXPECTED)


def test_usage_the_provider_never_sent_comes_back_as_zeros() -> None:
    results = run_cases("autogen-ext", "usage-absent", "usage-trailing-cached-reasoning")
    assert usages(results["usage-absent"]) == [{"input_tokens": 0, "output_tokens": 0}]
    # No cached-token figure: the input keeps the cached tokens the wire counted in it.
    assert usages(results["usage-trailing-cached-reasoning"]) == [
        {"input_tokens": 2006, "output_tokens": 300}
    ]


def test_autogen_ext_declares_the_retry_policy_it_runs() -> None:
    check_declared_retries("autogen-ext")
