"""The garbage collector around a command: what lives for the whole process kept out of its
sight, since each full pass walks every object a run holds and frees none of them."""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def setup_frozen() -> Iterator[None]:
    """Everything set up so far (modules, the adapter, the catalogue, the fixtures) out of
    the garbage collector's sight while the cases run: its full passes then walk only what
    the cases made (~6 % of a generated case's time, 0.25 s of the default run's 4.5 s)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()  # a host process (a test's CliRunner) gets its heap back as it was


def frozen_at_exit() -> None:
    """Freeze the heap as the interpreter exits: its last collections walked every object
    a run kept, to free what exit frees anyway (0.3-0.4 s of the default run). Once per
    process, however many commands it runs."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
