"""Scenario registry and request log, shared by the loopback server and the transport.

This is the provider's state: which scenarios exist, how many requests each has had, and
what those requests were. It holds no sockets; the I/O shells call it, and a run awaits
``settled`` for the log a case left.
"""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .errors import FakeProviderError
from .scenario import ErrorAttempt, FaultAttempt, Scenario, StreamAttempt

HowEnded = Literal[
    "pending",  # the response is still being written
    "complete",  # the scripted response was sent in full
    "reset",  # the script aborted the connection
    "closed",  # the script closed the connection before the response was complete
    "stalled",  # the script stalled; the client gave up or the server shut down
    "client-disconnected",  # the client went away mid-response
]

_SETTLED_POLL_S = 0.02  # how often settled() looks at the log again


class RequestRecord(BaseModel):
    """One request as the provider saw it: the ground truth for attempt counting."""

    model_config = ConfigDict(frozen=True)

    scenario: str
    attempt: int
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: str
    body_base64: str
    received_at: float
    ended_at: float | None = None
    ended: HowEnded = "pending"


@dataclass
class _ScenarioState:
    scenario: Scenario
    requests: list[RequestRecord] = field(default_factory=list)


class UnknownScenarioError(FakeProviderError, KeyError):
    """No scenario has that id."""


UnknownScenario = UnknownScenarioError  # the 0.1.0 name, for callers' sake; goes after 0.2


class ScenarioRegistry:
    """Thread-safe: the in-process transport may be driven from several threads."""

    def __init__(self, scenarios: Iterable[Scenario] = ()) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, _ScenarioState] = {}
        for scenario in scenarios:
            self.register(scenario)

    def register(self, scenario: Scenario) -> None:
        """Add or replace a scenario; replacing one also clears its request log."""
        with self._lock:
            self._states[scenario.id] = _ScenarioState(scenario)

    def remove(self, scenario_id: str) -> None:
        """Forget a scenario and its request log (a generated case, once judged)."""
        with self._lock:
            self._states.pop(scenario_id, None)

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._states)

    def get(self, scenario_id: str) -> Scenario:
        with self._lock:
            return self._state(scenario_id).scenario

    def begin_request(
        self,
        scenario_id: str,
        *,
        method: str,
        path: str,
        headers: list[tuple[str, str]],
        body: bytes,
    ) -> tuple[int, StreamAttempt | ErrorAttempt | FaultAttempt]:
        """Log a request and return its attempt number and the attempt that answers it."""
        with self._lock:
            state = self._state(scenario_id)
            number = len(state.requests) + 1
            state.requests.append(
                RequestRecord(
                    scenario=scenario_id,
                    attempt=number,
                    method=method,
                    path=path,
                    headers=headers,
                    body=body.decode("utf-8", errors="replace"),
                    body_base64=base64.b64encode(body).decode("ascii"),
                    received_at=time.time(),
                )
            )
            return number, state.scenario.attempt(number)

    def end_request(self, scenario_id: str, attempt: int, how: HowEnded) -> None:
        with self._lock:
            state = self._states.get(scenario_id)
            if state is None or attempt > len(state.requests):
                return  # the log was cleared while the response was being written
            record = state.requests[attempt - 1]
            if record.ended == "pending":
                state.requests[attempt - 1] = record.model_copy(
                    update={"ended": how, "ended_at": time.time()}
                )

    def requests(self, scenario_id: str) -> list[RequestRecord]:
        with self._lock:
            return list(self._state(scenario_id).requests)

    async def settled(self, scenario_id: str, *, within_s: float = 1.0) -> list[RequestRecord]:
        """The request log once every connection has recorded how it ended (or within_s passed).

        A shell records the end when it notices it, which can be a moment after the client
        is done: a hang-up reaches the server only on its next write.
        """
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            requests = self.requests(scenario_id)
            if all(request.ended != "pending" for request in requests):
                return requests
            await asyncio.sleep(_SETTLED_POLL_S)
        return self.requests(scenario_id)

    def clear_requests(self, scenario_id: str) -> None:
        """Forget the request log, so the next request is attempt 1 again."""
        with self._lock:
            self._state(scenario_id).requests.clear()

    def _state(self, scenario_id: str) -> _ScenarioState:
        try:
            return self._states[scenario_id]
        except KeyError:
            raise UnknownScenarioError(scenario_id) from None
