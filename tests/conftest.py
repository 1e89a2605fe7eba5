"""Hypothesis profiles for the generated cases: ``ci`` unless ``--hypothesis-profile`` says
otherwise (``dev``, ``thorough``); registered before Hypothesis' plugin reads the option."""

from hypothesis import settings

from conformance.strategies.profiles import register_profiles

register_profiles()
settings.load_profile("ci")
