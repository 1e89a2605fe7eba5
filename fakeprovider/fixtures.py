"""Fixture files: YAML or JSON scenarios on disk, loaded with errors a person can act on.

Every problem names the file, the YAML line where it is known, the field path and the
reason, e.g. ``fixtures/x.yaml:14: attempts[0].stream.steps[2].pause_ms: must be >= 0``.
A warning (``Fixture.warnings``) is worded the same way but does not stop the fixture
loading: a plain scalar cut short by `` #``, which YAML reads as the start of a comment.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml
from pydantic import BaseModel

from .errors import FakeProviderError
from .scenario import Scenario, StreamAttempt
from .shown import controls_shown
from .surrogates import LONE_SURROGATE, lone_surrogate_at
from .validating import InvalidScenarioError, validate_scenario
from .wire import EncodeError, encode_stream

Location = tuple[str | int, ...]
"""A path into a fixture's data: ``("attempts", 0, "stream", "steps", 2)``."""

FIXTURE_SUFFIXES = (".yaml", ".yml", ".json")
MAX_FIXTURE_BYTES = 5 * 1024 * 1024
MAX_FIXTURE_DEPTH = 100
"""Nesting levels a fixture may use: far more than a scenario needs, far less than would
exhaust the YAML parser's stack."""
MAX_ALIAS_EXPANSION = 100_000
"""Nodes that YAML aliases may add once expanded: bounds an alias bomb ("billion laughs"),
which is tiny on disk and explodes when validated or indexed."""
MAX_EXPANDED_BYTES = MAX_FIXTURE_BYTES
"""Bytes of scalar text (UTF-8) a fixture may hold once its aliases are expanded, the same
bound as the file's: a few nodes that repeat one long string stay under the node bound and
would still make a body hundreds of times the file."""


@dataclass(frozen=True)
class FixtureProblem:
    path: Path
    field: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        """One line, safe to show: a file name, key or value may hold control characters."""
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        text = f"{where}: {self.field}: {self.reason}" if self.field else f"{where}: {self.reason}"
        return controls_shown(text)


class FixtureError(FakeProviderError, ValueError):
    """One or more fixtures are malformed; ``problems`` lists each one."""

    def __init__(self, problems: list[FixtureProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(problem) for problem in problems))


@dataclass(frozen=True)
class Fixture:
    """A fixture file that loaded: its scenario, the line of every node in the file, and
    what looks wrong without being an error."""

    path: Path
    scenario: Scenario
    lines: Mapping[Location, int]
    warnings: tuple[FixtureProblem, ...] = ()

    def problem(self, location: Location, reason: str) -> FixtureProblem:
        """A problem at ``location`` (a path into the file's data), on its nearest line."""
        return _located(self.path, location, reason, self.lines)


def load_fixture(path: str | Path) -> Scenario:
    """Load one fixture. Its ``id`` is the file name without suffix: when left out it
    defaults to it, and any other id is an error."""
    return _read_fixture(Path(path)).scenario


def _read_fixture(path: Path) -> Fixture:
    text = _read_text(path)
    if len(text) <= MAX_REMEMBERED_CHARS:
        return _remembered_fixture(path, text)
    return _fixture(path, text)


MAX_REMEMBERED_CHARS = 64 * 1024
"""Fixtures up to this size are parsed once per process for each text they have: the
corpus is read again by every run, ``validate`` and pytest item collection, and parsing
YAML in pure Python is most of what a small run costs. Keyed by path and text, so an
edited file is parsed again."""


@functools.lru_cache(maxsize=512)
def _remembered_fixture(path: Path, text: str) -> Fixture:
    return _fixture(path, text)


