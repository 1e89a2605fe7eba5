"""The bundled fixtures the suite judges today: those of the dialects its oracle reads.

The corpus also holds cases of dialects the oracle cannot read yet (fixtures/anthropic);
conformance run, the pytest plugin and conformance validate leave them out, and so do the
tests that run or read the whole corpus.
"""

from __future__ import annotations

from conformance.options import bundled_fixtures
from fakeprovider.dialects import DEFAULT_DIALECT
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario


def judged_fixtures() -> list[Scenario]:
    """The bundled scenarios of the dialects the suite judges, in load order."""
    return [s for s in load_fixtures([bundled_fixtures()]) if s.dialect == DEFAULT_DIALECT]
