"""Hypothesis profiles for the generated cases: ``ci`` unless ``--hypothesis-profile`` says
otherwise (``dev``, ``thorough``); registered before Hypothesis' plugin reads the option.
Files with a ``slow`` test are collected first. And no test writes to the job summary or the
outputs of a CI step the suite itself runs in (conformance run appends to GitHub's files)."""

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


@pytest.fixture(autouse=True)
def _no_github_step_files(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
