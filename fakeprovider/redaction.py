"""Which values are credentials, and the text a recording keeps in their place (pure).

A name is a secret's when any part of it suggests one: ``Authorization``,
``Ocp-Apim-Subscription-Key``, ``cf-aig-authorization``, ``?api_key=``, ``X-Amz-Signature``.
The rule errs towards hiding: a header such as ``x-ratelimit-remaining-tokens`` loses its
value too, since a recording that leaks one key costs more than one that lacks a count.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

REDACTED = "[REDACTED]"
_SECRET_WORDS = (
    "key",  # api-key, x-api-key, api_key, Ocp-Apim-Subscription-Key, ?key=
    "auth",  # Authorization, cf-aig-authorization, helicone-auth, x-auth
    "token",
    "secret",
    "signature",
    "credential",
    "cookie",
    "session",
    "password",
    "passwd",
)
_SECRET_NAMES = frozenset({"sig", "pwd"})  # short query names (a signed URL's ?sig=)


def is_secret_name(name: str) -> bool:
    """Whether a header or query parameter called ``name`` may carry a credential."""
    lowered = name.lower()
    return lowered in _SECRET_NAMES or any(word in lowered for word in _SECRET_WORDS)


def redacted_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """``headers`` in order, each secret one's value replaced by :data:`REDACTED`."""
    return [(name, REDACTED if is_secret_name(name) else value) for name, value in headers]


def redacted_url(url: str) -> str:
    """``url`` with its userinfo and the values of its secret query parameters replaced.

    Everything else is kept as written, so the result reads like the URL it stands for.
    """
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = "&".join(_redacted_parameter(parameter) for parameter in parts.query.split("&"))
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _redacted_parameter(parameter: str) -> str:
    name, equals, _ = parameter.partition("=")
    if equals and is_secret_name(unquote(name.replace("+", " "))):
        return f"{name}={REDACTED}"
    return parameter
