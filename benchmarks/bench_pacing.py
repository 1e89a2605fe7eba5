"""Pacing fidelity: how far the gaps a client measures stray from the scripted 5 ms pauses.

    python benchmarks/bench_pacing.py [--repeat 3] [--write]

The stream of streams.py with a 5 ms pause before every event but ``[DONE]``, played by
our loopback server, the bare-asyncio baseline (``asyncio.sleep``) and aimock
(``--latency 5``), to 1 stream (five times in turn) and to 100 at once. A gap is the time
between the arrivals of two consecutive paced events at the client; p50 and p99 over all
streams, and the ratios of the p99s. Of --repeat runs (the servers taking turns), each
server's run with the lowest p99 is kept: the machine's other work only ever adds lateness.
"""

from __future__ import annotations

import asyncio
import itertools

from harness import arguments, command_line, markdown_table, percentile, ratio, write_section
from streams import (
    EVENTS,
    Target,
    bench_scenario,
    check_complete,
    fetch_concurrently,
    serving_all,
)

PAUSE_MS = 5.0
RUNS = ((1, 5), (100, 1))  # (concurrent streams, consecutive waves)


async def gaps_ms(target: Target, concurrency: int, waves: int) -> list[float]:
    gaps: list[float] = []
    for _ in range(waves):
        responses, _ = await fetch_concurrently(target, concurrency)
        check_complete(responses)
        for response in responses:
            paced = response.event_times()[:-1]  # [DONE] follows the finish chunk at once
            gaps += [(later - earlier) * 1000 for earlier, later in itertools.pairwise(paced)]
    return gaps


async def measure_all(targets: list[Target], repeat: int) -> dict[tuple[str, int], list[float]]:
    best: dict[tuple[str, int], list[float]] = {}
    for concurrency, waves in RUNS:
        for _ in range(repeat):
            for target in targets:
                gaps = await gaps_ms(target, concurrency, waves)
                key = (target.name, concurrency)
                if key not in best or percentile(gaps, 0.99) < percentile(best[key], 0.99):
                    best[key] = gaps
    return best


def table(measured: dict[tuple[str, int], list[float]], names: list[str]) -> str:
    header = ["streams"]
    for name in names:
        header += [f"{name} p50 ms", f"{name} p99 ms"]
    header += ["p99 ours/baseline", "p99 ours/aimock"]
    rows = []
    for concurrency, _ in RUNS:
        p99 = {name: percentile(measured[(name, concurrency)], 0.99) for name in names}
        row = [str(concurrency)]
        for name in names:
            row += [f"{percentile(measured[(name, concurrency)], 0.5):.2f}", f"{p99[name]:.2f}"]
        row += [ratio(p99["ours"], p99["baseline"]), ratio(p99["ours"], p99.get("aimock"))]
        rows.append(row)
    return markdown_table(header, rows)


def main() -> None:
    parser = arguments(__doc__ or "")
    parser.add_argument("--repeat", type=int, default=3, help="runs (the lowest p99 is kept)")
    args = parser.parse_args()
    scenario = bench_scenario(pause_ms=PAUSE_MS)
    notes = [
        f"Scripted gap: {PAUSE_MS:g} ms; "
        + "; ".join(f"{c} stream(s) in {w} wave(s)" for c, w in RUNS)
        + f"; {EVENTS - 1} paced events per stream; best of {args.repeat}."
    ]
    with serving_all(scenario, aimock_latency_ms=PAUSE_MS) as (targets, aimock_missing):
        measured = asyncio.run(measure_all(targets, args.repeat))
    if aimock_missing:
        notes.append(f"aimock was not measured: {aimock_missing}.")
    report = table(measured, [target.name for target in targets]) + "\n\n" + "\n".join(notes)
    print(report)
    if args.write:
        write_section("pacing", command_line(), "## Pacing fidelity\n\n" + report)


if __name__ == "__main__":
    main()
