"""Suite speed: the wall time of the README's default run, against the time it must wait.

    python benchmarks/bench_suite.py [--repeat 1] [--write]

Runs ``conformance run --json FILE`` (the bundled corpus, the reference adapter, loopback)
as a user would, and, in the same run, ``conformance --version`` (the interpreter and the
CLI's imports). From the results it adds up the waits the scenarios script: the pauses
played, an idle timeout for every stalled request, and the retry delays the adapter
reported. The ratio wall / (start-up + scripted waits) is how much the suite costs on top
of what no implementation could avoid.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import arguments, command_line, markdown_table, ratio, write_section

from conformance.results import CaseResult, RunResult

CLI = [sys.executable, "-m", "conformance"]


def wall_time(command: list[str]) -> float:
    begun = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - begun


def scripted_wait_s(case: CaseResult, idle_timeout_s: float) -> float:
    """What the case must wait whatever the adapter: pauses (an adapter gives up on one
    after the idle timeout), stalls (given up after it), and the retry delays it chose."""
    attempts = case.scenario["attempts"]
    waited = 0.0
    for request in case.requests:
        attempt = attempts[min(request["attempt"], len(attempts)) - 1]
        for step in attempt.get("stream", {}).get("steps", []):
            if isinstance(step, dict) and "pause_ms" in step:
                waited += min(step["pause_ms"] / 1000, idle_timeout_s)
        if request["ended"] == "stalled":
            waited += idle_timeout_s
    retries = [float(event["delay_ms"]) for event in case.events if event["type"] == "retry"]
    return waited + sum(retries) / 1000


def main() -> None:
    parser = arguments(__doc__ or "")
    parser.add_argument("--repeat", type=int, default=1, help="runs (the fastest wins)")
    args = parser.parse_args()
    startup = min(wall_time([*CLI, "--version"]) for _ in range(3))
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as folder:
        results = Path(folder, "results.json")
        wall = min(wall_time([*CLI, "run", "--json", str(results)]) for _ in range(args.repeat))
        result = RunResult.from_json(results.read_bytes())
    idle_timeout_s = float(result.options["idle_timeout_s"])
    waits = sum(scripted_wait_s(case, idle_timeout_s) for case in result.cases)
    in_cases = sum(case.duration_s for case in result.cases)
    floor = startup + waits
    header = ["cases", "wall s", "start-up s", "scripted waits s", "in cases s", "wall / floor"]
    figures = [f"{wall:.1f}", f"{startup:.2f}", f"{waits:.1f}", f"{in_cases:.1f}"]
    row = [str(len(result.cases)), *figures, ratio(wall, floor)]
    report = "\n".join(
        [
            markdown_table(header, [row]),
            "",
            "`conformance run` with no options; floor = start-up (`conformance --version`) + "
            "the scripted waits; *in cases* is the sum of the cases' durations. "
            f"Beyond the floor the run spends {(wall - floor) / len(result.cases) * 1000:.0f} ms "
            "per case.",
        ]
    )
    print(report)
    if args.write:
        write_section("suite", command_line(), "## Suite speed\n\n" + report)


if __name__ == "__main__":
    main()
