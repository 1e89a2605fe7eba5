"""Why each library fails the interop contract, in its maintainers' terms: the to-do list.

Knowledge, not measurement: every :class:`KnownCause` is written by hand after reading the
failing cases' events and the library's code, in the data files of ``fixtures/causes/``
(their format: ``fixtures/README.md``, "Known causes"). It names the matrix columns it
holds for, the fixtures that show it, one line saying what the library does wrong, and the
upstream issue or pull request that tracks it when one was found in the project's public
tracker (left empty otherwise: a link is never guessed). ``reports/compatibility.md``
groups each column's interop failures by these causes; a failure no entry names is still
listed, as "cause not yet written", so nothing hides. A cause whose cases no longer fail is
listed as not reproduced, so a fixed bug shows and its entry can go.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from ..codes import ConformanceError
from ..options import bundled_fixtures

TRACKER_LINK = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/[1-9]\d*")
"""The one form of upstream link the page labels: a GitHub issue or pull request."""


def _one_line(text: str) -> str:
    if not text.strip() or "\n" in text:
        raise ValueError("a cause is one line of text")
    return text


def _tracker_link(link: str) -> str:
    if link and not TRACKER_LINK.fullmatch(link):
        raise ValueError(
            "not a GitHub issue or pull request link "
            "(https://github.com/<owner>/<repo>/issues/<n> or .../pull/<n>)"
        )
    return link


_Names = Annotated[tuple[str, ...], Field(min_length=1)]


class KnownCause(BaseModel):
    """One entry of a ``fixtures/causes/*.toml`` file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    libraries: _Names  # matrix columns (thirdparty.SHIMS) or gateway directions
    cases: _Names  # fixture ids of the bundled corpus that show it
    rules: tuple[str, ...] = ()  # a gateway's: the rules whose findings it explains
    cause: Annotated[str, AfterValidator(_one_line)]  # what the library does wrong
    upstream: Annotated[str, AfterValidator(_tracker_link)] = ""  # the link, if one was found

    @property
    def upstream_label(self) -> str:
        """``owner/repo#123`` for a GitHub issue or pull request link."""
        owner, repo, _, number = self.upstream.removeprefix("https://github.com/").split("/")
        return f"{owner}/{repo}#{number}"


@dataclass(frozen=True)
class ToDo:
    """One line of a library's to-do: a cause and the failing cases that show it."""

    cases: tuple[str, ...]
    cause: KnownCause | None  # None: not written yet
    lost: str  # what the caller lost in the first case, as the page measures it

    @property
    def upstream(self) -> str:
        return "" if self.cause is None else self.cause.upstream


def to_do(library: str, failures: Sequence[tuple[str, str]]) -> list[ToDo]:
    """``failures`` — (case, what the caller lost), in run order — grouped by written cause,
    the causes behind most cases first; then one line per failure without a cause."""
    grouped: dict[KnownCause, list[tuple[str, str]]] = {}
    unwritten: list[ToDo] = []
    for case, lost in failures:
        known = cause_of(library, case)
        if known is None:
            unwritten.append(ToDo((case,), None, lost))
        else:
            grouped.setdefault(known, []).append((case, lost))
    written = [
        ToDo(tuple(case for case, _ in shown), known, shown[0][1])
        for known, shown in grouped.items()
    ]
    return sorted(written, key=lambda item: -len(item.cases)) + unwritten


def not_reproduced(
    library: str, failing: Collection[str], ran: Collection[str]
) -> list[KnownCause]:
    """The causes written for ``library`` some of whose cases ran and none failed: fixed,
    or written for behaviour the library no longer has."""
    return [
        known
        for known in known_causes()
        if library in known.libraries
        and any(case in ran for case in known.cases)
        and not any(case in failing for case in known.cases)
    ]


def cause_of(library: str, case: str) -> KnownCause | None:
    return _by_failure().get((library, case))


class CausesError(ConformanceError, ValueError):
    """A causes file is not TOML or an entry is malformed: one line per problem, each
    naming the file, the field and the reason."""


SHARED_CAUSES = "shared.toml"
"""The causes of several libraries, read first; then one file per library, by name."""


def load_causes(folder: Path) -> tuple[KnownCause, ...]:
    """Every cause in ``folder``'s ``*.toml`` files, in file order: ``shared.toml`` first.

    Raises CausesError listing every problem of every file, or when ``folder`` is none.
    """
    if not folder.is_dir():
        raise CausesError(f"{folder}: no folder of known causes")
    files = sorted(folder.glob("*.toml"), key=lambda path: (path.name != SHARED_CAUSES, path))
    causes: list[KnownCause] = []
    problems: list[str] = []
    for path in files:
        try:
            causes += _causes_in(path)
        except CausesError as error:
            problems.append(str(error))
    if problems:
        raise CausesError("\n".join(problems))
    return tuple(causes)


class _CausesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    causes: list[KnownCause]


def _causes_in(path: Path) -> list[KnownCause]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return _CausesFile.model_validate(data, strict=False).causes
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise CausesError(f"{path}: not a TOML file ({error})") from None
    except ValidationError as error:
        raise CausesError(
            "\n".join(
                f"{path}: {_field(problem['loc'])}: {_reason(problem)}"
                for problem in error.errors(include_url=False)
            )
        ) from None


def _field(location: tuple[str | int, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in location)[1:]


def _reason(problem: ErrorDetails) -> str:
    if problem["type"] == "extra_forbidden":
        return "unknown field (check its spelling)"
    return problem["msg"].removeprefix("Value error, ")


@functools.cache
def known_causes() -> tuple[KnownCause, ...]:
    """The causes shipped with the corpus, ``fixtures/causes/``."""
    return load_causes(bundled_fixtures() / "causes")


@functools.cache
def _by_failure() -> dict[tuple[str, str], KnownCause]:
    return {
        (library, case): known
        for known in known_causes()
        for library in known.libraries
        for case in known.cases
    }
