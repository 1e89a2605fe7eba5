"""Pacing fidelity: how far the gaps a client measures stray from the scripted 5 ms pauses.

    python benchmarks/bench_pacing.py [--write]

The stream of streams.py with a 5 ms pause before every event but ``[DONE]``, played by
our loopback server, the bare-asyncio baseline (``asyncio.sleep``) and aimock
(``--latency 5``), to 1 stream (five times in turn) and to 100 at once. A gap is the time
between the arrivals of two consecutive paced events at the client; p50 and p99 over all
streams, and the ratios of the p99s.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools

from harness import arguments, command_line, percentile, ratio, write_section
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


async def measure_all(targets: list[Target]) -> dict[tuple[str, int], list[float]]:
    measured = {}
    for concurrency, waves in RUNS:
        for target in targets:
            measured[(target.name, concurrency)] = await gaps_ms(target, concurrency, waves)
    return measured


def table(measured: dict[tuple[str, int], list[float]], names: list[str]) -> str:
    header = ["streams"]
    for name in names:
        header += [f"{name} p50 ms", f"{name} p99 ms"]
    header += ["p99 ours/baseline", "p99 ours/aimock"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    for concurrency, _ in RUNS:
        p99 = {name: percentile(measured[(name, concurrency)], 0.99) for name in names}
        row = [str(concurrency)]
        for name in names:
            row += [f"{percentile(measured[(name, concurrency)], 0.5):.2f}", f"{p99[name]:.2f}"]
        row += [ratio(p99["ours"], p99["baseline"]), ratio(p99["ours"], p99.get("aimock"))]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    args = arguments(__doc__ or "").parse_args()
    scenario = bench_scenario(pause_ms=PAUSE_MS)
    notes = [
        f"Scripted gap: {PAUSE_MS:g} ms; "
        + "; ".join(f"{c} stream(s) × {w} wave(s)" for c, w in RUNS)
        + f"; {EVENTS - 1} paced events per stream."
    ]
    with contextlib.ExitStack() as running:
        targets = [
            running.enter_context(serving_ours(scenario)),
            running.enter_context(serving_baseline(scenario)),
        ]
        try:
            targets.append(running.enter_context(serving_aimock(latency_ms=PAUSE_MS)))
        except AimockUnavailable as error:
            notes.append(f"aimock was not measured: {error}.")
        measured = asyncio.run(measure_all(targets))
    report = table(measured, [target.name for target in targets]) + "\n\n" + "\n".join(notes)
    print(report)
    if args.write:
        write_section("pacing", command_line(), "## Pacing fidelity\n\n" + report)


if __name__ == "__main__":
    main()
