"""Server throughput: SSE chunks/s and MB/s delivered to raw socket clients.

    python benchmarks/bench_throughput.py [--repeat 3] [--write]

At 1, 50, 200 and 1 000 concurrent streams of the 200-chunk stream of streams.py, for our
loopback server, the bare-asyncio baseline (the Python ceiling) and aimock; prints
ours/baseline and ours/aimock. Fewer than 200 concurrent streams run in consecutive waves
until 200 streams are done; each figure is the best of --repeat runs, the servers taking
turns.

Then where our server's time goes, against the baseline's: the server processes' CPU time
over 1 000 streams of 3 events and 1 000 of 203 gives the cost of a request (everything
but the event writes) and of one event write.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from harness import (
    arguments,
    command_line,
    cpu_seconds,
    markdown_table,
    raise_descriptor_limit,
    ratio,
    write_section,
)
from streams import (
    CONTENT_CHUNKS,
    EVENTS,
    Target,
    bench_scenario,
    check_complete,
    fetch_concurrently,
    serving_all,
    serving_baseline,
    serving_ours,
)

CONCURRENCY = (1, 50, 200, 1000)
MIN_STREAMS = 200
COST_STREAMS = 1000  # per stream length, 50 at a time


@dataclass(frozen=True)
class Rate:
    chunks_per_s: float
    mb_per_s: float


async def measure(target: Target, concurrency: int) -> Rate:
    waves = max(1, MIN_STREAMS // concurrency)
    received_bytes, elapsed = 0, 0.0
    for _ in range(waves):
        responses, seconds = await fetch_concurrently(target, concurrency)
        check_complete(responses)
        received_bytes += sum(len(response.data) for response in responses)
        elapsed += seconds
    return Rate(waves * concurrency * EVENTS / elapsed, received_bytes / elapsed / 1e6)


async def measure_all(targets: list[Target], repeat: int) -> dict[tuple[str, int], Rate]:
    for target in targets:  # warm up: first connections, Node's JIT, Python's caches
        await measure(target, 50)
    best: dict[tuple[str, int], Rate] = {}
    for concurrency in CONCURRENCY:
        for _ in range(repeat):
            for target in targets:
                rate = await measure(target, concurrency)
                key = (target.name, concurrency)
                if key not in best or rate.chunks_per_s > best[key].chunks_per_s:
                    best[key] = rate
    return best


async def cpu_per_stream(target: Target, events: int) -> float:
    """Seconds of the server's CPU per stream of ``events`` events."""
    before = cpu_seconds(target.pid)
    for _ in range(COST_STREAMS // 50):
        responses, _ = await fetch_concurrently(target, 50)
        check_complete(responses, events)
    return (cpu_seconds(target.pid) - before) / COST_STREAMS


def costs(repeat: int) -> dict[str, tuple[float, float]]:
    """Per server: CPU µs per request (all but the event writes) and per event write, from
    the least CPU per stream of ``repeat`` runs of each length."""
    per_stream: dict[tuple[str, int], float] = {}
    for chunks in (0, CONTENT_CHUNKS):
        scenario = bench_scenario(content_chunks=chunks)
        with serving_ours(scenario) as ours, serving_baseline(scenario) as baseline:
            for target in [ours, baseline] * repeat:
                used = asyncio.run(cpu_per_stream(target, chunks + 3))
                key = (target.name, chunks)
                per_stream[key] = min(per_stream.get(key, used), used)
    breakdown = {}
    for name in ("ours", "baseline"):
        short, long = per_stream[(name, 0)], per_stream[(name, CONTENT_CHUNKS)]
        per_write = (long - short) / CONTENT_CHUNKS
        breakdown[name] = ((short - 3 * per_write) * 1e6, per_write * 1e6)
    return breakdown


def cost_table(breakdown: dict[str, tuple[float, float]]) -> str:
    def per_stream(name: str) -> float:
        request, write = breakdown[name]
        return request + EVENTS * write

    rows = [
        [name, f"{request:.0f} µs", f"{write:.2f} µs", f"{per_stream(name):.0f} µs"]
        for name, (request, write) in breakdown.items()
    ]
    (ours_request, ours_write), (base_request, base_write) = (
        breakdown["ours"],
        breakdown["baseline"],
    )
    rows.append(
        [
            "ours/baseline",
            ratio(ours_request, base_request),
            ratio(ours_write, base_write),
            ratio(per_stream("ours"), per_stream("baseline")),
        ]
    )
    header = ["server CPU", "per request", "per event write", f"per {EVENTS}-event stream"]
    return markdown_table(header, rows)


def table(rates: dict[tuple[str, int], Rate], names: list[str]) -> str:
    header = ["streams"]
    for name in names:
        header += [f"{name} chunks/s", f"{name} MB/s"]
    header += ["ours/baseline", "ours/aimock"]
    rows = []
    for concurrency in CONCURRENCY:
        row = [f"{concurrency:,}"]
        for name in names:
            rate = rates[(name, concurrency)]
            row += [f"{rate.chunks_per_s:,.0f}", f"{rate.mb_per_s:.1f}"]
        ours = rates[("ours", concurrency)].chunks_per_s
        baseline = rates[("baseline", concurrency)].chunks_per_s
        aimock = rates.get(("aimock", concurrency))
        row += [ratio(ours, baseline), ratio(ours, aimock.chunks_per_s if aimock else None)]
        rows.append(row)
    return markdown_table(header, rows)


def main() -> None:
    parser = arguments(__doc__ or "")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (the best wins)")
    args = parser.parse_args()
    raise_descriptor_limit(max(CONCURRENCY) + 100)  # the servers inherit it
    scenario = bench_scenario()
    notes = [
        f"Each stream: {EVENTS} SSE events (one HTTP chunk each) of one 200-piece reply; "
        f"chunks/s counts events, MB/s every byte received (heads included). Best of "
        f"{args.repeat}; ratios are of chunks/s."
    ]
    with serving_all(scenario) as (targets, aimock_missing):
        rates = asyncio.run(measure_all(targets, args.repeat))
    if aimock_missing:
        notes.append(f"aimock was not measured: {aimock_missing}.")
    report = "\n\n".join(
        [
            table(rates, [target.name for target in targets]),
            "\n".join(notes),
            "Where the server's time goes: CPU time of the server process (user and system) "
            f"over 1 000 streams of 3 events and 1 000 of {EVENTS}, the least of {args.repeat}:",
            cost_table(costs(args.repeat)),
        ]
    )
    print(report)
    if args.write:
        write_section("throughput", command_line(), "## Server throughput\n\n" + report)


if __name__ == "__main__":
    main()
