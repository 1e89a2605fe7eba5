"""Reading back the JSON the suite saved: results, baselines and matrix columns.

Such a file may have been edited by hand, cut short or replaced by anything at all, so it is
read as untrusted input: at most :data:`MAX_SAVED_BYTES`, parsed by a parser whose nesting
is bounded (pydantic-core's, 200 levels: a 100 000-deep file is an error, not a
``RecursionError``), and validated by the model the suite wrote it from. Every problem is one
line that names the file and what is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, TypeVar

import pydantic_core
from pydantic import BaseModel, ValidationError

from .codes import ConformanceError

MAX_SAVED_BYTES: Final = 256 * 2**20
"""Far above what a run writes (its events, stderr and request logs are capped per run),
far below what would exhaust memory once parsed (about ten times the file's size)."""

M = TypeVar("M", bound=BaseModel)


class SavedFileError(ConformanceError, ValueError):
    """A saved JSON file that cannot be used; the message is one line naming the file."""


def read_document(path: Path, what: str) -> Any:
    """The JSON value in ``path``, ``what`` it should be ("the baseline") naming it in errors."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SAVED_BYTES + 1)
    except OSError as error:
        raise SavedFileError(f"{path}: cannot read {what} ({error.strerror or error})") from None
    if len(data) > MAX_SAVED_BYTES:
        raise SavedFileError(f"{path}: {what} is over {MAX_SAVED_BYTES // 2**20} MiB")
    try:
        return pydantic_core.from_json(data)
    except ValueError as error:  # not JSON, not UTF-8, or nested past the parser's bound
        raise SavedFileError(f"{path}: {what} is not JSON ({error})") from None


def validated(model: type[M], document: Any, path: Path, what: str) -> M:
    """``document`` as ``model``; its first problem (and how many more) otherwise."""
    try:
        return model.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise SavedFileError(f"{path}: invalid {what}: {where}: {first['msg']}{more}") from None
