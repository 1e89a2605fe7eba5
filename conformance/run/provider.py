"""The fake provider for a run, opened the one way every driver needs it.

In process, a Python adapter that takes an ``http_client`` is handed one whose transport
plays the registry (no sockets: the fast path); otherwise a loopback server plays it and
cases point their ``base_url`` at it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TypedDict, Unpack

import httpx

from fakeprovider.registry import ScenarioRegistry
from fakeprovider.server import FakeProviderServer
from fakeprovider.transport import IN_PROCESS_ORIGIN, AsyncFakeTransport

from ..adapters.base import AdapterSession, PythonAdapterSession
from ..adapters.watchdog import AdapterLoop
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


class SessionProvider:
    """The fake provider for one adapter session's cases, running where those cases run.

    A subprocess adapter's provider runs on the runner's loop. A Python adapter's cases run
    on the session's own loop (``PythonAdapterSession``: the watchdog), and its provider runs
    on that loop too: adapter and provider then take turns on one loop, in the same order
    every run, as they did on the runner's loop, and a deterministic adapter gets the same
    results run after run. When the session abandons a loop its adapter blocked, the
    provider on it is abandoned too, and :meth:`current` opens another on the fresh loop.
    """

    def __init__(
        self,
        session: AdapterSession,
        registry: ScenarioRegistry,
        transport: Transport,
        server: ServerOptions,
    ) -> None:
        self._session = session
        self._open = functools.partial(fake_provider, registry, transport, **server)
        self._loop: AdapterLoop | None = None  # where the provider runs; None: the runner's
        self._stack = AsyncExitStack()
        self._provider: Provider | None = None
        self._opening = asyncio.Lock()  # cases in flight at once share one provider

    async def current(self) -> Provider:
        """The provider for the next case, opened on the loop that case runs on."""
        async with self._opening:
            loop = self._session.loop if isinstance(self._session, PythonAdapterSession) else None
            if self._provider is None or loop is not self._loop:
                await self.aclose()
                self._loop, self._stack = loop, AsyncExitStack()
                opening = self._stack.enter_async_context(self._open())
                self._provider = await (opening if loop is None else loop.run(opening))
            return self._provider

    async def aclose(self) -> None:
        """Close the provider, unless its loop was abandoned (it is gone with it)."""
        if self._loop is None:
            await self._stack.aclose()
        elif not self._loop.stopped:
            await self._loop.run(self._stack.aclose())
        self._provider = None


@asynccontextmanager
async def session_provider(
    session: AdapterSession,
    registry: ScenarioRegistry,
    transport: Transport,
    **server: Unpack[ServerOptions],
) -> AsyncIterator[SessionProvider]:
    """A :class:`SessionProvider` for ``session``, closed at the end of the block."""
    provider = SessionProvider(session, registry, transport, server)
    try:
        yield provider
    finally:
        await provider.aclose()
