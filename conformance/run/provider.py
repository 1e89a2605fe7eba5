"""The fake provider for a run, opened the one way every driver needs it.

In process, a Python adapter that takes an ``http_client`` is handed one whose transport
plays the registry (no sockets: the fast path); otherwise a loopback server plays it and
cases point their ``base_url`` at it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypedDict, Unpack

import httpx

from fakeprovider.registry import ScenarioRegistry
from fakeprovider.server import FakeProviderServer
from fakeprovider.transport import IN_PROCESS_ORIGIN, AsyncFakeTransport

from ..options import Transport


class ServerOptions(TypedDict, total=False):
    """Where a loopback provider listens and how it reads a scenario id from ``model``."""

    host: str
    port: int
    model_prefix: str


@dataclass(frozen=True)
class Provider:
    """An open fake provider: its registry, where cases find it, and the client to hand
    Python adapters that take ``http_client``."""

    registry: ScenarioRegistry
    root_url: str  # IN_PROCESS_ORIGIN when in process: a client without the transport fails fast
    client: httpx.AsyncClient | None  # None on loopback: adapters open their own connections


@asynccontextmanager
async def fake_provider(
    registry: ScenarioRegistry, transport: Transport, **server: Unpack[ServerOptions]
) -> AsyncIterator[Provider]:
    """The provider playing ``registry``, open for the block; ``server`` applies to loopback."""
    if transport == "in-process":
        async with httpx.AsyncClient(transport=AsyncFakeTransport(registry)) as client:
            yield Provider(registry, IN_PROCESS_ORIGIN, client)
    else:
        async with FakeProviderServer(registry, **server) as listening:
            yield Provider(registry, listening.root_url, None)
