"""Running generated cases one at a time, as a Hypothesis test asks for them.

A property runs thousands of cases, one per example, from synchronous code. Starting an
adapter and a provider per case would cost more than the case, so :class:`CaseRunner`
keeps one event loop, one adapter session and one fake provider for the whole run; each
case runs through :func:`conformance.run.runner.observe_case` and is judged as the suite
judges it.

The provider is in process when the adapter is a Python one whose ``run`` takes an
``http_client`` (no sockets: the fast path), and a loopback server otherwise. ``run_all``
runs several cases at once, as the suite does (``conformance replay --jobs``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import replace
from types import TracebackType
from typing import TypeVar

from fakeprovider.interrupts import Interruption
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import Scenario

from ..adapters.base import AdapterSession, PythonAdapterSession
from ..adapters.loading import adapter_invocation, open_session
from ..options import RunOptions, Transport
from ..results import CaseResult
from .provider import SessionProvider, session_provider
from .runner import Observed, case_request, dispatch_order, effective_policy, observe_case
from .schedule import CaseSchedule, run_scheduled

_T = TypeVar("_T")

# Generated cases have no pauses: a short idle timeout keeps stalls cheap, and a case
# deadline above the idle timeout plus H4's grace still catches an adapter without one.
GENERATED_OPTIONS = RunOptions(idle_timeout_s=0.5, timeout_s=3.5)


def in_process_capable(session: AdapterSession) -> bool:
    """True for a Python adapter that takes the in-process provider's ``http_client``."""
    return isinstance(session, PythonAdapterSession) and session.accepts_http_client


class CaseRunner:
    """One adapter session and one fake provider, kept open across many cases::

        with CaseRunner("conformance.adapters.reference:factory") as runner:
            result = runner.run(scenario)  # a judged CaseResult

    ``transport`` None picks in process when the adapter can take it, loopback otherwise.
    With an ``interruption``, a stopping signal raises
    KeyboardInterrupt from :meth:`observe` (the case in flight
    cancelled), in whatever thread the runner runs.
    """

    def __init__(
        self,
        target: str | None = None,
        command: str | None = None,
        options: RunOptions = GENERATED_OPTIONS,
        *,
        transport: Transport | None = None,
        interruption: Interruption | None = None,
    ) -> None:
        self.invocation = adapter_invocation(target, command)
        self._target, self._command = target, command
        self._options = options
        self._wanted = transport
        self._interruption = interruption
        self._loop = asyncio.Runner()
        self._stack = AsyncExitStack()
        self._registry = ScenarioRegistry(bound_each_scenario=True)
        self._session: AdapterSession | None = None
        self._providers: SessionProvider | None = None
        self.transport: Transport = "loopback"

    @property
    def session(self) -> AdapterSession:
        return _opened(self._session)

    @property
    def options(self) -> RunOptions:
        """The run's options, with the transport actually used."""
        return replace(self._options, transport=self.transport)

    def __enter__(self) -> CaseRunner:
        try:
            self._loop.run(self._open())
        except BaseException:
            self.__exit__(None, None, None)  # whatever was opened is closed again
            raise
        return self

    async def _open(self) -> None:
        session = await open_session(self._target, self._command, self._options)
        self._session = session
        self._stack.push_async_callback(session.close)
        capable = in_process_capable(session)
        if self._wanted == "in-process" and not capable:
            raise ValueError(f"{self.invocation} cannot take an in-process http_client")
        self.transport = self._wanted or ("in-process" if capable else "loopback")
        providers = session_provider(session, self._registry, self.transport)
        self._providers = await self._stack.enter_async_context(providers)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self._loop.run(self._stack.aclose())
        finally:
            self._loop.close()

    def run(self, scenario: Scenario) -> CaseResult:
        """Run and judge one case; the provider forgets the scenario afterwards."""
        options = self._options
        return self.observe(scenario).judged(
            options.contract, strict=options.strict, spec=options.spec
        )

    def observe(self, scenario: Scenario) -> Observed:
        """Run one case, not yet judged (its verdicts alone cost less than its result)."""
        if self._interruption is not None:
            self._interruption.raise_if_signalled()
        self._registry.register(scenario)
        try:
            observed: list[Observed] = []
            # The main task returns nothing: asyncio.Runner.run formats it, result and all,
            # when it puts back the SIGINT handler (Python 3.11), ~0.6 ms for a case's result.
            observing = self._observe(scenario, observed.append)
            if self._interruption is not None:
                observing = self._interruption.unless_signalled(observing)
            self._loop.run(observing)
            return observed[0]
        finally:
            self._registry.remove(scenario.id)

    def run_all(self, scenarios: Sequence[Scenario], jobs: int = 1) -> list[CaseResult]:
        """Run and judge ``scenarios``, ``jobs`` at a time (the longest first); the results
        in scenario order, as :meth:`run` one by one would give them."""
        for scenario in scenarios:
            self._registry.register(scenario)
        try:
            return self._loop.run(self._run_all(scenarios, jobs))
        finally:
            for scenario in scenarios:
                self._registry.remove(scenario.id)

    async def _run_all(self, scenarios: Sequence[Scenario], jobs: int) -> list[CaseResult]:
        policies = [effective_policy(self.session, self._options, s) for s in scenarios]
        order = dispatch_order(scenarios, policies, self.session, self._options, jobs)
        results: dict[int, CaseResult] = {}
        contract, strict, spec = self._options.contract, self._options.strict, self._options.spec

        async def run_case(position: int) -> int:
            def keep(observed: Observed) -> None:
                results[position] = observed.judged(contract, strict=strict, spec=spec)

            await self._observe(scenarios[position], keep)
            return 0  # what a case keeps is bounded per case; nothing more to count here

        await run_scheduled(CaseSchedule(order), jobs, run_case)
        return [results[position] for position in range(len(scenarios))]

    async def _observe(self, scenario: Scenario, keep: Callable[[Observed], None]) -> None:
        provider = await _opened(self._providers).current()
        policy = effective_policy(self.session, self._options, scenario)
        case = case_request(scenario, provider.root_url, policy, self._options)
        keep(await observe_case(self.session, provider, scenario, case))


def _opened(part: _T | None) -> _T:
    if part is None:
        raise RuntimeError("the runner is not open (use it as a context manager)")
    return part
