"""Real-world stream quirks: the catalogue (:mod:`.catalogue`) and its transforms.

The catalogue names each quirk of anchors.md §3, its level and, for an ambiguous one, the
aspects of the outcome it contests and the readings of the wire it admits; the transforms
(:mod:`.transforms`) re-encode a scenario the way a quirky provider would, meaning kept.
"""

from .catalogue import (
    ASPECT_TITLES,
    ASPECTS,
    CONTESTS_TAG_PREFIX,
    INFO_TAG,
    QUIRK_TAG_PREFIX,
    QUIRKS,
    READING_TAG_PREFIX,
    TRANSFORMS,
    Aspect,
    Quirk,
    QuirkLevel,
    admitted_readings,
    contested_aspects,
    graded_quirks,
    quirk_ids,
    recorded_only,
    unbounded_reading,
    with_quirks,
)
from .transforms import Transform

__all__ = [
    "ASPECTS",
    "ASPECT_TITLES",
    "CONTESTS_TAG_PREFIX",
    "INFO_TAG",
    "QUIRKS",
    "QUIRK_TAG_PREFIX",
    "READING_TAG_PREFIX",
    "TRANSFORMS",
    "Aspect",
    "Quirk",
    "QuirkLevel",
    "Transform",
    "admitted_readings",
    "contested_aspects",
    "graded_quirks",
    "quirk_ids",
    "recorded_only",
    "unbounded_reading",
    "with_quirks",
]
