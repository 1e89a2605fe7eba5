"""Real-world stream quirks: the catalogue (:mod:`.catalogue`) and its transforms.

The catalogue names each quirk of anchors.md §3 and its level; the transforms
(:mod:`.transforms`) re-encode a scenario the way a quirky provider would, meaning kept.
"""

from .catalogue import (
    INFO_TAG,
    QUIRK_TAG_PREFIX,
    QUIRKS,
    TRANSFORMS,
    Quirk,
    QuirkLevel,
    graded_quirks,
    quirk_ids,
    recorded_only,
    with_quirks,
)
from .transforms import Transform

__all__ = [
    "INFO_TAG",
    "QUIRKS",
    "QUIRK_TAG_PREFIX",
    "TRANSFORMS",
    "Quirk",
    "QuirkLevel",
    "Transform",
    "graded_quirks",
    "quirk_ids",
    "recorded_only",
    "with_quirks",
]
