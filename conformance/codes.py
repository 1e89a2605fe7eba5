"""Canonical failure codes (INVARIANTS.md, "Canonical codes"), and the suite's own exception root.

Codes are plain strings on the wire; these constants exist so that no module spells one by hand.
A code says how an adapter's stream failed; a :class:`ConformanceError` says that the suite
could not do a step of its own. The root lives here, on the lowest floor and importing only the
standard library, so that every stage can derive from it, the pytest plugin included, which
must cost nothing in sessions that do not use it.
"""

import re
from typing import Final

EMPTY_RESPONSE: Final = "EMPTY_RESPONSE"
MALFORMED_TOOL_CALL: Final = "MALFORMED_TOOL_CALL"
MALFORMED_RESPONSE: Final = "MALFORMED_RESPONSE"
STREAM_CLOSED: Final = "STREAM_CLOSED"
TRANSPORT: Final = "TRANSPORT"
TIMEOUT: Final = "TIMEOUT"
RATE_LIMIT: Final = "RATE_LIMIT"
SERVER: Final = "SERVER"
AUTH: Final = "AUTH"
QUOTA: Final = "QUOTA"
INVALID_REQUEST: Final = "INVALID_REQUEST"
CONTEXT_WINDOW_EXCEEDED: Final = "CONTEXT_WINDOW_EXCEEDED"
ABORTED: Final = "ABORTED"
# A library's typed refusal of a `length` finish with no output (E4): the token limit cut
# the attempt before anything was produced; retried unchanged it hits the same limit.
MAX_TOKENS: Final = "MAX_TOKENS"
# Non-success ends of a turn (protocol 1.1): the model declined (Anthropic `refusal`), the
# provider paused a long turn the caller must continue (`pause_turn`), a filter cut it.
REFUSAL: Final = "REFUSAL"
PAUSE_TURN: Final = "PAUSE_TURN"
CONTENT_FILTER: Final = "CONTENT_FILTER"

# The fixed members of the vocabulary; `HTTP_<status>` and upper-cased wire finish reasons
# (`CONTENT_FILTER`, ...) are open-ended and built by the helpers below.
CANONICAL_CODES: Final = frozenset(
    {
        EMPTY_RESPONSE,
        MALFORMED_TOOL_CALL,
        MALFORMED_RESPONSE,
        STREAM_CLOSED,
        TRANSPORT,
        TIMEOUT,
        RATE_LIMIT,
        SERVER,
        AUTH,
        QUOTA,
        INVALID_REQUEST,
        CONTEXT_WINDOW_EXCEEDED,
        ABORTED,
        MAX_TOKENS,
        REFUSAL,
        PAUSE_TURN,
        CONTENT_FILTER,
    }
)

# Transient failures: the attempt produced nothing durable, so repeating it is safe.
RESPONSES_ERROR_CODES: Final[dict[str, str]] = {
    "rate_limit_exceeded": RATE_LIMIT,
    "server_error": SERVER,
    "insufficient_quota": QUOTA,
    "context_length_exceeded": CONTEXT_WINDOW_EXCEEDED,
}
"""The canonical code of an OpenAI Responses error ``code`` (an ``error`` event's,
``response.failed``'s; reference dialects.md §3.4, RS-H1); another is upper-cased."""

DEFAULT_RETRYABLE_CODES: Final[tuple[str, ...]] = (
    EMPTY_RESPONSE,
    MALFORMED_TOOL_CALL,
    RATE_LIMIT,
    SERVER,
    TIMEOUT,
    TRANSPORT,
)


def http_status_code(status: int) -> str:
    """The code for an HTTP status that no more specific rule classifies."""
    return f"HTTP_{status}"


def finish_reason_code(reason: str) -> str:
    """The code for a wire `finish_reason` outside stop/tool_calls/length."""
    return reason.upper()


_OPEN_ENDED = re.compile(r"HTTP_[1-5][0-9]{2}|[A-Z][A-Z0-9_]*")


def is_canonical(code: str | None) -> bool:
    """A code of the vocabulary: a fixed member, ``HTTP_<status>`` or an upper-cased wire
    finish reason. An exception's own name (``TypeError``) is none of them."""
    return code is not None and (code in CANONICAL_CODES or bool(_OPEN_ENDED.fullmatch(code)))


class ConformanceError(Exception):
    """The root of every exception the suite raises: ``except ConformanceError`` once.

    Each class is defined next to the code that raises it, in the module named after it
    below. A builtin in parentheses is a second base, kept so that callers catching it still
    do. The underscored ones never leave their module; they are listed so that the tree is the
    whole truth, which ``tests/test_errors.py`` checks.

    ConformanceError
      + EventDecodeError (ValueError)          events: a protocol line that is no known message
        + EventFieldError                      events: a known event with an invalid field
      + RetryPolicyError (ValueError)          options: a scenario's retry_policy does not fit
      + AdapterLoadError                       adapters.base: an adapter cannot be started
      + MalformedChunkError (ValueError)       adapters.reference.chunk: JSON that is no chunk
      + ReplayError (ValueError)               report.transcript: a case cannot be rebuilt
      + SavedFileError (ValueError)            results: a saved results/baseline file is unusable
      + UnknownSpecError (ValueError)          spec: a revision unknown, or a contract it lacked
      + BaselineError (ValueError)             report.baseline: a baseline file cannot be read
      + CausesError (ValueError)               report.upstream: a known-causes file is malformed
      + SiteInputError (ValueError)            report.site: a column the site cannot be built from
      + PropertyFailureError (AssertionError)  run.properties: a generated case breaks a family
      + SuiteUnavailableError                  pytest_plugin: no fixtures, or no adapter
      + GatewayUnreachableError                gateway.runner: no answer before the run
      + InputError                             cli.options: exit 2, also a ClickException
      + SetupError                             cli.options: exit 3, also a ClickException
      + _MalformedError                        oracle.readers.chat: JSON whose shape is no chunk
      + MalformedEventError                    oracle.readers.named: JSON that is no such event
      + InvalidEventError                      adapters.reference.payload: no event of its wire
      + _ProtocolError                         adapters.base: an item that is not an event
      + _AdapterExitedError                    adapters.subprocess: stdout closed, stdin gone
      + _LineTooLongError                      adapters.subprocess: a line past MAX_LINE_BYTES
      + _HandshakeError                        adapters.subprocess: no hello the suite speaks

    ``PropertyFailureError`` stays an ``AssertionError``: a property that does not hold is a
    failed check, not a fault of the suite.
    """
