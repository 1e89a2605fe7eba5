"""A file the tools write is replaced whole or left as it was."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fakeprovider.files import write_atomic


def test_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "baseline.json"
    write_atomic(path, "first")
    write_atomic(path, b"second")
    assert path.read_text(encoding="utf-8") == "second"
    assert sorted(p.name for p in path.parent.iterdir()) == ["baseline.json"]


def test_a_write_cut_short_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "baseline.json"
    write_atomic(path, "the good baseline")

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("fakeprovider.files.os.fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(path, "x" * 100_000)
    assert path.read_text(encoding="utf-8") == "the good baseline"
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.json"]


def test_a_written_file_has_the_mode_open_gives_it(tmp_path: Path) -> None:
    """Not mkstemp's 0600: a report is for others to read too."""
    umask = os.umask(0o022)
    os.umask(umask)
    path = tmp_path / "index.html"
    write_atomic(path, "<p>report</p>")
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