def _fixture(path: Path, text: str) -> Fixture:
    with _collection_paused():
        return _checked_fixture(path, text)


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """No cyclic garbage collection meanwhile: a large fixture is a million nodes, none of
    them garbage, which the collector walked again and again (half of the 25 s a fixture of
    100 000 steps took)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _checked_fixture(path: Path, text: str) -> Fixture:
    data, lines, warnings = _parse_fixture_text(path, text)
    if data is None:  # e.g. a save cut short by a kill: the file exists, nothing was written
        reason = "no scenario: the file is empty or only comments (as a save cut short leaves it)"
        raise FixtureError([FixtureProblem(path, "", reason, 1)])
    if not isinstance(data, dict):
        raise FixtureError([FixtureProblem(path, "", "a fixture is a mapping (a scenario)", 1)])
    if (surrogate := lone_surrogate_at(data, text)) is not None:
        raise FixtureError([_located(path, surrogate, LONE_SURROGATE, lines)])
    problems = []
    given = data.setdefault("id", path.stem)
    if isinstance(given, str) and given != path.stem:
        reason = f"{given!r} is not the file name: a fixture's id is its file stem, {path.stem!r}"
        problems.append(_located(path, ("id",), reason, lines))
    try:
        scenario = validate_scenario(data)
    except InvalidScenarioError as error:
        problems += [_problem(path, detail, lines) for detail in error.problems]
        if error.count > len(error.problems):
            more = error.count - len(error.problems)
            problems.append(FixtureProblem(path, "", f"and {more} more problem(s) not listed"))
    if problems:
        raise FixtureError(problems)
    return Fixture(path, scenario, MappingProxyType(lines), warnings)


def fixture_files(root: str | Path) -> list[Path]:
    """Fixture files below a directory (or the file itself), in a stable order.

    A folder is read only inside itself: a symlink in it that leads out of it, nowhere or
    round in a loop is a problem, so a contributed folder cannot make a run read (and show,
    in its problem lines) a file elsewhere. A symlink that stays inside is followed only to
    a file; the files of a linked folder inside are read where they are."""
    files, problems = _fixture_paths(Path(root))
    if problems:
        raise FixtureError(problems)
    return files


def _fixture_paths(root: Path) -> tuple[list[Path], list[FixtureProblem]]:
    if root.is_file():
        return [root], []
    if not root.is_dir():
        return [], [FixtureProblem(root, "", "no such file or directory")]
    inside = root.resolve()
    files: list[Path] = []
    problems: list[FixtureProblem] = []
    for path in sorted(root.rglob("*")):  # which does not descend into a linked folder
        if refused := _symlink_refused(path, inside):
            problems.append(FixtureProblem(path, "", refused))
        elif path.suffix in FIXTURE_SUFFIXES and path.is_file():
            files.append(path)
    return files, problems


def _symlink_refused(path: Path, inside: Path) -> str | None:
    """Why ``path`` in the folder ``inside``, a symlink to a fixture or a folder, is not
    read, or None."""
    if not path.is_symlink() or not (path.suffix in FIXTURE_SUFFIXES or path.is_dir()):
        return None
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return "a symlink to nothing (dangling)"
    except (RuntimeError, OSError):  # 3.11 raises RuntimeError on a loop, 3.13 OSError
        return "a symlink loop"
    if not target.is_relative_to(inside):
        return f"a symlink to {target}, outside the fixtures folder {inside}: not read"
    return None


def load_fixtures(roots: Iterable[str | Path]) -> list[Scenario]:
    """Load every fixture below ``roots``; report all problems at once, ids unique."""
    fixtures, problems = _read_fixtures(roots)
    if problems:
        raise FixtureError(problems)
    return [fixture.scenario for fixture in fixtures]


def validate_fixtures(
    roots: Iterable[str | Path],
) -> tuple[list[Fixture], list[FixtureProblem]]:
    """Check every fixture below ``roots`` as ``fakeprovider validate`` does.

    Returns the fixtures that load and whose streams encode, and the problems of the rest:
    loading problems, and what only encoding finds (a split offset past the body...).
    """
    loaded, problems = _read_fixtures(roots)
    valid = []
    for fixture in loaded:
        found = _encoding_problems(fixture)
        problems += found
        if not found:
            valid.append(fixture)
    return valid, problems


def fixture_text_problems(path: Path, text: str) -> list[FixtureProblem]:
    """What ``fakeprovider validate`` would find in ``text`` saved as ``path`` on its own
    (its size, YAML, scenario and streams' encoding): the recording proxy writes only a
    fixture it would accept."""
    size = len(text.encode("utf-8"))
    if size > MAX_FIXTURE_BYTES:
        return [_too_large(path, size)]
    try:
        return _encoding_problems(_fixture(path, text))
    except FixtureError as error:
        return error.problems


def _read_fixtures(roots: Iterable[str | Path]) -> tuple[list[Fixture], list[FixtureProblem]]:
    fixtures: list[Fixture] = []
    problems: list[FixtureProblem] = []
    seen: dict[str, Path] = {}
    for path in _all_files(roots, problems):
        try:
            fixture = _read_fixture(path)
        except FixtureError as error:
            problems += error.problems
            continue
        scenario_id = fixture.scenario.id
        if scenario_id in seen:
            reason = f"{scenario_id!r} is already used by {seen[scenario_id]}"
            problems.append(fixture.problem(("id",), reason))
            continue
        seen[scenario_id] = path
        fixtures.append(fixture)
    return fixtures, problems


def _encoding_problems(fixture: Fixture) -> list[FixtureProblem]:
    problems = []
    for position, attempt in enumerate(fixture.scenario.attempts):
        if isinstance(attempt, StreamAttempt):
            try:
                encode_stream(attempt.stream)
            except EncodeError as error:
                problems.append(fixture.problem(("attempts", position, "stream"), str(error)))
    return problems


def _all_files(roots: Iterable[str | Path], problems: list[FixtureProblem]) -> Iterator[Path]:
    for root in roots:
        files, found = _fixture_paths(Path(root))
        problems += found
        yield from files


# --- reading, with the line of every node -------------------------------------------------

_Lines = dict[Location, int]


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FIXTURE_BYTES:
            raise FixtureError([_too_large(path, size)])
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise FixtureError([FixtureProblem(path, "", error.strerror or str(error))]) from None
    except UnicodeDecodeError as error:
        raise FixtureError([FixtureProblem(path, "", f"not UTF-8 text ({error.reason})")]) from None


def _too_large(path: Path, size: int) -> FixtureProblem:
    return FixtureProblem(path, "", f"{size} bytes; fixtures are at most {MAX_FIXTURE_BYTES}")


def _parse_fixture_text(path: Path, text: str) -> tuple[Any, _Lines, tuple[FixtureProblem, ...]]:
    try:
        node, data = _parse(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        line = mark.line + 1 if mark is not None else None
        detail = error.problem or str(error)
        # libyaml stops at its own depth, beyond ours, while scanning a flow ahead
        reason = _too_deep() if detail == _LIBYAML_TOO_DEEP else f"invalid YAML: {detail}"
        raise FixtureError([FixtureProblem(path, "", reason, line)]) from None
    except yaml.YAMLError as error:
        raise FixtureError([FixtureProblem(path, "", f"invalid YAML: {error}")]) from None
    except _UnsafeShapeError as error:
        raise FixtureError([FixtureProblem(path, "", error.reason, error.line)]) from None
    except _UnconvertibleNodeError as error:
        location = _location_of(error.root, error.node) or ()
        problem = FixtureProblem(path, _dotted(location), error.reason, _line(error.node))
        raise FixtureError([problem]) from None
    lines: _Lines = {}
    cuts: list[FixtureProblem] = []
    if node is not None:
        _index_lines(node, (), lines)
        cuts = [
            FixtureProblem(path, _dotted(location), _CUT_SHORT.format(value=value), line)
            for location, value, line in _cut_scalars(node, (), text)
        ]
    return data, lines, tuple(cuts)


class _UnsafeShapeError(FakeProviderError):
    """YAML too deep, with a cyclic alias, or whose aliases expand it too far."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


class _UnconvertibleNodeError(FakeProviderError):
    """A node whose text its tag's constructor refuses: ``!!int abc``, a 30 February."""

    def __init__(self, node: yaml.Node, reason: str) -> None:
        super().__init__(reason)
        self.node = node
        self.reason = reason
        self.root: yaml.Node | None = None  # set by _parse, to locate the node


class _Constructing(yaml.constructor.SafeConstructor):
    """The safe constructor, for which a value it refuses is a problem at that node, not a
    traceback."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            value = super().construct_object(node, deep)
        except (yaml.YAMLError, FakeProviderError):
            raise
        except Exception as error:  # any constructor's failure is the text's fault
            raise _UnconvertibleNodeError(node, _unconvertible(node, error)) from None
        if isinstance(value, int) and _too_long_for_text(value):
            reason = f"an integer of more than {sys.get_int_max_str_digits()} digits"
            raise _UnconvertibleNodeError(node, reason)
        return value


class _BoundedPythonLoader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    _Constructing,
    yaml.resolver.Resolver,
):
    """The pure-Python loader, where PyYAML has no libyaml: it stops composing past
    MAX_FIXTURE_DEPTH, since its composer recurses once per level and deeper input would
    exhaust the stack."""

    _depth = 0

    def __init__(self, text: str) -> None:
        yaml.reader.Reader.__init__(self, text)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _Constructing.__init__(self)
        yaml.resolver.Resolver.__init__(self)

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_FIXTURE_DEPTH:
                raise _UnsafeShapeError(_too_deep(), _line(parent) if parent is not None else None)
            node: yaml.Node | None = super().compose_node(parent, index)
            return node
        finally:
            self._depth -= 1


def _loader(text: str) -> Any:
    """libyaml's parser and composer (ten times the pure-Python ones, most of a run's
    corpus load; libyaml refuses nesting past its own depth, 1000) under the safe
    constructor, or the bounded pure-Python loader without libyaml."""
    if not yaml.__with_libyaml__:  # a PyYAML built without it: the same nodes, slower
        return _BoundedPythonLoader(text)
    return _libyaml_loader()(text)


@functools.cache
def _libyaml_loader() -> type:
    from yaml.cyaml import CParser  # type: ignore[attr-defined]

    class LibyamlLoader(CParser, _Constructing, yaml.resolver.Resolver):
        def __init__(self, text: str) -> None:
            CParser.__init__(self, text)
            _Constructing.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    return LibyamlLoader


def _unconvertible(node: yaml.Node, error: Exception) -> str:
    """Why a node does not convert, e.g. ``'2024-02-30' is not a valid !!timestamp: day is
    out of range for month``; the constructors' other failures (KeyError, IndexError…) say
    nothing a fixture author can use, so only the tag is named."""
    tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
    text = node.value if isinstance(node, yaml.ScalarNode) else f"a {type(node).__name__}"
    shown = repr(text if len(text) <= 40 else text[:40] + "...")
    reason = f"{shown} is not a valid {tag}"
    if isinstance(error, ValueError):
        reason += ": " + str(error).partition("; use sys.")[0]  # Python's int-digit advice
    return reason


def _too_long_for_text(value: int) -> bool:
    """An integer Python refuses to write as decimal text (a hexadecimal literal can make
    one), which would fail when the stream is encoded."""
    limit = sys.get_int_max_str_digits()
    # 10**limit has more than 3 * limit bits: only then is the exact test worth its cost.
    return limit > 0 and value.bit_length() > 3 * limit and abs(value) >= 10**limit


def _parse(text: str) -> tuple[yaml.Node | None, Any]:
    """The document's node graph and its data; the graph is checked before it is built."""
    loader = _loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        if _shares_nodes(node):
            _check_aliases(node)
        try:
            return node, loader.construct_document(node)
        except _UnconvertibleNodeError as error:
            error.root = node
            raise
    finally:
        loader.dispose()


