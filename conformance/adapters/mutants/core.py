"""What a mutant is: the reference adapter with exactly one piece swapped for a buggy one.

The pieces are the reference's own seams: the translator (payloads → events), the SSE
decoder (bytes → payloads), the attempt (one HTTP request, an `AttemptStream`), the retry
layer (attempts in sequence, `run_with_retries`), for bugs in the event grammar itself, a
rewrite of each event the adapter yields, the next request of a two-turn case, and the
retry policy its hello declares.

A mutant with `own_policy` is a variant of the reference that runs the run's policy as its
own and declares it (`conformance.adapters.reference:own_policy`, as a library's shim does):
judged under the interop contract, where a declaration is what retries are held to.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from conformance.adapters.reference.adapter import ReferenceAdapter, RetryLayer
from conformance.adapters.reference.anthropic import AnthropicTranslator
from conformance.adapters.reference.next_request import NextRequest, next_request
from conformance.adapters.reference.responses import ResponsesTranslator
from conformance.adapters.reference.retry import Attempt, run_with_retries
from conformance.adapters.reference.shell import AttemptStream
from conformance.adapters.reference.sse import SSEDecoder
from conformance.adapters.reference.translate import StreamTranslator
from conformance.events import DeclaredRetryPolicy, Event, RunCase
from conformance.invariants import CATALOGUE
from conformance.options import RunOptions
from conformance.verdicts import Contract

# A dialect invariant's id as the reference proposes them: AN-G1, RS-C2, GW-3.
# What a rewrite yields for one event; a dict is the event's JSON form, as an adapter may send.
Emitted = Event | dict[str, Any]
Rewrite = Callable[[Event], Sequence[Emitted]]
# A misstatement of the policy the adapter runs: its true declaration in, the one it sends out.
Misdeclare = Callable[[DeclaredRetryPolicy], DeclaredRetryPolicy]


class MakeAttempt(Protocol):
    """`AttemptStream` or a variant: one attempt built from a decoder and a translator."""

    def __call__(
        self,
        client: httpx.AsyncClient,
        case: RunCase,
        body: bytes,
        *,
        decoder: Callable[[], SSEDecoder],
        translator: Callable[[], StreamTranslator],
        anthropic_translator: Callable[[], AnthropicTranslator],
        responses_translator: Callable[[], ResponsesTranslator],
    ) -> Attempt: ...


def unchanged(event: Event) -> Sequence[Emitted]:
    return (event,)


@dataclass(frozen=True)
class Mutant:
    """One realistic bug, the invariants that must catch it, and how to build the adapter."""

    name: str
    bug: str  # one line: what the mutant gets wrong
    targets: tuple[str, ...]  # invariant ids that must fail (non-strict for a SHOULD)
    translator: Callable[[], StreamTranslator] = StreamTranslator
    anthropic_translator: Callable[[], AnthropicTranslator] = AnthropicTranslator
    responses_translator: Callable[[], ResponsesTranslator] = ResponsesTranslator
    decoder: Callable[[], SSEDecoder] = SSEDecoder
    attempt: MakeAttempt = AttemptStream
    retry_layer: RetryLayer = run_with_retries
    rewrite: Rewrite = unchanged
    next_request: NextRequest = next_request  # a two-turn case's next request
    own_policy: bool = False  # the reference that runs and declares a policy of its own
    misdeclared: Misdeclare | None = None

    def __post_init__(self) -> None:
        unknown = [target for target in self.targets if target not in CATALOGUE]
        if not self.targets or unknown:
            raise ValueError(f"mutant {self.name}: unknown or no target invariants {unknown}")
        swapped = [
            self.translator is not StreamTranslator,
            self.anthropic_translator is not AnthropicTranslator,
            self.responses_translator is not ResponsesTranslator,
            self.decoder is not SSEDecoder,
            self.attempt is not AttemptStream,
            self.retry_layer is not run_with_retries,
            self.rewrite is not unchanged,
            self.next_request is not next_request,
            self.misdeclared is not None,
        ]
        if sum(swapped) != 1:  # one bug each, or a kill could not be attributed to it
            raise ValueError(f"mutant {self.name} must swap exactly one piece of the reference")
        if self.misdeclared is not None and not self.own_policy:
            raise ValueError(f"mutant {self.name}: only a policy of its own can be misdeclared")

    @property
    def contract(self) -> Contract:
        """The contract whose verdicts must catch it: interop holds an adapter to the
        policy it declares."""
        return "interop" if self.own_policy else "harness"

    @property
    def target(self) -> str:
        """How to load it: the value of ``--adapter``."""
        return f"conformance.adapters.mutants:{self.name}"

    def factory(self, options: RunOptions) -> MutantAdapter:
        """The ``--adapter`` factory (``conformance.adapters.mutants:<name>``)."""
        return MutantAdapter(self, options)

    def start_attempt(self, client: httpx.AsyncClient, case: RunCase, body: bytes) -> Attempt:
        return self.attempt(
            client,
            case,
            body,
            decoder=self.decoder,
            translator=self.translator,
            anthropic_translator=self.anthropic_translator,
            responses_translator=self.responses_translator,
        )


class MutantAdapter:
    """The reference adapter built with the mutant's piece; same capabilities, own name."""

    def __init__(self, mutant: Mutant, options: RunOptions) -> None:
        self.mutant = mutant
        self._inner = ReferenceAdapter(
            start_attempt=mutant.start_attempt,
            retry_layer=mutant.retry_layer,
            own_policy=options.policy if mutant.own_policy else None,
            build_next_request=mutant.next_request,
        )
        hello = self._inner.hello
        update: dict[str, Any] = {"name": f"streamconform-mutant-{mutant.name}"}
        if mutant.misdeclared is not None and hello.retry_policy is not None:
            update["retry_policy"] = mutant.misdeclared(hello.retry_policy)
        self.hello = hello.model_copy(update=update)

    async def run(
        self, case: RunCase, http_client: httpx.AsyncClient | None = None
    ) -> AsyncGenerator[Emitted, None]:
        events = self._inner.run(case, http_client)
        async with aclosing(events):
            async for event in events:
                for emitted in self.mutant.rewrite(event):
                    yield emitted
