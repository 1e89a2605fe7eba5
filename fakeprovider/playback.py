"""What one request gets back, decided once for both I/O shells (sans-IO).

The loopback server and the in-process transport route the same paths and play the same
:class:`Playback`; only how they wait and how they fail differs.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from .registry import HowEnded, ScenarioRegistry, UnknownScenario
from .scenario import (
    SCENARIO_ID_PATTERN,
    ErrorAttempt,
    FaultAttempt,
    Scenario,
    StreamAttempt,
)
from .wire import (
    EncodeError,
    WirePlan,
    Write,
    default_error_object,
    encode_head,
    encode_stream,
    error_body,
    error_headers,
    stream_headers,
)

BodyFraming = Literal["chunked", "close", "length"]
"""Chunked transfer coding, the end of the connection, or a content-length."""

_COMPLETIONS_PATH = re.compile(r"/(?P<id>[^/]+)(?:/v1)?/chat/completions")
_SCENARIO_ID = re.compile(SCENARIO_ID_PATTERN)


class PlaybackError(ValueError):
    """The attempt cannot be played as written (a split past the body, a bad header)."""


@dataclass(frozen=True)
class Playback:
    """A response: its head, the body as timed writes, and how the body is delimited."""

    status: int
    headers: tuple[tuple[str, str], ...]
    plan: WirePlan
    framing: BodyFraming

    @property
    def head(self) -> bytes:
        return encode_head(self.status, self.headers)

    @property
    def closes_connection(self) -> bool:
        """Whether the connection cannot carry another request after this response."""
        if self.framing == "close" or self.plan.ending != "close":
            return True
        return any(
            name.lower() == "connection" and "close" in value.lower()
            for name, value in self.headers
        )


@dataclass(frozen=True)
class Fault:
    """The connection fails before any response byte."""

    kind: Literal["reset", "close", "stall"]


def _not_logged(how: HowEnded) -> None:
    pass


@dataclass(frozen=True)
class Answer:
    """What to play for a request, and how to log the way it ended."""

    response: Playback | Fault
    log_end: Callable[[HowEnded], None] = _not_logged


def answer_completions(
    registry: ScenarioRegistry,
    *,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
) -> Answer | None:
    """Log a chat-completions request and pick its answer; None for any other path."""
    scenario_id = completions_scenario_id(target.partition("?")[0])
    if scenario_id is None:
        return None
    if method != "POST":
        return Answer(method_not_allowed(method, "POST"))
    try:
        number, attempt = registry.begin_request(
            scenario_id, method=method, path=target, headers=headers, body=body
        )
    except UnknownScenario:
        return Answer(unknown_scenario(scenario_id))
    log_end = functools.partial(registry.end_request, scenario_id, number)
    try:
        return Answer(prepare(attempt), log_end)
    except PlaybackError as error:
        message = f"scenario {scenario_id!r} attempt {number} cannot be played: {error}"
        return Answer(error_playback(500, message), log_end)


def completions_scenario_id(path: str) -> str | None:
    """The scenario a chat-completions path addresses, or None for any other path.

    Both ``/{id}/v1/chat/completions`` and ``/{id}/chat/completions`` are accepted, so a
    client may be given either base URL. The query string must already be removed.
    """
    match = _COMPLETIONS_PATH.fullmatch(path)
    if match is None or not _SCENARIO_ID.match(match["id"]):
        return None
    return match["id"]


def prepare(attempt: StreamAttempt | ErrorAttempt | FaultAttempt) -> Playback | Fault:
    """Turn an attempt into what the shells play; raises PlaybackError if it cannot be."""
    if isinstance(attempt, FaultAttempt):
        return Fault(attempt.fault)
    if isinstance(attempt, ErrorAttempt):
        body = error_body(attempt.error)
        headers = error_headers(attempt.error, len(body))
        playback = Playback(attempt.error.status, tuple(headers), _single_write(body), "length")
    else:
        response = attempt.stream
        try:
            plan = encode_stream(response)
        except EncodeError as error:
            raise PlaybackError(str(error)) from None
        if plan.ending == "disconnect" and response.framing.transfer == "close":
            # Without chunked coding, closing the connection is how the body ends.
            plan = dataclasses.replace(plan, ending="close")
        headers = stream_headers(response)
        playback = Playback(response.status, tuple(headers), plan, response.framing.transfer)
    _check_head(playback)
    return playback


def check_playable(scenario: Scenario) -> None:
    """Raise PlaybackError naming the first attempt that cannot be played."""
    for index, attempt in enumerate(scenario.attempts):
        try:
            prepare(attempt)
        except PlaybackError as error:
            raise PlaybackError(f"attempts[{index}]: {error}") from None


def json_playback(
    status: int, value: JsonValue, extra_headers: tuple[tuple[str, str], ...] = ()
) -> Playback:
    """A complete JSON response, for the control API and the shells' own errors."""
    body = b"" if status == 204 else json.dumps(value).encode()
    headers = (("content-type", "application/json"), ("content-length", str(len(body))))
    return Playback(status, headers + extra_headers, _single_write(body), "length")


def error_playback(
    status: int, message: str, extra_headers: tuple[tuple[str, str], ...] = ()
) -> Playback:
    """An error in the OpenAI shape, so clients report it like a provider's own."""
    return json_playback(status, default_error_object(status, message), extra_headers)


def unknown_scenario(scenario_id: str) -> Playback:
    return error_playback(
        404, f"no scenario {scenario_id!r}; PUT /_scenarios/{scenario_id} to create it"
    )


def no_route(path: str) -> Playback:
    shown = path if len(path) <= 200 else path[:200] + "..."
    return error_playback(
        404,
        f"no route for {shown!r}; scenarios answer at /{{scenario-id}}/v1/chat/completions "
        f"(ids match {SCENARIO_ID_PATTERN})",
    )


def method_not_allowed(method: str, allowed: str) -> Playback:
    return error_playback(
        405, f"{method} is not allowed here; use {allowed}", (("allow", allowed),)
    )


def _single_write(body: bytes) -> WirePlan:
    return WirePlan((Write(body),) if body else ())


def _check_head(playback: Playback) -> None:
    # Header values are validated for line breaks only; HTTP heads are latin-1.
    try:
        playback.head  # noqa: B018 - encoding is the check
    except UnicodeEncodeError as error:
        raise PlaybackError(f"a response header cannot be sent in an HTTP head: {error}") from None
