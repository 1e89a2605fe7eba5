"""What every loopback server of the fake provider shares: an asyncio server that is a
context manager and knows its port (the provider itself and the recording proxy)."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Self


class ListeningServer:
    """``async with`` starts and stops it; ``port`` is the one bound (0 picks a free one)."""

    _server: asyncio.Server | None = None

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not started")
        port: int = self._server.sockets[0].getsockname()[1]
        return port