def _shares_nodes(root: yaml.Node) -> bool:
    """Whether aliases share a node, after refusing a tree nested past MAX_FIXTURE_DEPTH:
    one visit per node, without recursion (the composed tree may be 1000 levels deep)."""
    seen: set[int] = set()
    shared = False
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:  # an alias: its node was walked where it was anchored
            shared = True
            continue
        seen.add(id(node))
        children = _children(node)
        if children and depth >= MAX_FIXTURE_DEPTH:
            raise _UnsafeShapeError(_too_deep(), _line(node))
        stack += [(child, depth + 1) for child in children]
    return shared


def _check_aliases(root: yaml.Node) -> None:
    """Refuse aliases that make the graph cyclic, too deep, or too large once expanded, in
    nodes or in bytes of text.

    Aliases make the graph a DAG of shared nodes. Size and height are memoized per node,
    so this costs one visit per distinct node however large the expansion; an anchor comes
    before its aliases, so the recursion only descends the composed (depth-limited) tree.
    """
    shapes: dict[int, _Shape] = {}
    on_path: set[int] = set()

    def shape(node: yaml.Node, depth: int) -> _Shape:
        key = id(node)
        if key in on_path:
            raise _UnsafeShapeError("an alias refers to a node that contains it", _line(node))
        if key not in shapes:
            on_path.add(key)
            parts = [shape(child, depth + 1) for child in _children(node)]
            on_path.discard(key)
            own_bytes = len(node.value.encode()) if isinstance(node, yaml.ScalarNode) else 0
            shapes[key] = _Shape(
                1 + sum(part.nodes for part in parts),
                1 + max((part.height for part in parts), default=0),
                own_bytes + sum(part.text_bytes for part in parts),
            )
        found = shapes[key]
        if depth + found.height - 1 > MAX_FIXTURE_DEPTH:
            raise _UnsafeShapeError(_too_deep(), _line(node))
        return found

    expanded = shape(root, 1)
    added = expanded.nodes - len(shapes)
    if added > MAX_ALIAS_EXPANSION:
        raise _UnsafeShapeError(
            f"YAML aliases expand the fixture by {added} nodes, more than "
            f"{MAX_ALIAS_EXPANSION} (an alias bomb?)"
        )
    if expanded.text_bytes > MAX_EXPANDED_BYTES:
        raise _UnsafeShapeError(
            f"YAML aliases expand the fixture to {expanded.text_bytes} bytes of text, more "
            f"than {MAX_EXPANDED_BYTES} (an alias bomb?)"
        )


