"""What every benchmark script shares: the machine's description, percentiles, and the
sections of RESULTS.md that ``--write`` replaces (each script owns one section)."""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import resource
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
RESULTS = BENCHMARKS / "RESULTS.md"
_RESULTS_HEADER = """\
# Benchmark results

Written by the scripts in this folder when run with `--write`; each replaces only its own
section. Ratios compare measurements taken in the same run, on the machine described in the
section; absolute figures are this machine's only. The benchmarks are not part of the test
command.
"""


def arguments(description: str) -> argparse.ArgumentParser:
    """A parser with the ``--write`` flag every script takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--write", action="store_true", help=f"replace this script's section of {RESULTS.name}"
    )
    return parser


def machine() -> str:
    """One line: CPU, cores, memory, OS, Python, Node, and how busy the machine was."""
    parts = [
        _cpu_model(),
        f"{len(os.sched_getaffinity(0))} cores",
        _memory(),
        f"{_os_name()} (Linux {platform.release()})",
        f"Python {platform.python_version()}",
    ]
    node = _node_version()
    if node:
        parts.append(f"Node {node}")
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    parts.append(f"load average {load} at the start")
    return "; ".join(parts)


def raise_descriptor_limit(needed: int) -> None:
    """Room for ``needed`` open sockets (child processes started later inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            sys.exit(f"needs {needed} open files; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (``fraction`` in 0..1) of a non-empty sample."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def ratio(ours: float, other: float | None) -> str:
    return "–" if not other else f"{ours / other:.2f}×"


def write_section(name: str, command: str, body: str) -> None:
    """Replace (or add) section ``name`` of RESULTS.md: the command, date, machine, body."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    today = datetime.date.today().isoformat()
    section = (
        f"{begin}\n`{command}` — {today}\n\nMachine: {machine()}.\n\n{body.strip()}\n{end}"
    )
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else _RESULTS_HEADER
    if begin in text and end in text:
        before, _, rest = text.partition(begin)
        _, _, after = rest.partition(end)
        text = before + section + after
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text, encoding="utf-8")
    print(f"wrote the {name!r} section of {RESULTS}")


def command_line() -> str:
    """How this script was invoked, relative to the repository, for the results."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(REPO) if script.is_relative_to(REPO) else script
    return " ".join(["python", str(shown), *sys.argv[1:]])


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    return "unknown RAM"


def _os_name() -> str:
    try:
        return platform.freedesktop_os_release()["PRETTY_NAME"]
    except OSError:
        return platform.system()


def _node_version() -> str | None:
    node = shutil.which("node")
    if node is None:
        return None
    completed = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    return completed.stdout.strip().lstrip("v") or None
