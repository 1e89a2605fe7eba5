"""Two runs of the same fixtures and seed give the same results.json, once the clock's
fields are blanked (conformance.results.reproducible_json lists them, and why they differ),
and the same baseline file byte for byte: one case at a time (``--jobs 1``) or four in
flight (``--jobs 4``).

The runs are the README's default run — ``conformance run``: the bundled corpus, the
reference adapter, loopback — plus generated cases of a fixed seed, as two processes side
by side.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.results import RunResult, reproducible_json

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
GENERATED = 40
RUN = [sys.executable, "-m", "conformance", "run", "--generate", str(GENERATED), "--seed", "7"]


def test_the_default_run_with_a_seed_is_reproducible_whatever_the_jobs(tmp_path: Path) -> None:
    paths = [tmp_path / "serial.json", tmp_path / "concurrent.json"]
    baselines = [tmp_path / "serial-baseline.json", tmp_path / "concurrent-baseline.json"]
    runs = [
        subprocess.Popen(
            [*RUN, "--jobs", jobs, "--json", str(path), "--write-baseline", str(baseline)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for jobs, path, baseline in zip(("1", "4"), paths, baselines, strict=True)
    ]
    for run in runs:
        output, _ = run.communicate(timeout=110)
        # The failing lines, if any: which case and rule broke this run.
        shown = [line for line in output.decode(errors="replace").splitlines() if "fail" in line]
        assert run.returncode == 0, "\n".join(shown[-20:])
    first, second = (path.read_text(encoding="utf-8") for path in paths)
    assert first != second, "the clock's fields do differ between runs"

    once, again = (reproducible_json(RunResult.from_json(text)) for text in (first, second))

    cases = [case.case for case in RunResult.from_json(first).cases]
    assert len(cases) > 100
    assert len([case for case in cases if case.startswith("gen-")]) == GENERATED
    difference = difflib.unified_diff(once.splitlines(), again.splitlines(), lineterm="", n=2)
    assert once == again, "\n".join(list(difference)[:80])
    # The baseline has nothing the clock decides: the same bytes.
    assert baselines[0].read_bytes() == baselines[1].read_bytes()
