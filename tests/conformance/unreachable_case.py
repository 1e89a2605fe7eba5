"""A run line for adapter-session tests whose cases never reach a provider."""

from __future__ import annotations

from conformance.events import RunCase


def unreachable_case(case_id: str, timeout_s: float) -> RunCase:
    """Case ``case_id`` against a base URL nothing listens on, no retries, both timeouts
    ``timeout_s``."""
    return RunCase.model_validate(
        {
            "case": case_id,
            "base_url": "http://127.0.0.1:9/v1",  # never contacted
            "api_key": "k",
            "request": {},
            "retry": {
                "max_retries": 0,
                "initial_delay_ms": 1,
                "max_delay_ms": 1,
                "jitter_ratio": 0,
            },
            "idle_timeout_s": timeout_s,
            "timeout_s": timeout_s,
        }
    )
