"""Hypothesis profiles for the generated cases: ``ci`` unless ``--hypothesis-profile`` says
otherwise (``dev``, ``thorough``); registered before Hypothesis' plugin reads the option.
And files with a ``slow`` test are collected first."""

import pytest
from hypothesis import settings

from conformance.strategies.profiles import register_profiles

register_profiles()
settings.load_profile("ci")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with a ``slow`` test first, each file's tests in their order. pytest-xdist
    hands out whole files in this order (``--dist loadfile --no-loadscope-reorder``, as
    scripts/test runs it): a slow file handed out last would finish last, cores idle."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)
