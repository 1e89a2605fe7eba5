"""Files the tools write: whole or not at all.

A write cut short (a full disk, a kill) must never leave a truncated file where a good one
was: a baseline rewritten in place and killed half-way is a lost baseline. Every file is
written beside its destination and renamed over it, which POSIX makes atomic.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
