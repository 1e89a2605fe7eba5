"""Whether the control API holds up the streams: paced streams' largest gap between events
while the server answers a heavy control request, against the same streams left alone.

    python benchmarks/bench_loop_held.py [--streams 20] [--pause-ms 30] [--repeat 3] [--write]

``fakeprovider serve`` in its own process plays ``--streams`` paced streams (the stream of
streams.py, 20 content chunks, ``--pause-ms`` before every event but ``[DONE]``) at once;
meanwhile the client asks one of: nothing (the baseline), a 4 MB valid PUT, a 3.4 MiB PUT
of 200 000 invalid steps, or the request log of 500 requests with 30 KiB bodies. The
figure is the largest gap a client measured between two paced events, and its ratio to
the baseline's of the same run; the least of --repeat (the machine's other work only adds
lateness).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Awaitable, Callable

from harness import arguments, command_line, markdown_table, ratio, write_section
from streams import Target, bench_scenario, check_complete, fetch_concurrently, serving_ours

CONTENT_CHUNKS = 20
LOGGED_REQUESTS = 500
LOGGED_BODY_BYTES = 30 * 1024


async def _request(target: Target, method: str, path: str, body: bytes = b"") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", target.port)
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    writer.write(head.encode() + body)
    answer = await reader.read()
    writer.close()
    return answer


def valid_put_body(size: int) -> bytes:
    steps = [{"raw": "x" * 1000}] * (size // 1012)
    return json.dumps({"attempts": [{"stream": {"steps": [*steps, "done"]}}]}).encode()


def invalid_put_body() -> bytes:
    steps = [{"pause_ms": -1}] * 200_000
    return json.dumps({"attempts": [{"stream": {"steps": steps}}]}).encode()


async def fill_log(target: Target) -> None:
    body = json.dumps({"model": "x", "padding": "p" * LOGGED_BODY_BYTES}).encode()
    for _ in range(LOGGED_REQUESTS // 50):
        await asyncio.gather(*(_request(target, "POST", target.path, body) for _ in range(50)))


Load = Callable[[Target], Awaitable[object]]


def loads() -> dict[str, Load | None]:
    valid, invalid = valid_put_body(4_000_000), invalid_put_body()
    return {
        "nothing (baseline)": None,
        "PUT 4 MB valid": lambda t: _request(t, "PUT", "/_scenarios/big", valid),
        "PUT 3.4 MiB invalid": lambda t: _request(t, "PUT", "/_scenarios/bad", invalid),
        f"GET log of {LOGGED_REQUESTS}": lambda t: _request(t, "GET", "/_scenarios/bench/requests"),
    }


async def largest_gap_ms(target: Target, streams: int, load: Load | None, pause_ms: float) -> float:
    async def loaded() -> None:
        await asyncio.sleep(3 * pause_ms / 1000)  # the streams are under way
        if load is not None:
            await load(target)

    (responses, _), _ = await asyncio.gather(fetch_concurrently(target, streams), loaded())
    check_complete(responses, CONTENT_CHUNKS + 3)
    gaps = [
        later - earlier
        for response in responses
        for earlier, later in itertools.pairwise(response.event_times()[:-1])
    ]
    return max(gaps) * 1000


async def measure(target: Target, streams: int, pause_ms: float, repeat: int) -> dict[str, float]:
    await fill_log(target)
    best: dict[str, float] = {}
    for _ in range(repeat):
        for name, load in loads().items():
            gap = await largest_gap_ms(target, streams, load, pause_ms)
            best[name] = min(gap, best.get(name, gap))
    return best


def main() -> None:
    parser = arguments(__doc__ or "")
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--pause-ms", type=float, default=30.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    scenario = bench_scenario(pause_ms=args.pause_ms, content_chunks=CONTENT_CHUNKS)
    began = time.perf_counter()
    with serving_ours(scenario) as target:
        best = asyncio.run(measure(target, args.streams, args.pause_ms, args.repeat))
    baseline = best["nothing (baseline)"]
    rows = [[name, f"{gap:.0f}", ratio(gap, baseline)] for name, gap in best.items()]
    table = markdown_table(["meanwhile", "largest gap ms", "/ baseline"], rows)
    notes = [
        f"{args.streams} streams, {args.pause_ms:g} ms scripted between events; best of "
        f"{args.repeat}; {time.perf_counter() - began:.0f} s in all."
    ]
    print(table)
    print(*notes)
    if args.write:
        body = "## Control requests beside paced streams\n\n" + " ".join(notes) + "\n\n" + table
        write_section("loop-held", command_line(), body)


if __name__ == "__main__":
    main()
