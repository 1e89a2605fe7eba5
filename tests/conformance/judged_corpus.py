"""The bundled fixtures the suite judges today: those of the dialects its oracle reads.

The corpus also holds cases of another dialect (fixtures/anthropic): conformance run and the
pytest plugin give them to an adapter that declares their dialect (the others get them n/a),
and the tests that judge the reference adapter over the whole corpus leave them out until it
speaks that dialect.
"""

from __future__ import annotations

from conformance.options import bundled_fixtures
from fakeprovider.dialects import DEFAULT_DIALECT
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario


def judged_fixtures() -> list[Scenario]:
    """The bundled scenarios of the dialects the suite judges, in load order."""
    return [s for s in load_fixtures([bundled_fixtures()]) if s.dialect == DEFAULT_DIALECT]
