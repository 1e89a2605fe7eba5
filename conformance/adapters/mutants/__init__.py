"""Mutants of the reference adapter: each has one realistic bug and names the invariants
that must catch it (the suite's honesty rule: every checker is proven by an adapter that
breaks it and one that keeps it).

Every mutant loads like any Python adapter, its name being the factory::

    conformance run --adapter conformance.adapters.mutants:identity_any_defined

``conformance.run.kill_table.kill_table`` runs them all and reports which invariants caught each.
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.options import RunOptions

from .core import Mutant, MutantAdapter
from .registry import AWAITING_CHECKERS, MUTANTS

__all__ = ["AWAITING_CHECKERS", "MUTANTS", "Mutant", "MutantAdapter"]


def __getattr__(name: str) -> Callable[[RunOptions], MutantAdapter]:
    """``conformance.adapters.mutants:<name>``: the factory of the mutant called ``name``."""
    mutant = MUTANTS.get(name) or AWAITING_CHECKERS.get(name)
    if mutant is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (no such mutant)")
    return mutant.factory


def __dir__() -> list[str]:
    return sorted([*globals(), *MUTANTS, *AWAITING_CHECKERS])
