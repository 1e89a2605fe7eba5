"""Opening an adapter session from what a user typed: ``--adapter`` or ``--adapter-cmd``."""

from __future__ import annotations

import shlex

from .base import AdapterLoadError, AdapterSession, load_python_adapter

REFERENCE_ADAPTER = "conformance.adapters.reference:factory"


def adapter_invocation(target: str | None, command: str | None) -> str:
    """The command-line words that select this adapter (for reproducers)."""
    if command:
        return f"--adapter-cmd {shlex.quote(command)}"
    return f"--adapter {target or REFERENCE_ADAPTER}"


async def open_session(target: str | None, command: str | None, options: object) -> AdapterSession:
    """A subprocess session for ``command``, else the Python adapter ``target``
    (the bundled reference adapter when neither is given); raises AdapterLoadError."""
    if target and command:
        raise AdapterLoadError("give --adapter or --adapter-cmd, not both")
    if command:
        from .subprocess import SubprocessAdapterSession

        return await SubprocessAdapterSession.start(command)
    return load_python_adapter(target or REFERENCE_ADAPTER, options)
