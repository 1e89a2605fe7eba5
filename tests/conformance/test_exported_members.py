"""The package's public names: one list (``_EXPORTS``) that the type checkers' imports, the
lazy ``__getattr__`` and ``__all__`` all agree with."""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest

import conformance


def type_checking_imports() -> dict[str, str]:
    """Each name the ``if TYPE_CHECKING:`` block imports, and the module it comes from."""
    tree = ast.parse(inspect.getsource(conformance))
    (block,) = (
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    imported: dict[str, str] = {}
    for statement in block.body:
        assert isinstance(statement, ast.ImportFrom)
        for alias in statement.names:
            # `X as X` is what makes the name a re-export for a type checker.
            assert alias.asname == alias.name, ast.unparse(statement)
            imported[alias.name] = "." * statement.level + (statement.module or "")
    return imported


def test_exports_match_the_type_checking_imports() -> None:
    assert type_checking_imports() == conformance._EXPORTS
    assert conformance.__all__ == sorted(conformance._EXPORTS)


@pytest.mark.parametrize("name", conformance.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    module = importlib.import_module(conformance._EXPORTS[name], conformance.__name__)
    assert getattr(conformance, name) is getattr(module, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = conformance.nothing
