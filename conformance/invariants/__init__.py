"""The invariant catalogue (INVARIANTS.md): one module per family, registered on import."""

from ..verdicts import FAMILY_TITLES, VERDICTS, Level, Verdict
from . import (
    anthropic,
    content,
    empty,
    framing,
    grammar,
    identity,
    next_request,
    quirks,
    responses,
    retry,
    transport,
)
from .registry import CATALOGUE, Invariant, Judgement, breached, held, invariant, weaker

__all__ = [
    "CATALOGUE",
    "FAMILY_TITLES",
    "VERDICTS",
    "Invariant",
    "Judgement",
    "Level",
    "Verdict",
    "anthropic",
    "breached",
    "content",
    "empty",
    "framing",
    "grammar",
    "held",
    "identity",
    "invariant",
    "next_request",
    "quirks",
    "responses",
    "retry",
    "transport",
    "weaker",
]
