"""What our server costs beyond the bare-asyncio baseline, per stream: steady on a busy machine.

    python benchmarks/bench_server_cost.py [--checkout CHECKOUT ...] [--rounds 12] [--write]

Our server (``FakeProviderServer``) and the baseline (baseline_server.py) run in one process
on one event loop, driven by one client of raw sockets, taking turns: the client's share of
the process's CPU time is the same for both, so the difference is what our server spends
beyond the baseline, per stream of 3 events and of 203 (the throughput benchmark's); the
least of --rounds. Unlike CPU time read from other processes, this holds still when other
work shares the cores. Each --checkout (a working tree of this repository, e.g. ``git
worktree add /tmp/step COMMIT``) is measured the same way, in a process of its own, for a
before/after per step; this tree comes last.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import baseline_server
from harness import REPO, arguments, command_line, markdown_table, write_section
from streams import (
    CONTENT_CHUNKS,
    EVENTS,
    Target,
    bench_scenario,
    check_complete,
    fetch_concurrently,
)

from fakeprovider.playback import Playback, prepare
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.server import FakeProviderServer

STREAMS = 500  # per measurement, 50 at a time
SHORT = 3  # events of the short stream: role, finish, [DONE]


async def extra_cpu_us(content_chunks: int, rounds: int) -> float:
    """Process CPU µs per stream of ours minus the baseline's, the least of each."""
    scenario = bench_scenario(content_chunks=content_chunks)
    playback = prepare(scenario.attempts[0])
    assert isinstance(playback, Playback)
    ours = FakeProviderServer(ScenarioRegistry([scenario]))
    await ours.start()
    baseline = await baseline_server.start(*baseline_server.precomputed(playback))
    targets = [
        Target("ours", ours.port, os.getpid(), f"/{scenario.id}/v1/chat/completions"),
        Target(
            "baseline", baseline.sockets[0].getsockname()[1], os.getpid(), "/v1/chat/completions"
        ),
    ]
    least: dict[str, float] = {}
    try:
        for target in targets:  # warm up
            await fetch_concurrently(target, 50)
        for _ in range(rounds):
            for target in targets:
                began = time.process_time()
                for _ in range(STREAMS // 50):
                    responses, _ = await fetch_concurrently(target, 50)
                    check_complete(responses, content_chunks + 3)
                used = (time.process_time() - began) / STREAMS * 1e6
                least[target.name] = min(least.get(target.name, used), used)
    finally:
        baseline.close()
        await ours.stop()
    return least["ours"] - least["baseline"]


def measure(rounds: int) -> dict[str, float]:
    """In this process: the extra µs per short and per benchmark stream."""
    return {
        "short": asyncio.run(extra_cpu_us(0, rounds)),
        "long": asyncio.run(extra_cpu_us(CONTENT_CHUNKS, rounds)),
    }


def measure_checkout(checkout: Path, rounds: int) -> dict[str, float]:
    """In a process of its own whose fakeprovider is the checkout's."""
    completed = subprocess.run(
        [sys.executable, __file__, "--measure", "--rounds", str(rounds)],
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        check=True,
    )
    extra: dict[str, float] = json.loads(completed.stdout.splitlines()[-1])
    return extra


def describe(checkout: Path) -> str:
    shown = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
        check=False,
    )
    described = shown.stdout.strip() if shown.returncode == 0 else str(checkout)
    return described if len(described) <= 72 else described[:71] + "…"


def table(extras: list[tuple[str, dict[str, float]]]) -> str:
    rows = []
    for name, extra in extras:
        per_write = (extra["long"] - extra["short"]) / CONTENT_CHUNKS
        per_request = extra["short"] - SHORT * per_write
        rows.append(
            [name, f"{per_request:+.0f} µs", f"{per_write:+.2f} µs", f"{extra['long']:+.0f} µs"]
        )
    header = ["server", "per request", "per event write", f"per {EVENTS}-event stream"]
    return markdown_table(header, rows)


def main() -> None:
    parser = arguments(__doc__ or "")
    parser.add_argument("--rounds", type=int, default=12, help="measurements (the least wins)")
    parser.add_argument("--checkout", type=Path, action="append", default=[], metavar="CHECKOUT")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.rounds)))
        return
    extras = [(describe(path), measure_checkout(path, args.rounds)) for path in args.checkout]
    extras.append((f"this tree ({describe(REPO)})", measure_checkout(REPO, args.rounds)))
    report = "\n\n".join(
        [
            "## Server cost beyond the baseline",
            table(extras),
            "CPU time of one process running our server and the bare-asyncio baseline side by "
            f"side under one client, ours minus the baseline's; the least of {args.rounds} "
            f"measurements of {STREAMS} streams each (3 events, and {EVENTS}).",
        ]
    )
    print(report)
    if args.write:
        write_section("server-cost", command_line(), report)


if __name__ == "__main__":
    main()
