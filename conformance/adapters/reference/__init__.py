"""The sans-IO core of the bundled reference adapter: bytes and payloads in, events out.

No sockets and no clocks: the I/O shell feeds body bytes to an `AttemptReader` (`SSEDecoder`
then the case's dialect's translator: `StreamTranslator` for chat-completions,
`AnthropicTranslator` for Anthropic Messages, `ResponsesTranslator` for OpenAI Responses),
classifies HTTP errors with `classify_http_error` and asks `decide_retry` whether and when
to try again.
`ReferenceAdapter` (adapter.py) is the adapter built on them: the httpx shell (shell.py)
runs one attempt, the retry layer (retry.py) sequences attempts.
"""

from conformance.adapters.reference.adapter import ReferenceAdapter, factory, own_policy
from conformance.adapters.reference.anthropic import AnthropicTranslator
from conformance.adapters.reference.attempt import AttemptReader
from conformance.adapters.reference.failure import Failure
from conformance.adapters.reference.http_status import (
    classify_http_error,
    classify_stream_error,
    code_for_status,
    parse_retry_after,
)
from conformance.adapters.reference.responses import ResponsesTranslator
from conformance.adapters.reference.retry_policy import (
    backoff_delay_ms,
    decide_retry,
    declared_policy,
)
from conformance.adapters.reference.sse import SSEDecoder
from conformance.adapters.reference.translate import DONE_SENTINEL, StreamTranslator

__all__ = [
    "DONE_SENTINEL",
    "AnthropicTranslator",
    "AttemptReader",
    "Failure",
    "ReferenceAdapter",
    "ResponsesTranslator",
    "SSEDecoder",
    "StreamTranslator",
    "backoff_delay_ms",
    "classify_http_error",
    "classify_stream_error",
    "code_for_status",
    "decide_retry",
    "declared_policy",
    "factory",
    "own_policy",
    "parse_retry_after",
]
