"""One exception root per package, and one tree that says where every exception hangs.

Every exception class defined in ``fakeprovider`` derives from ``FakeProviderError``, every one
in ``conformance`` from ``ConformanceError``, so that a caller catches either package's errors
with one ``except``. The root's docstring draws the tree (as httpx's ``_exceptions.py`` does);
these tests hold it to the classes, so the tree cannot drift from the code.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from types import ModuleType

import pytest

import conformance
import fakeprovider
import fakeprovider.errors
from conformance.codes import ConformanceError
from fakeprovider.errors import FakeProviderError

# package, its root, the docstring that draws the root's tree
ROOTS = [
    (fakeprovider, FakeProviderError, fakeprovider.errors.__doc__),
    (conformance, ConformanceError, ConformanceError.__doc__),
]
PACKAGE_IDS = [package.__name__ for package, _, _ in ROOTS]

# `  + NameError (ValueError, KeyError)   what it means`: indentation makes the tree.
TREE_LINE = re.compile(
    r"(?P<indent> *)(?:\+ )?(?P<name>_?[A-Z]\w*Error)(?: \((?P<builtins>[\w, ]+)\))?(?: {2,}|$)"
)

Shape = tuple[str | None, tuple[str, ...]]  # (parent in the package, builtin bases)


def modules(package: ModuleType) -> Iterator[ModuleType]:
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if info.name.endswith(".__main__"):
            continue  # importing one runs its command
        try:
            yield importlib.import_module(info.name)
        except ModuleNotFoundError as missing:
            # A third-party shim imports its library, installed only in its own tox environment.
            if (missing.name or "").partition(".")[0] in PACKAGE_IDS:
                raise


def exceptions(package: ModuleType) -> list[type[BaseException]]:
    """Every exception class a module of ``package`` defines at its top level."""
    found = {
        value
        for module in modules(package)
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == module.__name__
    }
    return sorted(found, key=lambda cls: (cls.__module__, cls.__qualname__))


def drawn(doc: str) -> dict[str, Shape]:
    """The classes a docstring's tree names, each with its parent and its builtin bases."""
    branch: list[tuple[int, str]] = []  # (indent, name) from the root to the last line
    tree: dict[str, Shape] = {}
    for line in inspect.cleandoc(doc).splitlines():
        match = TREE_LINE.match(line)
        if match is None:
            continue
        indent, name = len(match["indent"]), match["name"]
        while branch and branch[-1][0] >= indent:
            branch.pop()
        builtins = tuple(re.findall(r"\w+", match["builtins"] or ""))
        tree[name] = (branch[-1][1] if branch else None, builtins)
        branch.append((indent, name))
    return tree


def shape(cls: type[BaseException], root: type[BaseException]) -> Shape:
    if cls is root:
        return None, ()
    parent = next((base.__name__ for base in cls.__bases__ if issubclass(base, root)), None)
    builtins = tuple(base.__name__ for base in cls.__bases__ if base.__module__ == "builtins")
    return parent, builtins


@pytest.mark.parametrize(("package", "root", "doc"), ROOTS, ids=PACKAGE_IDS)
def test_every_exception_derives_from_the_root(
    package: ModuleType, root: type[BaseException], doc: str
) -> None:
    assert [cls for cls in exceptions(package) if not issubclass(cls, root)] == []


@pytest.mark.parametrize(("package", "root", "doc"), ROOTS, ids=PACKAGE_IDS)
def test_every_exception_is_named_error(
    package: ModuleType, root: type[BaseException], doc: str
) -> None:
    assert [cls for cls in exceptions(package) if not cls.__name__.endswith("Error")] == []


@pytest.mark.parametrize(("package", "root", "doc"), ROOTS, ids=PACKAGE_IDS)
def test_the_tree_draws_every_exception_where_it_hangs(
    package: ModuleType, root: type[BaseException], doc: str
) -> None:
    found = exceptions(package)
    assert len({cls.__name__ for cls in found}) == len(found), "one name, one class"
    assert drawn(doc) == {cls.__name__: shape(cls, root) for cls in found}


def test_fakeprovider_exports_every_public_exception() -> None:
    public = {cls.__name__ for cls in exceptions(fakeprovider) if not cls.__name__.startswith("_")}
    assert public <= set(fakeprovider.__all__)


def test_the_old_name_of_unknown_scenario_still_imports() -> None:
    from fakeprovider.registry import UnknownScenario

    assert UnknownScenario is fakeprovider.UnknownScenario is fakeprovider.UnknownScenarioError