@dataclass(frozen=True)
class _Shape:
    """A node once its aliases are expanded: how many nodes, how high, how much text."""

    nodes: int
    height: int
    text_bytes: int


def _location_of(root: yaml.Node | None, target: yaml.Node) -> Location | None:
    """Where ``target`` first occurs below ``root``; a mapping key is located at its mapping."""
    if root is None:
        return None
    stack: list[tuple[yaml.Node, Location]] = [(root, ())]
    seen: set[int] = set()  # aliases share nodes: visit each once
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in reversed(node.value):
                stack.append((value, (*path, key.value)))
                if key is target:
                    return path
        elif isinstance(node, yaml.SequenceNode):
            stack += [(item, (*path, n)) for n, item in reversed(list(enumerate(node.value)))]
    return None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


def _too_deep() -> str:
    return f"nested more than {MAX_FIXTURE_DEPTH} levels deep"


def _index_lines(node: yaml.Node, path: Location, lines: _Lines) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = (*path, key.value)
            lines[child] = key.start_mark.line + 1
            _index_lines(value, child, lines)
            lines[child] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for position, item in enumerate(node.value):
            _index_lines(item, (*path, position), lines)


_CUT_SHORT = (
    "warning: this plain scalar ends at ' #', where YAML starts a comment, so the value is "
    "just {value!r} and the rest of the line is dropped; quote the value to keep it, or put "
    "two spaces before a comment"
)


