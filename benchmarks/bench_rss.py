"""Peak memory of ``conformance run`` against adapters that flood it with valid events.

    python benchmarks/bench_rss.py [--cases 8] [--write]

Each flooding adapter answers every case with valid ``text-delta`` events, for ever (it
never sends ``end``): a subprocess adapter (stdlib Python) with small events and with 64 KiB
events, and a Python adapter (``--adapter module:factory``) as a generator and as an async
generator. The run keeps what the caps allow (``MAX_CASE_BYTES`` per case, ``MAX_RUN_BYTES``
per run; see the README), writes results.json and the HTML report, and exits. The figure is
the peak resident set size of the ``conformance`` process (``wait4``'s ``ru_maxrss``), beside
that of the default run (the reference adapter on the bundled corpus) and the bound the
README states; the script exits 1 if a run goes over the bound.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from harness import REPO, arguments, command_line, markdown_table, ratio, write_section

from conformance.adapters.case_log import MAX_CASE_BYTES
from conformance.run.runner import MAX_RUN_BYTES

BOUND_MIB = 512  # the README's bound on the peak RSS of a flooded run
CLI = [sys.executable, "-m", "conformance", "run"]
STARTER = REPO / "fixtures" / "starter" / "empty-stop-with-usage.yaml"
SMALL, LARGE = 1, 64 * 1024  # characters of text per event

SUBPROCESS_FLOOD = """\
import json, sys

TEXT = "x" * int(sys.argv[1])
hello = {"type": "hello", "protocol": 1, "name": "flood", "version": "0",
         "capabilities": {"deltas": True}}
print(json.dumps(hello), flush=True)
for line in sys.stdin:
    case = json.loads(line)["case"]
    event = json.dumps({"case": case, "type": "text-delta", "index": 0, "text": TEXT}) + "\\n"
    batch = event * max(1, 65536 // len(event))
    while True:
        sys.stdout.write(batch)
"""

PYTHON_FLOOD = """\
from conformance.events import Capabilities, Hello

HELLO = Hello(protocol=1, name="flood", version="0", capabilities=Capabilities(deltas=True))


def event(case):
    return {"type": "text-delta", "index": 0, "text": "x"}


class Sync:
    hello = HELLO

    def run(self, case):
        while True:
            yield event(case)


class Async:
    hello = HELLO

    async def run(self, case):
        while True:
            yield event(case)


def sync(options):
    return Sync()


def asynchronous(options):
    return Async()
"""


def peak_rss_mib(command: list[str], cwd: Path) -> tuple[float, float]:
    """Run ``command``; its peak RSS in MiB and its wall time in seconds."""
    begun = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if process.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} exited with {process.returncode}")
    return usage.ru_maxrss / 1024, time.perf_counter() - begun


def flood_fixtures(folder: Path, cases: int) -> Path:
    fixtures = folder / "fixtures"
    fixtures.mkdir()
    text = STARTER.read_text()
    for number in range(1, cases + 1):
        case_id = f"flood-{number}"
        replaced = text.replace("id: empty-stop-with-usage", f"id: {case_id}")
        (fixtures / f"{case_id}.yaml").write_text(replaced)
    return fixtures


def main() -> None:
    parser = arguments(__doc__ or "")
    parser.add_argument("--cases", type=int, default=8, help="flooded cases per run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-rss-") as name:
        folder = Path(name)
        (folder / "flood_adapter.py").write_text(SUBPROCESS_FLOOD)
        (folder / "flood_python.py").write_text(textwrap.dedent(PYTHON_FLOOD))
        fixtures = flood_fixtures(folder, args.cases)
        outputs = ["--json", str(folder / "results.json"), "--report", str(folder / "report")]
        flooded = ["--fixtures", str(fixtures), "--timeout", "1", *outputs]
        subprocess_adapter = f"{sys.executable} {folder / 'flood_adapter.py'}"
        runs = {
            "default run (reference adapter, bundled corpus)": [*CLI, *outputs],
            "subprocess, 1-character events": [
                *CLI, "--adapter-cmd", f"{subprocess_adapter} {SMALL}", *flooded,
            ],
            "subprocess, 64 KiB events": [
                *CLI, "--adapter-cmd", f"{subprocess_adapter} {LARGE}", *flooded,
            ],
            "Python generator, 1-character events": [
                *CLI, "--adapter", "flood_python:sync", *flooded,
            ],
            "Python async generator, 1-character events": [
                *CLI, "--adapter", "flood_python:asynchronous", *flooded,
            ],
        }  # fmt: skip
        env_path = os.environ.get("PYTHONPATH", "")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env_path]))
        measured = {label: peak_rss_mib(command, folder) for label, command in runs.items()}
    default_mib = next(iter(measured.values()))[0]
    rows = [
        [label, f"{mib:.0f}", ratio(mib, default_mib), f"{seconds:.1f}"]
        for label, (mib, seconds) in measured.items()
    ]
    worst = max(mib for mib, _ in measured.values())
    verdict = "under" if worst < BOUND_MIB else "OVER"
    report = "\n".join(
        [
            "## Memory under a flood",
            "",
            markdown_table(["run", "peak RSS MiB", "/ default run", "wall s"], rows),
            "",
            f"{args.cases} cases per flooded run, `--timeout 1`, results.json and the HTML "
            f"report written. The caps: {MAX_CASE_BYTES // 2**20} MiB of events per case, "
            f"{MAX_RUN_BYTES // 2**20} MiB per run. Peak {worst:.0f} MiB: {verdict} the bound "
            f"of {BOUND_MIB} MiB.",
        ]
    )
    print(report)
    if args.write:
        write_section("rss", command_line(), report)
    if worst >= BOUND_MIB:
        sys.exit(1)


if __name__ == "__main__":
    main()
