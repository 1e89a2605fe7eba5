"""The files a command writes: checked before its work, each written even if another fails.

A bad output path (a directory where a file goes, a file where a directory goes, a parent
that cannot be written) is one line naming the option and the path, exit 2, before the
first case. A write that still fails at the end (a full disk) is one line too; the other
outputs are written all the same, and the command exits 2 after its summary.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console

from fakeprovider.files import unwritable_reason, write_atomic

from ..report import write_reports
from ..results import RunResult
from .console import controls_shown
from .options import ExitCode, InputError, exit_judged


@dataclass(frozen=True)
class Output:
    """One path a command writes, named as the user gave it (``--json``, ``DIRECTORY``)."""

    option: str
    path: Path | None  # None: not asked for
    directory: bool = False  # a directory the command fills, not a file


def check_outputs(*outputs: Output) -> None:
    """Exit 2 (InputError) on the first output that cannot be written; nothing is created."""
    for output in outputs:
        if output.path is None:
            continue
        reason = unwritable_reason(output.path, directory=output.directory)
        if reason is not None:
            raise InputError(f"{output.option} {output.path}: {reason}")


@dataclass
class Writes:
    """The outputs written at a command's end; one that fails is a line, and remembered."""

    lost: list[str] = field(default_factory=list)

    @contextmanager
    def writing(self, option: str, path: Path | None) -> Iterator[None]:
        """Write ``path`` (for ``option``; None: files the option stands for) in the block;
        an OSError is one line, not a traceback, and the next output is still written."""
        try:
            yield
        except OSError as error:
            where = option if path is None else f"{option} {path}"
            line = f"{where}: not written ({error.strerror or error})"
            self.lost.append(line)
            click.echo(f"Error: {controls_shown(line)}", err=True)

    def exit(self, failed: bool) -> NoReturn:
        """Exit 2 if an output was lost, else as the verdicts say (1 or 0)."""
        if self.lost:
            sys.exit(ExitCode.USAGE_ERROR)
        exit_judged(failed)


def write_outputs(
    console: Console,
    result: RunResult,
    json_path: Path | None,
    report_dir: Path | None,
    writes: Writes,
    report_option: str = "--report",
) -> None:
    """The results JSON and the reports a command was asked for."""
    if json_path is not None:
        with writes.writing("--json", json_path):
            write_atomic(json_path, result.to_json())
            console.print(f"results: {json_path}", markup=False)
    if report_dir is not None:
        with writes.writing(report_option, report_dir):
            for kind, path in write_reports(result, report_dir).items():
                console.print(f"{kind}: {path}", markup=False)
