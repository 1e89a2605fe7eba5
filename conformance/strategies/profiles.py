"""Hypothesis settings profiles for generated cases: ``ci``, ``dev`` and ``thorough``.

``ci`` is small and derandomized (the test command's budget: the same cases every run);
``dev`` is randomized and remembers failures in the local example database; ``thorough``
is the acceptance budget of 2 000 examples per family. Select one with ``pytest
--hypothesis-profile NAME`` or ``conformance fuzz --hypothesis-profile NAME``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Cases are run against a live adapter: their time is the adapter's, and a stall or an
# honoured Retry-After costs real seconds by design.
_COMMON = settings(
    deadline=None,
    print_blob=False,
    suppress_health_check=(
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ),
)

PROFILES: dict[str, settings] = {
    "ci": settings(_COMMON, max_examples=25, derandomize=True, database=None),
    "dev": settings(_COMMON, max_examples=200),
    "thorough": settings(_COMMON, max_examples=2000),
}


def register_profiles() -> None:
    """Make the profiles known to Hypothesis (by name, for ``--hypothesis-profile``)."""
    for name, profile in PROFILES.items():
        settings.register_profile(name, profile)
