"""Server throughput: SSE chunks/s and MB/s delivered to raw socket clients.

    python benchmarks/bench_throughput.py [--repeat 3] [--write]

At 1, 50, 200 and 1 000 concurrent streams of the 200-chunk stream of streams.py, for our
loopback server, the bare-asyncio baseline (the Python ceiling) and aimock; prints
ours/baseline and ours/aimock. Fewer than 200 concurrent streams run in consecutive waves
until 200 streams are done; each figure is the best of --repeat runs, the servers taking
turns.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from harness import arguments, command_line, raise_descriptor_limit, ratio, write_section
from streams import (
    EVENTS,
    AimockUnavailable,
    Target,
    bench_scenario,
    check_complete,
    fetch_concurrently,
    serving_aimock,
    serving_baseline,
    serving_ours,
)

CONCURRENCY = (1, 50, 200, 1000)
MIN_STREAMS = 200


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


def table(rates: dict[tuple[str, int], Rate], names: list[str]) -> str:
    header = ["streams"]
    for name in names:
        header += [f"{name} chunks/s", f"{name} MB/s"]
    header += ["ours/baseline", "ours/aimock"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    for concurrency in CONCURRENCY:
        row = [f"{concurrency:,}"]
        for name in names:
            rate = rates[(name, concurrency)]
            row += [f"{rate.chunks_per_s:,.0f}", f"{rate.mb_per_s:.1f}"]
        ours = rates[("ours", concurrency)].chunks_per_s
        baseline = rates[("baseline", concurrency)].chunks_per_s
        aimock = rates.get(("aimock", concurrency))
        row += [ratio(ours, baseline), ratio(ours, aimock.chunks_per_s if aimock else None)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


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
    with contextlib.ExitStack() as running:
        targets = [
            running.enter_context(serving_ours(scenario)),
            running.enter_context(serving_baseline(scenario)),
        ]
        try:
            targets.append(running.enter_context(serving_aimock()))
        except AimockUnavailable as error:
            notes.append(f"aimock was not measured: {error}.")
        rates = asyncio.run(measure_all(targets, args.repeat))
    report = table(rates, [target.name for target in targets]) + "\n\n" + "\n".join(notes)
    print(report)
    if args.write:
        write_section("throughput", command_line(), "## Server throughput\n\n" + report)


if __name__ == "__main__":
    main()
