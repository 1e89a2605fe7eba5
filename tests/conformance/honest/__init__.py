"""The honest-library population: the reference adapter with deliberate, lossless choices
real libraries make (issue 22). Under the interop contract none of them may get a fail:
each loses nothing the wire sent, so a fail is the suite's false positive.

Each adapter is one choice of :data:`.choices.CHOICES` (``composite`` makes all of them
together) and loads like any Python adapter, from the repository's root::

    conformance run --contract interop --adapter tests.conformance.honest:no_finish_reason
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from functools import reduce

import httpx

from conformance.adapters.reference.adapter import ReferenceAdapter
from conformance.adapters.reference.retry import Attempt
from conformance.adapters.reference.shell import AttemptStream
from conformance.adapters.reference.translate import StreamTranslator
from conformance.events import Event, RunCase
from conformance.options import RunOptions

from .choices import CHOICES, Choice


def _layered(name: str, base: type, layers: Sequence[type]) -> type:
    """``base`` with each layer's overrides on top (each layer calls ``super()``)."""
    return type(name, (*layers, base), {}) if layers else base


@dataclass(frozen=True)
class Honest:
    """An adapter of the population: the reference with ``choices`` made."""

    name: str
    choices: tuple[Choice, ...]

    @property
    def target(self) -> str:
        """How to load it from the repository's root: the value of ``--adapter``."""
        return f"tests.conformance.honest:{self.name}"

    def factory(self, options: RunOptions) -> HonestAdapter:
        return HonestAdapter(self)


class HonestAdapter:
    """The reference adapter built with the choices' pieces; its own name and capabilities."""

    def __init__(self, honest: Honest) -> None:
        choices = honest.choices
        translator = _layered(
            f"{honest.name}_translator",
            StreamTranslator,
            [c.translator for c in choices if c.translator is not None],
        )
        attempt = _layered(
            f"{honest.name}_attempt",
            AttemptStream,
            [c.attempt for c in choices if c.attempt is not None],
        )

        def start_attempt(client: httpx.AsyncClient, case: RunCase, body: bytes) -> Attempt:
            made: Attempt = attempt(client, case, body, translator=translator)
            return made

        self._inner = ReferenceAdapter(start_attempt=start_attempt)
        self._rewrites = [c.rewrite for c in choices if c.rewrite is not None]
        hello = self._inner.hello
        declared = {key: value for c in choices for key, value in c.capabilities.items()}
        self.hello = hello.model_copy(
            update={
                "name": f"streamconform-honest-{honest.name}",
                "capabilities": hello.capabilities.model_copy(update=declared),
            }
        )

    async def run(
        self, case: RunCase, http_client: httpx.AsyncClient | None = None
    ) -> AsyncGenerator[Event, None]:
        events = self._inner.run(case, http_client)
        async with aclosing(events):
            async for event in events:
                for emitted in self._rewritten(event):
                    yield emitted

    def _rewritten(self, event: Event) -> Sequence[Event]:
        return reduce(
            lambda events, rewrite: [out for e in events for out in rewrite(e)],
            self._rewrites,
            [event],
        )


HONEST: dict[str, Honest] = {
    **{choice.name: Honest(choice.name, (choice,)) for choice in CHOICES},
    "composite": Honest("composite", CHOICES),
}


def __getattr__(name: str) -> Callable[[RunOptions], HonestAdapter]:
    """``tests.conformance.honest:<name>``: the factory of the honest adapter ``name``."""
    honest = HONEST.get(name)
    if honest is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (no such adapter)")
    return honest.factory


__all__ = ["HONEST", "Honest", "HonestAdapter"]
