"""The smolagents shim against the fixtures that characterise it (tox -e shim-smolagents)."""

from __future__ import annotations

from shim_cases import DECLARATION_CASES, check_column, check_declared_retries, run_cases, usages

CALL = "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls"
EXPECTED = {
    "continuation-id-null": CALL,
    # Identity assigned (last non-empty wins): repeats are inert, fragments lost.
    "llamacpp-identity-repeated": CALL,
    "tool-name-fragmented": "call 'call_1'/'weather' '{\"city\": \"Paris\"}'; tool-calls",
    "tool-arguments-invalid-json": "call 'call_1'/'get_weather' '{\"city\": \"Par'; tool-calls",
    # A tool-call delta without index is refused.
    "ollama-index-omitted": "raised ValueError",
    # No finish and no reasoning reach the caller.
    "finish-length-partial-text": "text 'Hel'; stop",
    "deepseek-reasoning-content": "text 'Answer'; stop",
    "truncated-no-finish-no-done": "text 'Hel'; stop",
    "usage-choices-null": "text 'Hi'; stop",
    "retry-field-only-event": "raised JSONDecodeError (MALFORMED_RESPONSE)",
    "http-429-forever": "raised RateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised APIConnectionError (TRANSPORT)",
}


def test_smolagents_column_shows_its_known_behaviour() -> None:
    check_column("smolagents", EXPECTED)


def test_usage_is_summed_and_reported_only_when_a_delta_carried_it() -> None:
    results = run_cases("smolagents", "usage-absent", "usage-every-chunk")
    assert usages(results["usage-absent"]) == []  # agglomerate_stream_deltas says 0/0
    # Cumulative per-chunk usage (20/0, 20/1, 20/2, 20/2) added up.
    assert usages(results["usage-every-chunk"]) == [{"input_tokens": 80, "output_tokens": 5}]


def test_smolagents_declares_the_sdk_loop_it_runs_inside_its_rate_limit_layer() -> None:
    # A 429 that never lifts reaches smolagents' own Retrying, whose 120 s wait the policy
    # cannot declare (see the shim): the SDK's loop is judged on the other cases.
    check_declared_retries(
        "smolagents", [case for case in DECLARATION_CASES if case != "http-429-forever"]
    )
