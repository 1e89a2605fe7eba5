"""What the reference adapter sends on each wire it speaks, as data: the endpoint it POSTs
to, the headers that authenticate it, and the error rules of the dialect's providers.

The translator of each wire is chosen beside this table (`AttemptStream`), so that a mutant
can swap one dialect's translator alone.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from conformance.adapters.reference.http_status import ANTHROPIC_ERRORS, CHAT_ERRORS, ErrorRules
from conformance.events import ProtocolDialect, RunCase

ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class Wire:
    """One dialect's HTTP envelope."""

    endpoint: str  # appended to the case's base_url
    auth_headers: Callable[[str], dict[str, str]]  # the api key -> its headers
    errors: ErrorRules

    def url(self, base_url: str) -> str:
        return f"{base_url.rstrip('/')}{self.endpoint}"


WIRES: Mapping[ProtocolDialect, Wire] = {
    # OpenAI SDKs take a base with /v1.
    "chat-completions": Wire(
        "/chat/completions", lambda key: {"Authorization": f"Bearer {key}"}, CHAT_ERRORS
    ),
    # Anthropic SDKs take a base without /v1 (adapter protocol 1.1).
    "anthropic-messages": Wire(
        "/v1/messages",
        lambda key: {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION},
        ANTHROPIC_ERRORS,
    ),
    # The OpenAI SDKs' base again; errors have the chat body (reference dialects.md §3.6).
    "openai-responses": Wire(
        "/responses", lambda key: {"Authorization": f"Bearer {key}"}, CHAT_ERRORS
    ),
}
SPOKEN_DIALECTS: tuple[ProtocolDialect, ...] = tuple(WIRES)


def dialect_of(case: RunCase) -> ProtocolDialect:
    return case.dialect or "chat-completions"


def wire_of(case: RunCase) -> Wire:
    """The case's wire; a KeyError for one the reference does not speak."""
    return WIRES[dialect_of(case)]
