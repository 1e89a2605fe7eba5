"""SIGINT and SIGTERM around a command (``conformance``'s and ``fakeprovider``'s): one line
on stderr and exit 130 or 143, never click's "Aborted!" (exit 1, conformance's
not-conformant code) nor a traceback.

A command decorated with :func:`stops_on_signals` gets the process's
:class:`~fakeprovider.interrupts.Interruption` as its ``interruption`` argument. What it
does not handle itself (a signal while fixtures load, say) ends it with the fallback line.
"""

from __future__ import annotations

import functools
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from .interrupts import Interruption, exit_code

F = TypeVar("F", bound=Callable[..., Any])


def stops_on_signals(command: F) -> F:
    """Run ``command`` with SIGINT and SIGTERM caught, passing it ``interruption``."""

    @functools.wraps(command)
    def stoppable(*args: Any, **kwargs: Any) -> Any:
        interruption = Interruption()
        with interruption.caught():
            try:
                return command(*args, interruption=interruption, **kwargs)
            except KeyboardInterrupt:  # a signal's, or a worker's that a signal stopped
                exit_interrupted(interruption.signal or signal.SIGINT)

    return stoppable  # type: ignore[return-value]


def exit_interrupted(
    signum: signal.Signals, kept: str = "nothing written", progress: str = ""
) -> NoReturn:
    """End a command a signal stopped with one line on stderr, ``interrupted by SIGTERM
    <progress>; <kept>`` (``after 37 of 307 cases``, ``results so far in r.json``)."""
    head = f"interrupted by {signum.name}" + (f" {progress}" if progress else "")
    click.echo(f"{head}; {kept}", err=True)
    sys.exit(exit_code(signum))


def written(paths: Sequence[Path | None], nothing: str = "nothing written") -> str:
    """``results so far in a.json, reports/``, or ``nothing``: what a stopped command kept."""
    kept = [str(path) for path in paths if path is not None]
    return f"results so far in {', '.join(kept)}" if kept else nothing
