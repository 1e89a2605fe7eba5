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
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from .errors import FakeProviderError
from .follow_up import answer_attempt, is_follow_up
from .scenario import ErrorAttempt, FaultAttempt, Scenario, StreamAttempt

HowEnded = Literal[
    "pending",  # the response is still being written
    "complete",  # the scripted response was sent in full
    "reset",  # the script aborted the connection
    "closed",  # the script closed the connection before the response was complete
    "stalled",  # the script stalled; the client gave up or the server shut down
    "client-disconnected",  # the client went away mid-response (a write failed, or it reset)
]

_SETTLED_POLL_S = 0.02  # how often settled() looks at the log again
_RECORDS_PER_HOLD = 32  # records built per hold of the lock (a record is a body's copies)


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
    # The next request of a two-turn case (it carries the first turn back), answered with
    # the scenario's follow-up answer; not an attempt of the first turn.
    follow_up: bool = False


MAX_LOGGED_REQUESTS = 10_000
"""The request log keeps the records of the latest this many requests, of all scenarios
(or of each scenario, in a registry made with ``bound_each_scenario``)."""
MAX_LOGGED_BYTES = 16 * 1024 * 1024
"""...and at most this many bytes of them (path, header names and values, body, as
received); the oldest records are dropped first, but never the latest one."""


class RequestLog(NamedTuple):
    """A scenario's request log as it stands."""

    records: list[RequestRecord]
    dropped: int
    """Records of the scenario dropped to keep the log in its bounds since it was cleared."""


@dataclass(eq=False, slots=True)
class _Logged:
    """A record in the log, as the registry tracks it across scenarios: the request as
    received, its :class:`RequestRecord` built only when the log is read (a load test
    logs thousands of requests a second and reads the log once)."""

    scenario: str
    attempt: int
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes
    received_at: float
    size: int
    state: _ScenarioState
    follow_up: bool = False
    live: bool = True  # False once dropped, cleared or its scenario replaced
    ended: HowEnded = "pending"
    ended_at: float | None = None
    built: RequestRecord | None = None  # the record as last read, until it changes

    @property
    def record(self) -> RequestRecord:
        if self.built is None:
            self.built = RequestRecord(
                scenario=self.scenario,
                attempt=self.attempt,
                method=self.method,
                path=self.path,
                headers=self.headers,
                body=self.body.decode("utf-8", errors="replace"),
                body_base64=base64.b64encode(self.body).decode("ascii"),
                received_at=self.received_at,
                ended_at=self.ended_at,
                ended=self.ended,
                follow_up=self.follow_up,
            )
        return self.built


@dataclass(eq=False)
class _ScenarioState:
    scenario: Scenario
    log: deque[_Logged] = field(default_factory=deque)
    attempts: int = 0  # requests since the log was cleared: the next one is attempt + 1
    dropped: int = 0
    logged_bytes: int = 0  # of the records in log


class UnknownScenarioError(FakeProviderError, KeyError):
    """No scenario has that id."""


UnknownScenario = UnknownScenarioError  # the 0.1.0 name, for callers' sake; goes after 0.2


