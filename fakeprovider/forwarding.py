"""Where the recording proxy sends a request: the upstream's origin, never another (pure).

The URL is built from parts, never by joining strings: a request target such as
``@127.0.0.1:9/x`` glued after ``http://upstream`` would make the upstream a userinfo and
send the request elsewhere. Only origin-form targets (RFC 9112 §3.2.1) are forwarded; their
path is appended to the upstream's path and their query to its query.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import httpx

from .errors import FakeProviderError
from .redaction import redacted_url


class ForwardingError(FakeProviderError, ValueError):
    """An upstream URL or request target the recording proxy will not forward to."""


def upstream_origin(text: str) -> httpx.URL:
    """``--upstream`` parsed: an absolute http(s) URL; raises ForwardingError."""
    shown = redacted_url(text)
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as error:
        raise ForwardingError(f"upstream {shown!r} is not a URL: {error}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ForwardingError(f"upstream {shown!r} is not an http:// or https:// URL with a host")
    if url.port is not None and not 0 < url.port < 65536:
        raise ForwardingError(f"upstream {shown!r} has no valid port")
    if url.fragment:
        raise ForwardingError(f"upstream {shown!r} has a fragment, which a request cannot carry")
    return url


def forwarded_url(upstream: httpx.URL, target: str) -> httpx.URL:
    """The URL a request for ``target`` goes to; raises ForwardingError if ``target`` is not
    an origin-form path (an absolute URL, ``//host/x``, ``*``, ``host:port``, a dot-segment)."""
    path, _, query = target.partition("?")
    if not path.startswith("/") or path.startswith("//"):
        raise ForwardingError(f"request target {target!r} is not a path beginning with one '/'")
    if "#" in target:
        raise ForwardingError(f"request target {target!r} has a fragment")
    if any(unquote(segment) in (".", "..") for segment in path.split("/")):
        raise ForwardingError(f"request target {target!r} has a '.' or '..' segment")
    base_path, _, base_query = upstream.raw_path.decode("ascii").partition("?")
    queries = [part for part in (base_query, query) if part]
    raw_path = base_path.rstrip("/") + path + ("?" + "&".join(queries) if queries else "")
    # Only the path and query change: scheme, userinfo, host and port stay the upstream's.
    return upstream.copy_with(raw_path=raw_path.encode("ascii"))


_ABSOLUTE_FORM = re.compile(r"(?i:https?)://(?P<authority>[^/?#]*)(?P<rest>[^#]*)")


def origin_form(target: str) -> tuple[str, str | None]:
    """A request target in origin form, and the authority if it came in absolute form
    (``http://127.0.0.1:8765/v1/x?y`` is ``/v1/x?y`` at ``127.0.0.1:8765``), which a server
    must accept (RFC 9112 §3.2.2); any other target as it is, without an authority."""
    absolute = _ABSOLUTE_FORM.fullmatch(target)
    if absolute is None:
        return target, None
    rest = absolute["rest"]
    return (rest if rest.startswith("/") else f"/{rest}"), absolute["authority"]
