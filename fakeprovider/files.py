"""Files the tools write: whole or not at all.

A write cut short (a full disk, a kill) must never leave a truncated file where a good one
was: a baseline rewritten in place and killed half-way is a lost baseline. Every file is
written beside its destination and renamed over it, which POSIX makes atomic.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# mkstemp makes its file 0600 whatever the umask: a report or a results file would then be
# unreadable to anyone else, unlike a file open() creates. Read once, at import, since
# reading it means setting it.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write_atomic(path: Path, data: str | bytes, *, exclusive: bool = False) -> None:
    """Replace ``path`` with ``data`` (text is UTF-8) in one rename; parents are created.

    ``exclusive``: create ``path`` whole or raise FileExistsError, never replacing a file
    (a hard link of the written file, which POSIX makes atomic and exclusive, as O_EXCL).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            os.fchmod(file.fileno(), 0o666 & ~_UMASK)
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())
        if exclusive:
            os.link(temporary, path)
            Path(temporary).unlink()
        else:
            os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def unwritable_reason(path: Path, *, directory: bool = False) -> str | None:
    """Why ``path`` cannot be written as a file (with ``directory``: filled with files), or
    None. Checked before a command's work, so that a bad output path costs no run; nothing is
    left behind (the nearest existing directory is probed with a file at once removed)."""
    if directory and path.exists() and not path.is_dir():
        return "exists and is not a directory"
    if not directory and path.is_dir():
        return "is a directory"
    nearest = path if directory and path.is_dir() else path.parent
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent  # the directories missing are created by the write
    if not nearest.is_dir():
        return f"{nearest} is not a directory"
    try:
        handle, probe = tempfile.mkstemp(dir=nearest, prefix=".probe-", suffix=".tmp")
    except OSError as error:
        return f"cannot write in {nearest} ({error.strerror or error})"
    os.close(handle)
    os.unlink(probe)
    return None
