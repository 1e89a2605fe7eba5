"""The Python ceiling: a minimal asyncio server writing precomputed bytes.

``python benchmarks/baseline_server.py FIXTURE`` answers every request on every path with
the fixture's first attempt, exactly the bytes and writes ``fakeprovider serve`` sends (head,
one chunk per write, the same pauses, TCP_NODELAY), computed once at start-up. No HTTP
parsing beyond the head's end and Content-Length, no routing, no request log, no watching
for the client leaving: what is left is asyncio's own cost of the same writes.
"""

from __future__ import annotations

import asyncio
import socket
import sys

from fakeprovider.fixtures import load_fixture
from fakeprovider.playback import Playback, prepare
from fakeprovider.wire import LAST_CHUNK, frame_chunk


def precomputed(playback: Playback) -> tuple[bytes, list[tuple[float, bytes]]]:
    """The head, then (seconds to wait, bytes) per write, chunk-framed."""
    writes = [(write.delay_ms / 1000, frame_chunk(write.data)) for write in playback.plan.writes]
    return playback.head, writes


async def serve(head: bytes, writes: list[tuple[float, bytes]]) -> None:
    server = await start(head, writes)
    print(f"baseline listening on port {server.sockets[0].getsockname()[1]}", flush=True)
    await server.serve_forever()


async def start(head: bytes, writes: list[tuple[float, bytes]]) -> asyncio.Server:
    """The baseline listening on a free loopback port."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            request_head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:  # a probe of the port, not a request
            writer.close()
            return
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in request_head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        await reader.readexactly(length)
        writer.write(head)
        await writer.drain()
        for wait_s, data in writes:
            if wait_s:
                await asyncio.sleep(wait_s)
            writer.write(data)
            await writer.drain()
        writer.write(LAST_CHUNK)
        writer.close()

    return await asyncio.start_server(answer, "127.0.0.1", 0, backlog=1024)


def main() -> None:
    attempt = load_fixture(sys.argv[1]).attempts[0]
    playback = prepare(attempt)
    if not isinstance(playback, Playback) or playback.framing != "chunked":
        sys.exit("the baseline plays chunked stream attempts only")
    asyncio.run(serve(*precomputed(playback)))


if __name__ == "__main__":
    main()
