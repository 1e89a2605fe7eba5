"""Helpers the strategies share: cached small strategies and the JSON shapes they build.

Strategies are built once and reused: a fresh strategy object is validated on its first
draw, which would otherwise be most of the cost of a draw. Hypothesis memoises
``integers``, ``lists`` and ``booleans`` too, but its lookup hashes the arguments on every
call (about 5 us, against 0.05 us here): without these caches, drawing G, H and R cases
took 3-4% longer.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
Chunk = dict[str, Any]  # a chat.completion.chunk object (or a part of one), as JSON
Step = dict[str, Any]  # a stream step, in the fixture format


@functools.lru_cache(maxsize=4096)
def pick(options: tuple[Hashable, ...]) -> st.SearchStrategy[Any]:
    """One of ``options``; shrinks toward the first."""
    return st.sampled_from(options)


@functools.lru_cache(maxsize=4096)
def upto(most: int) -> st.SearchStrategy[int]:
    """An integer from 0 to ``most``; shrinks toward 0."""
    return st.integers(0, most)


def picked(draw: st.DrawFn, options: tuple[T, ...]) -> T:
    """One of ``options`` (any values, hashable or not), shrinking toward the first."""
    return options[draw(upto(len(options) - 1))]


@functools.lru_cache(maxsize=4096)
def positions(most: int, count: int) -> st.SearchStrategy[list[int]]:
    """Up to ``count`` positions from 0 to ``most`` (repeats allowed)."""
    return st.lists(upto(most), max_size=count)


BOOLEANS = st.booleans()