def _cut_scalars(node: yaml.Node, path: Location, text: str) -> Iterator[tuple[Location, str, int]]:
    """Plain scalar values (style None, or "" from libyaml) followed by one space (or tab)
    and ``#``: likely text cut short (``notes: see issue #12`` is just ``see issue``), not a
    comment set apart as one is."""
    if isinstance(node, yaml.ScalarNode):
        end = node.end_mark
        after = text[end.index : end.index + 2]
        if not node.style and after in (" #", "\t#"):
            yield path, node.value, end.line + 1
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from _cut_scalars(value, (*path, key.value), text)
    elif isinstance(node, yaml.SequenceNode):
        for position, item in enumerate(node.value):
            yield from _cut_scalars(item, (*path, position), text)


def _problem(path: Path, detail: Any, lines: _Lines) -> FixtureProblem:
    return _located(path, _data_path(detail["loc"]), _reason(detail), lines)


def _located(
    path: Path,
    location: Location,
    reason: str,
    lines: Mapping[Location, int],
) -> FixtureProblem:
    line = None
    for end in range(len(location), -1, -1):
        # The nearest node that exists: a missing field is reported on its parent.
        line = lines.get(location[:end])
        if line is not None:
            break
    return FixtureProblem(path, _dotted(location), reason, line)


