"""The retry policies the libraries run by default, as their shims declare them in the hello
(protocol ``retry_policy``), read from the source of the versions pyproject.toml pins.

Every library but litellm's own-parser route retries in openai-python's client, the
Stainless-generated loop (the same rules in openai 2.54, under llama-index and mirascope, and
3.57), with its default budget or one the library hands it (llama-index 3, haystack 5);
smolagents runs a second layer around it that no single policy describes (its shim says why):

- ``openai/_constants.py``: ``DEFAULT_MAX_RETRIES = 2``, ``INITIAL_RETRY_DELAY = 0.5``,
  ``MAX_RETRY_DELAY = 8.0``, ``MAX_RETRY_AFTER_DELAY = 2 * 60``;
- ``openai/_base_client.py`` ``_should_retry``: a Retry-After over 120 s is never retried;
  ``x-should-retry: true|false`` decides; else 408, 409, 429 and every status >= 500;
- ``_parse_retry_after_header``: ``retry-after-ms``, then ``retry-after`` (seconds, then an
  HTTP date); ``_calculate_retry_timeout``: such a wait in (0, 120] s exactly, otherwise
  ``min(0.5 * 2**n, 8) * (1 - 0.25 * random())`` s, n the retries made: 0.375 s to 8 s;
- ``request``: a timeout or a connection error before the response is retried
  (``APITimeoutError``, ``APIConnectionError``); the retry loop ends when the response's
  headers arrive, so nothing that fails in a streamed body is retried.
"""

from __future__ import annotations

from ...codes import TIMEOUT, TRANSPORT
from ...events import DeclaredRetryPolicy

OPENAI_SDK_MAX_RETRIES = 2


def openai_sdk(max_retries: int = OPENAI_SDK_MAX_RETRIES) -> DeclaredRetryPolicy:
    """openai-python's retry loop with ``max_retries`` (its default: 2)."""
    return DeclaredRetryPolicy(
        max_retries=max_retries,
        statuses=[408, 409, 429, "5xx"],
        codes=[TRANSPORT, TIMEOUT],
        mid_stream=False,
        backoff_min_s=0.375,
        backoff_max_s=8.0,
        retry_after=["retry-after-ms", "retry-after"],
        retry_after_max_s=120.0,
        over_cap="no-retry",
        should_retry_header=True,
    )


ANTHROPIC_SDK_MAX_RETRIES = 2


def anthropic_sdk(max_retries: int = ANTHROPIC_SDK_MAX_RETRIES) -> DeclaredRetryPolicy:
    """anthropic-python 2.15's loop, the same Stainless rules but one: a directed wait is
    never capped. In ``anthropic/``:

    - ``_constants.py:11,14-15``: ``DEFAULT_MAX_RETRIES = 2``, ``INITIAL_RETRY_DELAY = 0.5``,
      ``MAX_RETRY_DELAY = 8.0``;
    - ``_base_client.py:939-972`` ``_should_retry``: ``x-should-retry: true|false`` decides,
      else 408, 409, 429 and every status >= 500 (so 529 ``overloaded_error``);
    - ``_base_client.py:974-997, 1466-1474``: a timeout or a connection error before the
      response (``APITimeoutError`` is an ``APIConnectionError``) is retried; the loop
      (1276-1349) returns at the headers, so an ``event: error`` in the body is not;
    - ``_base_client.py:879-911`` ``_parse_retry_after_header``: ``retry-after-ms``, then
      ``retry-after`` (seconds, then an HTTP date); ``913-937`` ``_calculate_retry_timeout``:
      any such wait over 0 is waited exactly (up to 4 294 967 s, a ``time.sleep`` limit, no
      60 s cap as in earlier releases), otherwise ``min(0.5 * 2**n, 8) * (1 - 0.25 *
      random())`` s, n the retries made: 0.375 s to 8 s.
    """
    return DeclaredRetryPolicy(
        max_retries=max_retries,
        statuses=[408, 409, 429, "5xx"],
        codes=[TRANSPORT, TIMEOUT],
        mid_stream=False,
        backoff_min_s=0.375,
        backoff_max_s=8.0,
        retry_after=["retry-after-ms", "retry-after"],
        retry_after_max_s=None,
        should_retry_header=True,
    )


NO_RETRIES = DeclaredRetryPolicy(max_retries=0, backoff_min_s=0.0, backoff_max_s=0.0)
"""A library whose default makes one request and no retry."""
