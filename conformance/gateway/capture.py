"""What a gateway sent back for one request: head, body reads with their timing, ending.

The only I/O of gateway mode besides the fake upstream: one POST, read to the end (or
until no byte came for ``idle_timeout_s``, the case's ``timeout_s`` ran out, or the case's
account of kept bytes is full: then reading stops), with nothing interpreted. The lint and
the reference translator judge the capture afterwards.
"""

from __future__ import annotations

import asyncio
import base64
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from fakeprovider.proxy import transport_ending
from fakeprovider.recording import ClientEnding

from ..kept import Kept, byte_count


@dataclass(frozen=True)
class GatewayRead:
    at_ms: float  # since the request was sent
    data: bytes


@dataclass(frozen=True)
class GatewayCapture:
    status: int | None  # None: no response at all
    headers: tuple[tuple[str, str], ...] = ()
    reads: tuple[GatewayRead, ...] = ()
    ending: ClientEnding = "complete"
    detail: str = ""  # the transport error, when there was one
    duration_s: float = 0.0
    connected: bool = True  # False: the gateway could not be reached at all

    @property
    def body(self) -> bytes:
        return b"".join(read.data for read in self.reads)

    def to_json(self) -> dict[str, Any]:
        """The capture as the results keep it; bytes as base64, so nothing is lost."""
        return {
            "status": self.status,
            "headers": [list(pair) for pair in self.headers],
            "reads": [
                {"at_ms": read.at_ms, "data_base64": base64.b64encode(read.data).decode()}
                for read in self.reads
            ],
            "ending": self.ending,
            "detail": self.detail,
        }


@dataclass
class _Reading:
    kept: Kept
    started: float = field(default_factory=time.monotonic)
    reads: list[GatewayRead] = field(default_factory=list)

    def add(self, data: bytes) -> bool:
        """Keep what of ``data`` fits the case's account; False if not all of it did."""
        size = self.kept.charge("gateway-capture", len(data))
        if size:
            at_ms = round((time.monotonic() - self.started) * 1000, 3)
            self.reads.append(GatewayRead(at_ms, data[:size]))
        return size == len(data)


async def capture_response(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    idle_timeout_s: float,
    timeout_s: float,
    kept: Kept | None = None,
) -> GatewayCapture:
    """POST ``body`` to ``url`` and keep every byte of the answer as it arrived, within
    ``kept`` (a case's account): an answer past it is a ``timeout``, never read further."""
    reading = _Reading(Kept() if kept is None else kept)
    status: int | None = None
    response_headers: tuple[tuple[str, str], ...] = ()
    ending: ClientEnding = "complete"
    detail = ""
    connected = True
    try:
        async with asyncio.timeout(timeout_s):
            async with client.stream(
                "POST", url, content=body, headers=headers, timeout=httpx.Timeout(idle_timeout_s)
            ) as response:
                status = response.status_code
                response_headers = tuple(response.headers.multi_items())
                async for data in response.aiter_raw():
                    if not reading.add(data):
                        cap = byte_count(reading.kept.max_bytes)
                        ending = "timeout"
                        detail = f"the answer had not ended at {cap} (MAX_CASE_BYTES): not read on"
                        break
    except TimeoutError:
        ending, detail = "timeout", f"the case's {timeout_s:g} s ran out"
    except httpx.ConnectError as error:
        ending, detail = "no-response", f"{type(error).__name__}: {error}"
        connected = False
    except httpx.TransportError as error:
        ending, detail = transport_ending(error), f"{type(error).__name__}: {error}"
    if status is None and ending == "complete":
        ending = "no-response"
    return GatewayCapture(
        status,
        response_headers,
        tuple(reading.reads),
        ending,
        detail,
        round(time.monotonic() - reading.started, 4),
        connected,
    )