class ScenarioRegistry:
    """Thread-safe: the in-process transport may be driven from several threads.

    The log's bounds hold for all scenarios together (a server's, whatever clients
    register), or with ``bound_each_scenario`` for each scenario's log on its own: a run's
    cases in flight at once then never drop each other's records, however large or many
    their requests (the run forgets a case's log once it has read it).
    """

    def __init__(
        self, scenarios: Iterable[Scenario] = (), *, bound_each_scenario: bool = False
    ) -> None:
        self._bound_each_scenario = bound_each_scenario
        self._lock = threading.Lock()
        self._states: dict[str, _ScenarioState] = {}
        # Every scenario's records in arrival order, the oldest first. Records cleared
        # meanwhile stay until they reach the front, or until they outnumber the rest.
        self._arrivals: deque[_Logged] = deque()
        self._cleared = 0  # entries of _arrivals no longer live
        self._logged_bytes = 0  # of the live records
        for scenario in scenarios:
            self.register(scenario)

    def register(self, scenario: Scenario) -> None:
        """Add or replace a scenario; replacing one also clears its request log."""
        with self._lock:
            replaced = self._states.get(scenario.id)
            if replaced is not None:
                self._forget_log(replaced)
            self._states[scenario.id] = _ScenarioState(scenario)

    def remove(self, scenario_id: str) -> None:
        """Forget a scenario and its request log (a generated case, once judged)."""
        with self._lock:
            removed = self._states.pop(scenario_id, None)
            if removed is not None:
                self._forget_log(removed)

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
        """Log a request and return its number and the attempt that answers it: the
        scenario's attempt of that number, or for the next request of a two-turn case its
        follow-up answer. Numbers count every request, so each record keeps its place."""
        size = len(path) + sum(len(name) + len(value) for name, value in headers) + len(body)
        scenario = self.get(scenario_id)
        # Read outside the lock: only a two-turn case's requests are parsed at all.
        follow_up = scenario.follow_up is not None and is_follow_up(scenario.dialect, body)
        with self._lock:
            state = self._state(scenario_id)
            state.attempts += 1
            scenario = state.scenario
            logged = _Logged(
                scenario_id,
                state.attempts,
                method,
                path,
                headers,
                body,
                time.time(),
                size,
                state,
                follow_up,
            )
            state.log.append(logged)
            state.logged_bytes += size
            if self._bound_each_scenario:
                self._drop_oldest_of(state)
            else:
                self._arrivals.append(logged)
                self._logged_bytes += size
                self._drop_oldest()
            if follow_up and scenario.follow_up is not None:
                return state.attempts, answer_attempt(scenario.dialect, scenario.follow_up.answer)
            return state.attempts, scenario.attempt(state.attempts)

    def end_request(self, scenario_id: str, attempt: int, how: HowEnded) -> None:
        with self._lock:
            state = self._states.get(scenario_id)
            if state is None or not state.log:
                return
            position = attempt - state.log[0].attempt
            if not 0 <= position < len(state.log):
                return  # dropped, or the log was cleared while the response was written
            logged = state.log[position]
            if logged.ended == "pending":
                logged.ended, logged.ended_at, logged.built = how, time.time(), None

    def requests(self, scenario_id: str) -> list[RequestRecord]:
        return self.request_log(scenario_id).records

    def request_log(self, scenario_id: str) -> RequestLog:
        """The records kept and how many were dropped (MAX_LOGGED_REQUESTS, MAX_LOGGED_BYTES)."""
        with self._lock:
            state = self._state(scenario_id)
            logged, dropped = list(state.log), state.dropped
        records: list[RequestRecord] = []
        for start in range(0, len(logged), _RECORDS_PER_HOLD):
            # A slice at a time: the event loop logs requests meanwhile (begin_request).
            with self._lock:
                records += [each.record for each in logged[start : start + _RECORDS_PER_HOLD]]
        return RequestLog(records, dropped)

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
            state = self._state(scenario_id)
            self._forget_log(state)
            state.attempts = state.dropped = 0

    def _state(self, scenario_id: str) -> _ScenarioState:
        try:
            return self._states[scenario_id]
        except KeyError:
            raise UnknownScenarioError(scenario_id) from None

    def _forget_log(self, state: _ScenarioState) -> None:
        for logged in state.log:
            logged.live = False
        if not self._bound_each_scenario:  # else none of them is in _arrivals
            self._logged_bytes -= state.logged_bytes
            self._cleared += len(state.log)
        state.log.clear()
        state.logged_bytes = 0
        if self._cleared > len(self._arrivals) // 2:  # amortized: as many were cleared
            self._arrivals = deque(logged for logged in self._arrivals if logged.live)
            self._cleared = 0

    def _drop_oldest(self) -> None:
        """Drop the oldest records past either bound, but never the latest one."""
        while len(self._arrivals) > MAX_LOGGED_REQUESTS or (
            self._logged_bytes > MAX_LOGGED_BYTES and len(self._arrivals) > 1
        ):
            oldest = self._arrivals.popleft()
            if not oldest.live:
                self._cleared -= 1
                continue
            self._logged_bytes -= oldest.size
            _drop_first(oldest.state)  # the oldest of its scenario's log too

    def _drop_oldest_of(self, state: _ScenarioState) -> None:
        """Drop the scenario's oldest records past either bound, but never its latest one."""
        while len(state.log) > MAX_LOGGED_REQUESTS or (
            state.logged_bytes > MAX_LOGGED_BYTES and len(state.log) > 1
        ):
            _drop_first(state)


def _drop_first(state: _ScenarioState) -> None:
    """Drop the oldest record of a scenario's log, counting it as dropped."""
    oldest = state.log.popleft()
    oldest.live = False
    state.logged_bytes -= oldest.size
    state.dropped += 1
