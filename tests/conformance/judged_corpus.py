"""The bundled chat-completions fixtures: what the whole-corpus tests judged before dialects.

The corpus also holds Anthropic cases (fixtures/anthropic): the oracle reads them,
`conformance validate` checks their expect, and `conformance run` and the pytest plugin play
them for an adapter that declares the dialect (n/a for the others). The tests that use this
helper judge the chat cases alone, as they did before the runner played another dialect.
"""

from __future__ import annotations

from conformance.options import bundled_fixtures
from fakeprovider.dialects import DEFAULT_DIALECT
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario


def judged_fixtures() -> list[Scenario]:
    """The bundled scenarios of the dialects the runner plays, in load order."""
    return [s for s in load_fixtures([bundled_fixtures()]) if s.dialect == DEFAULT_DIALECT]
