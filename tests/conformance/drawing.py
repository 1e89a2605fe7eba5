"""Searching a family of generated cases for a wire shape it is meant to draw.

A search only has to show that the shape is drawn, so it stops at the first example: shrinking
it (what ``hypothesis.find`` does by default) took minutes over the shape tests and, under a
crowded CPU, ran into the test timeout.
"""

from __future__ import annotations

from collections.abc import Callable

import hypothesis
from hypothesis import Phase

from conformance.strategies import family_cases
from fakeprovider.scenario import Scenario

FIRST_FOUND = hypothesis.settings(
    phases=[Phase.generate], max_examples=2000, database=None, deadline=None
)
SHRUNK = hypothesis.settings(max_examples=2000, database=None, deadline=None)


def drawn(
    family: str,
    dialect: str,
    wanted: Callable[[Scenario], bool],
    settings: hypothesis.settings = FIRST_FOUND,
) -> Scenario:
    """The first case of ``family`` in ``dialect`` that is ``wanted`` (shrunk under ``SHRUNK``)."""
    return hypothesis.find(family_cases(family, dialect), wanted, settings=settings)