def _data_path(loc: Location) -> Location:
    # Steps and attempts are tagged unions: pydantic puts the tag right after the list
    # position (steps.1.pause_ms.evnt_end). The file has no such level, so drop it.
    out: list[str | int] = []
    skip_tag = False
    for part in loc:
        if skip_tag:
            skip_tag = False
            continue
        out.append(part)
        skip_tag = isinstance(part, int) and len(out) > 1 and out[-2] in _TAGGED_LISTS
    return tuple(out)


_TAGGED_LISTS = ("steps", "attempts")


def _dotted(location: Location) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _reason(detail: Any) -> str:
    message = str(detail["msg"])
    if detail["type"] == "extra_forbidden":
        return "unknown field (check its spelling)"
    return message.removeprefix("Value error, ")


# A scenario written as a fixture file: YAML that reads like the hand-written corpus.
#
# Defaults are left out, steps are one-line flow mappings (or the bare words done, stall, ...)
# and multi-line text is a literal block; :func:`fixture_yaml` round-trips through
# :func:`fakeprovider.fixtures.load_fixture` to the same scenario.
#


class _FlowMap(dict[str, Any]):
    """Dumped in YAML flow style (one line): a step's value, as hand-written fixtures do."""


class _FlowList(list[Any]):
    """Dumped in YAML flow style: a list of scalars such as tags."""


class _FixtureDumper(yaml.SafeDumper):
    pass


def _represent_flow_map(dumper: yaml.SafeDumper, value: _FlowMap) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=True)


def _represent_flow_list(dumper: yaml.SafeDumper, value: _FlowList) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # Multi-line text as a literal block; the emitter falls back to quoting where a block
    # is not allowed (inside flow style, trailing spaces, control characters).
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FixtureDumper.add_representer(_FlowMap, _represent_flow_map)
_FixtureDumper.add_representer(_FlowList, _represent_flow_list)
_FixtureDumper.add_representer(str, _represent_str)


def fixture_yaml(scenario: Scenario) -> str:
    """The scenario as a fixture file: defaults left out, bare words for done/stall/…"""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    for attempt, dumped in zip(scenario.attempts, data["attempts"], strict=True):
        if isinstance(attempt, StreamAttempt):
            dumped["stream"]["steps"] = [
                _fixture_step(step, dumped_step)
                for step, dumped_step in zip(
                    attempt.stream.steps, dumped["stream"]["steps"], strict=True
                )
            ]
    text: str = yaml.dump(_styled(data), Dumper=_FixtureDumper, sort_keys=False, width=4096)
    return text


def _fixture_step(step: BaseModel, dumped: dict[str, Any]) -> Any:
    # A step's first field is the key that tells its kind (chunk, done, pause_ms…); dumped
    # without defaults, {"done": true} loses it and becomes {}, so put it back.
    key = next(iter(type(step).model_fields))
    dumped = {key: getattr(step, key)} | dumped
    if dumped == {key: True}:
        return key  # the bare word: done, stall, reset, end…
    return {
        name: _FlowMap(value) if isinstance(value, dict) else value
        for name, value in dumped.items()
    }


def _styled(value: Any) -> Any:
    if isinstance(value, _FlowMap | str):
        return value
    if isinstance(value, dict):
        return {key: _styled(item) for key, item in value.items()}
    if isinstance(value, list):
        if all(not isinstance(item, dict | list) for item in value):
            return _FlowList(value)
        return [_styled(item) for item in value]
    return value
