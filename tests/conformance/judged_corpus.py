"""The bundled fixtures of every dialect, as the whole-corpus tests judge them."""

from __future__ import annotations

from conformance.options import bundled_fixtures
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario


def judged_fixtures() -> list[Scenario]:
    """The bundled scenarios, chat-completions and Anthropic Messages alike, in load order."""
    return load_fixtures([bundled_fixtures()])
