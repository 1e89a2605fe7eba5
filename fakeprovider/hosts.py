"""Which addresses the loopback servers bind, and which ``Host`` names the control API
answers to: a defence against DNS rebinding.

A web page can make a browser send requests to 127.0.0.1 under a name of its own whose DNS
answer it points there; the request then carries that name in ``Host``. The control API has
no authentication and the request log keeps clients' headers (``Authorization`` included),
so both answer only to ``localhost``, to an IP address (which no rebinding can use), to the
name the server was bound to, and to names given explicitly (``*`` for any).
"""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Iterable

ANY_HOST = "*"
"""An allowed-host name that turns the check off."""
LOCAL_NAME = "localhost"
_WILDCARDS = ("", "0.0.0.0", "::")


def http_origin(host: str, port: int) -> str:
    """``http://HOST:PORT`` of a server bound to ``host`` and ``port``: every such URL the
    provider prints or hands out is made here, so an IPv6 host is always in brackets."""
    return f"http://{url_host(host)}:{port}"


def url_host(host: str) -> str:
    """The host to put in a URL for a server bound to ``host``: a wildcard bind is reached
    on loopback, an IPv6 address goes in brackets."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host).version == 6:
            return f"[{host}]"
    return host


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps a server on this machine: ``localhost`` or a loopback
    address. A wildcard (``0.0.0.0``, ``::``) or any other name is not."""
    if host.lower() == LOCAL_NAME:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HostCheck:
    """Decides whether a request's ``Host`` header names this server, bound to ``bound``
    on ``port``; ``allowed`` adds names (``*``: any)."""

    def __init__(self, bound: str, allowed: Iterable[str] = ()) -> None:
        names = {name.lower() for name in allowed}
        self.any = ANY_HOST in names
        self._names = names | {LOCAL_NAME}
        if bound not in _WILDCARDS:
            self._names.add(bound.lower())

    def allows(self, host_header: str | None, port: int) -> bool:
        """A request without ``Host`` (HTTP/1.0) is allowed: a browser always sends one."""
        if self.any or host_header is None:
            return True
        name, given_port = _split(host_header.strip().lower())
        if given_port is not None and given_port != str(port):
            return False
        return name in self._names or _is_ip_address(name)


def _split(host: str) -> tuple[str, str | None]:
    """``[::1]:80`` -> (``::1``, ``80``); ``localhost`` -> (``localhost``, None)."""
    if host.startswith("["):
        address, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return "", None  # malformed: names nothing
        return address, rest[1:] if rest else None
    if host.count(":") == 1:
        name, _, port = host.partition(":")
        return name, port
    return host, None  # a bare name, or an IPv6 address without brackets


def _is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
