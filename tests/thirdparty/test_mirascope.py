"""The mirascope shim against the fixtures that characterise it (tox -e shim-mirascope)."""

from __future__ import annotations

from shim_cases import check_column, check_declared_retries

CALL = "call 'call_1'/'get_weather' '{\"city\": \"Paris\"}'; tool-calls"
EXPECTED = {
    "continuation-id-null": CALL,
    # Identity set once, when the call opens: repeats inert, a fragmented name cut short.
    "llamacpp-identity-repeated": CALL,
    "tool-name-fragmented": "call 'call_1'/'get_' '{\"city\": \"Paris\"}'; tool-calls",
    # A call opening without its id or name is refused, legitimately late name included.
    "tool-never-identified": "raised RuntimeError (MALFORMED_TOOL_CALL)",
    "nim-first-name-null": "raised RuntimeError (MALFORMED_TOOL_CALL)",
    # A call is kept only once a finish closes it.
    "nim-no-finish-then-close": "stop",
    # Refusal deltas are text, and the finish says refusal.
    "refusal-deltas": 'text "I can\'t help."; error CONTENT_FILTER',
    "finish-length-partial-text": "text 'Hel'; max-tokens",
    "deepseek-reasoning-content": "text 'Answer'; stop",
    "truncated-no-finish-no-done": "text 'Hel'; stop",
    "usage-choices-null": "text 'Hi'; stop",
    "retry-field-only-event": "raised JSONDecodeError (MALFORMED_RESPONSE)",
    "http-429-forever": "raised RateLimitError (RATE_LIMIT)",
    "reset-mid-stream-then-ok": "raised ReadError (TRANSPORT)",
}


def test_mirascope_column_shows_its_known_behaviour() -> None:
    check_column("mirascope", EXPECTED)


def test_mirascope_declares_the_retry_policy_it_runs() -> None:
    check_declared_retries("mirascope")
