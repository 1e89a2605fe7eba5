"""Killing a subprocess adapter's whole process tree, descendants that escaped included.

An adapter runs in a session of its own, so killing its process group reaches everything that
stayed in the group. A descendant that left it (``setsid``, a double fork) is no longer in the
group, and once its parent has exited no parent link leads back to the adapter either. So each
adapter process gets a token in its environment, which every descendant inherits unless it
clears its environment, and the tree is every process whose environment carries the token:
on Linux, ``/proc/PID/environ`` tells (the way Jenkins' ProcessTreeKiller finds a build's
daemons). This needs no privilege and, unlike a child subreaper, changes nothing in the
process the suite runs in (a pytest session, say). Elsewhere only the group is killed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

TREE_VARIABLE = "STREAMCONFORM_ADAPTER_TREE"  # in the adapter's environment: its tree's token

_PROC = Path("/proc")
# A member may fork while the tree is being killed; its child is found on the next pass.
_KILL_PASSES = 8


def new_token() -> str:
    """A token naming one adapter process's tree."""
    return secrets.token_hex(16)


def environment_with(token: str) -> Mapping[str, str]:
    """The suite's environment with ``token`` added, for the adapter process."""
    return {**os.environ, TREE_VARIABLE: token}


def signal_group(pgid: int, signum: signal.Signals) -> None:
    """Send ``signum`` to the process group ``pgid``, if it is still there."""
    _send(os.killpg, pgid, signum)


def kill_tree(pgid: int, token: str) -> None:
    """SIGKILL the process group ``pgid`` and every process carrying ``token``."""
    signal_group(pgid, signal.SIGKILL)
    for _ in range(_KILL_PASSES):
        members = list(_carrying(token))
        if not members:
            return
        for pid in members:
            _send(os.kill, pid, signal.SIGKILL)


def _carrying(token: str) -> Iterator[int]:
    """The pids whose environment holds ``TREE_VARIABLE=token`` (none without /proc)."""
    wanted = f"{TREE_VARIABLE}={token}".encode()
    own = os.getpid()
    with contextlib.suppress(OSError):  # no /proc: nothing found, the group kill stands
        for entry in _PROC.iterdir():
            if not entry.name.isdigit() or int(entry.name) == own:
                continue
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:  # gone, or another user's (unreadable, and not ours to kill)
                continue
            if wanted in environ.split(b"\0"):
                yield int(entry.name)


def _send(kill: Callable[[int, int], None], target: int, signum: signal.Signals) -> None:
    # ProcessLookupError: already gone; PermissionError: not ours (the id was reused).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        kill(target, signum)
