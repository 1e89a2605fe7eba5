"""What every benchmark script shares: its ``--write`` flag, the machine's description,
small measuring and formatting helpers, and the sections of RESULTS.md that ``--write``
replaces (each script owns one section)."""

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
_LOAD_AT_START = os.getloadavg()  # before the benchmark adds its own load
_RESULTS_HEADER = """\
# Benchmark results

Written by the scripts in this folder when run with `--write`; each replaces only its own
section. Ratios compare measurements taken in the same run, on the machine described in the
section; absolute figures are this machine's only. The benchmarks are not part of the test
command. The server benchmarks install aimock on first use (`npm ci` in this folder, from
package-lock.json, into the git-ignored node_modules/; Node.js >= 20.15 and npm needed).
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
    load = ", ".join(f"{value:.1f}" for value in _LOAD_AT_START)
    parts.append(f"load average {load} at the start")
    return "; ".join(parts)


def raise_descriptor_limit(needed: int) -> None:
    """Room for ``needed`` open sockets (child processes started later inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            sys.exit(f"needs {needed} open files; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (``fraction`` in 0..1) of a non-empty sample."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; every column but the first is right-aligned (they hold figures)."""
    lines = [header, ["---"] + ["---:"] * (len(header) - 1), *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def ratio(ours: float, other: float | None) -> str:
    return "-" if not other else f"{ours / other:.2f}x"


def write_section(name: str, command: str, body: str) -> None:
    """Replace (or add) section ``name`` of RESULTS.md: the body's heading (its first line,
    if a Markdown heading), then the command, date and machine, then the rest of the body."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    heading, _, rest = body.strip().partition("\n")
    if not heading.startswith("#"):
        heading, rest = "", body.strip()
    run = f"`{command}`, {datetime.date.today().isoformat()}. Machine: {machine()}."
    section = "\n\n".join(part for part in (heading, run, rest.strip()) if part)
    section = f"{begin}\n{section}\n{end}"
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
