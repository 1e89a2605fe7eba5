"""The bundled fixtures the suite runs today: those of the dialects `conformance run` plays.

The corpus also holds cases of a dialect the runner does not play yet (fixtures/anthropic:
the oracle reads them, `conformance validate` checks their expect, but `conformance run`
and the pytest plugin leave them out), and so do the tests that run the whole corpus.
"""

from __future__ import annotations

from conformance.options import bundled_fixtures
from fakeprovider.dialects import DEFAULT_DIALECT
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario


def judged_fixtures() -> list[Scenario]:
    """The bundled scenarios of the dialects the runner plays, in load order."""
    return [s for s in load_fixtures([bundled_fixtures()]) if s.dialect == DEFAULT_DIALECT]
