"""The floor plan of docs/architecture.md, checked from the code's own imports.

Every import between two stages must point down the pipeline; the root of ``conformance``
holds only vocabulary and entry points; the results model stays a leaf.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("conformance", "fakeprovider")

# Higher floors may import lower ones, never the other way round; one floor may hold several
# stages, which then must not import each other.
FLOORS: dict[str, int] = {
    "conformance": 9,  # the lazy public face; it names everything
    "conformance.__main__": 10,
    "conformance.cli": 9,
    "conformance.pytest_plugin": 9,
    "conformance.gateway": 8,
    "conformance.run": 7,
    "conformance.report": 6,
    "conformance.adapters": 5,
    "conformance.invariants": 4,
    "conformance.strategies": 4,
    "conformance.oracle": 3,
    "conformance.quirks": 3,
    "conformance.lint": 3,
    "conformance.options": 2,
    "conformance.results": 2,
    "conformance.kept": 2,
    "conformance.events": 1,
    "conformance.spec": 1,
    "conformance.codes": 0,
    "conformance.verdicts": 0,
    "fakeprovider": -1,
}
ROOT_MODULES = {
    "__init__",
    "__main__",
    "codes",
    "events",
    "kept",
    "options",
    "pytest_plugin",
    "results",
    "spec",
    "verdicts",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def stage(module: str) -> str:
    """The stage a module belongs to: a folder of conformance, a root module, or fakeprovider."""
    parts = module.split(".")
    if parts[0] == "fakeprovider":
        return "fakeprovider"
    return ".".join(parts[:2])


def known_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """Every module of ours that ``path`` imports, at any depth (TYPE_CHECKING included)."""
    module = module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield node.lineno, submodule if known_module(submodule) else target


def source_files() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def upward_imports() -> list[str]:
    found = []
    for path in source_files():
        here = stage(module_name(path))
        for line, target in imported_modules(path):
            if target.split(".")[0] not in PACKAGES:
                continue
            there = stage(target)
            if here == there:
                continue
            if FLOORS[there] >= FLOORS[here]:
                found.append(f"{path.relative_to(ROOT)}:{line}: {here} imports {there}")
    return found


def test_every_stage_has_a_floor() -> None:
    stages = {stage(module_name(path)) for path in source_files()}
    assert stages <= set(FLOORS), f"add to FLOORS and docs/architecture.md: {stages - set(FLOORS)}"


def test_imports_only_point_down() -> None:
    assert upward_imports() == []


def test_the_conformance_root_holds_vocabulary_and_entry_points() -> None:
    modules = {path.stem for path in (ROOT / "conformance").glob("*.py")}
    assert modules <= ROOT_MODULES, f"a stage belongs in a folder: {modules - ROOT_MODULES}"


@pytest.mark.parametrize(
    ("module", "allowed"),
    [
        (  # codes: the root of the errors reading saved results raises
            "conformance.results",
            {"conformance", "conformance.results", "conformance.verdicts", "conformance.codes"},
        ),
        ("conformance.verdicts", {"conformance", "conformance.verdicts"}),
        ("conformance.events", {"conformance", "conformance.events", "conformance.codes"}),
    ],
)
def test_vocabulary_imports_no_stage(module: str, allowed: set[str]) -> None:
    """Reading a results file must not load the checkers, the oracle or the server."""
    probe = (
        f"import sys, {module}; "
        "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in "
        f"{PACKAGES!r}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    assert set(loaded) <= allowed


def test_no_test_imports_the_tests_folder_as_a_package() -> None:
    """tests/ is no package: ``from tests.x import y`` resolves only where the checkout's root
    happens to be on the import path; helpers are imported by their module name."""
    offenders = []
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            if any(name == "tests" or name.startswith("tests.") for name in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
