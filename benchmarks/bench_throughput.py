"""Server throughput: SSE chunks/s delivered to raw socket clients.

    python benchmarks/bench_throughput.py [--repeat 3] [--before CHECKOUT] [--write]

At 1, 50, 200 and 1 000 concurrent streams of the 200-chunk stream of streams.py, for our
loopback server (``ours``: scripted writes, one per event), its load mode (``load``:
``serve --coalesce``, a stream's writes in one), the bare-asyncio baseline (the Python
ceiling) and aimock; prints ours/baseline, ours/aimock and load/aimock. ``--before`` adds
``fakeprovider serve`` from another checkout (e.g. ``git worktree add /tmp/before
COMMIT``), for a before/after in the same run. Fewer than 200 concurrent streams run in
consecutive waves until 200 streams are done; each figure is the best of --repeat runs,
the servers taking turns.

Then where the servers' time goes: their processes' CPU time over 1 000 streams of 3
events and 1 000 of 203 gives the cost of a request (everything but the event writes) and
of one event write.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from pathlib import Path

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


async def chunks_per_s(target: Target, concurrency: int) -> float:
    waves = max(1, MIN_STREAMS // concurrency)
    elapsed = 0.0
    for _ in range(waves):
        responses, seconds = await fetch_concurrently(target, concurrency)
        check_complete(responses)
        elapsed += seconds
    return waves * concurrency * EVENTS / elapsed


async def measure_all(targets: list[Target], repeat: int) -> dict[tuple[str, int], float]:
    for target in targets:  # warm up: first connections, Node's JIT, Python's caches
        await chunks_per_s(target, 50)
    best: dict[tuple[str, int], float] = {}
    for concurrency in CONCURRENCY:
        for _ in range(repeat):
            for target in targets:
                rate = await chunks_per_s(target, concurrency)
                key = (target.name, concurrency)
                best[key] = max(best.get(key, rate), rate)
    return best


async def cpu_per_stream(target: Target, events: int) -> float:
    """Seconds of the server's CPU per stream of ``events`` events."""
    before = cpu_seconds(target.pid)
    for _ in range(COST_STREAMS // 50):
        responses, _ = await fetch_concurrently(target, 50)
        check_complete(responses, events)
    return (cpu_seconds(target.pid) - before) / COST_STREAMS


def costs(repeat: int, before: Path | None) -> dict[str, tuple[float, float]]:
    """Per Python server: CPU µs per request (all but the event writes) and per event
    write, from the least CPU per stream of ``repeat`` runs of each length."""
    per_stream: dict[tuple[str, int], float] = {}
    for chunks in (0, CONTENT_CHUNKS):
        scenario = bench_scenario(content_chunks=chunks)
        with contextlib.ExitStack() as running:
            targets = [
                running.enter_context(serving_ours(scenario)),
                running.enter_context(serving_ours(scenario, coalesce=True)),
                running.enter_context(serving_baseline(scenario)),
            ]
            if before is not None:
                targets.append(running.enter_context(serving_ours(scenario, checkout=before)))
            for target in targets * repeat:
                used = asyncio.run(cpu_per_stream(target, chunks + 3))
                key = (target.name, chunks)
                per_stream[key] = min(per_stream.get(key, used), used)
    breakdown = {}
    for name in dict.fromkeys(name for name, _ in per_stream):
        short, long = per_stream[(name, 0)], per_stream[(name, CONTENT_CHUNKS)]
        per_write = (long - short) / CONTENT_CHUNKS
        breakdown[name] = ((short - 3 * per_write) * 1e6, per_write * 1e6)
    return breakdown


def cost_table(breakdown: dict[str, tuple[float, float]]) -> str:
    def per_stream(name: str) -> float:
        request, write = breakdown[name]
        return request + EVENTS * write

    rows = [
        [
            name,
            f"{request:.0f} µs",
            f"{write:.2f} µs",
            f"{per_stream(name):.0f} µs",
            ratio(per_stream(name), per_stream("baseline")),
        ]
        for name, (request, write) in breakdown.items()
    ]
    header = ["server CPU", "per request", "per event write", f"per {EVENTS}-event stream"]
    return markdown_table([*header, "stream / baseline's"], rows)


def describe_checkout(checkout: Path) -> str:
    """The commit a checkout is at, for the results."""
    shown = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
        check=False,
    )
    return f"commit {shown.stdout.strip()}" if shown.returncode == 0 else str(checkout)


RATIOS = (("ours", "baseline"), ("ours", "aimock"), ("load", "aimock"), ("ours", "before"))


def table(rates: dict[tuple[str, int], float], names: list[str]) -> str:
    shown = [(mine, other) for mine, other in RATIOS if other in names]
    header = ["streams", *(f"{name} chunks/s" for name in names)]
    header += [f"{mine}/{other}" for mine, other in shown]
    rows = []
    for concurrency in CONCURRENCY:
        row = [f"{concurrency:,}", *(f"{rates[(name, concurrency)]:,.0f}" for name in names)]
        row += [
            ratio(rates[(mine, concurrency)], rates[(other, concurrency)]) for mine, other in shown
        ]
        rows.append(row)
    return markdown_table(header, rows)


def main() -> None:
    parser = arguments(__doc__ or "")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (the best wins)")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="CHECKOUT",
        help="also measure fakeprovider serve from this working tree (an earlier commit)",
    )
    args = parser.parse_args()
    raise_descriptor_limit(max(CONCURRENCY) + 100)  # the servers inherit it
    scenario = bench_scenario()
    notes = [
        f"Each stream: {EVENTS} SSE events (one HTTP chunk each) of one 200-piece reply; "
        f"chunks/s counts events. Best of {args.repeat}; ratios are of chunks/s."
    ]
    if args.before is not None:
        notes.append(f"before: fakeprovider serve from {describe_checkout(args.before)}.")
    with serving_all(scenario, load=True, before=args.before) as (targets, aimock_missing):
        rates = asyncio.run(measure_all(targets, args.repeat))
    if aimock_missing:
        notes.append(f"aimock was not measured: {aimock_missing}.")
    report = "\n\n".join(
        [
            table(rates, [target.name for target in targets]),
            "\n".join(notes),
            "Where the servers' time goes: CPU time of each server process (user and system) "
            f"over 1 000 streams of 3 events and 1 000 of {EVENTS}, the least of {args.repeat}:",
            cost_table(costs(args.repeat, args.before)),
        ]
    )
    print(report)
    if args.write:
        write_section("throughput", command_line(), "## Server throughput\n\n" + report)


if __name__ == "__main__":
    main()
