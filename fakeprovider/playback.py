"""What one request gets back, decided once for both I/O shells (sans-IO).

The loopback server and the in-process transport route the same paths and play the same
:class:`Playback`; only how they wait and how they fail differs. The server's control API
(:func:`answer_control`) is decided here too, so its connection only does I/O.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from . import json_pieces
from .dialects import DEFAULT_DIALECT, DIALECTS, DialectId
from .errors import FakeProviderError
from .registry import HowEnded, ScenarioRegistry, UnknownScenarioError
from .scenario import (
    SCENARIO_ID_PATTERN,
    ErrorAttempt,
    FaultAttempt,
    Scenario,
    StreamAttempt,
)
from .sends import Run, coalesced, scripted
from .surrogates import LONE_SURROGATE, lone_surrogate_at
from .validating import InvalidScenarioError, validate_scenario
from .wire import (
    EncodeError,
    WirePlan,
    encode_head,
    encode_stream,
    error_body,
    error_headers,
    stream_headers,
)

BodyFraming = Literal["chunked", "close", "length"]
"""Chunked transfer coding, the end of the connection, or a content-length."""

SCENARIO_HEADER = "x-scenario-id"
"""A request header that selects the scenario (a gateway may pass it through)."""
DEFAULT_MODEL_PREFIX = "scenario/"
"""A request whose ``model`` is ``scenario/<id>`` plays scenario ``<id>``."""

_ENDPOINTS = "|".join(re.escape(dialect.endpoint) for dialect in DIALECTS.values())
_SCENARIO_PATH = re.compile(rf"/(?P<id>[^/]+)(?:/v1)?/(?P<endpoint>{_ENDPOINTS})")
_SHARED_PATH = re.compile(rf"(?:/v1)?/(?P<endpoint>{_ENDPOINTS})")
_ENDPOINT_DIALECT: dict[str, DialectId] = {d.endpoint: d.id for d in DIALECTS.values()}
_SCENARIO_ID = re.compile(SCENARIO_ID_PATTERN)


class PlaybackError(FakeProviderError, ValueError):
    """The attempt cannot be played as written (a split past the body, a bad header)."""


@dataclass(frozen=True)
class Playback:
    """A response: its head, the body as timed writes, and how the body is delimited."""

    status: int
    headers: tuple[tuple[str, str], ...]
    plan: WirePlan
    framing: BodyFraming

    @functools.cached_property
    def head(self) -> bytes:
        return encode_head(self.status, self.headers)

    def runs(self, *, coalesce: bool = False) -> Iterable[Run]:
        """A stream's head and body as the server writes them (fakeprovider.sends),
        scripted or coalesced; kept once made if the plan keeps its writes."""
        if not self.plan.keeps_writes:
            return self._make_runs(coalesce)
        return self._coalesced_runs if coalesce else self._scripted_runs

    @functools.cached_property
    def _scripted_runs(self) -> tuple[Run, ...]:
        return tuple(self._make_runs(coalesce=False))

    @functools.cached_property
    def _coalesced_runs(self) -> tuple[Run, ...]:
        return tuple(self._make_runs(coalesce=True))

    def _make_runs(self, coalesce: bool) -> Iterator[Run]:
        runs = scripted(self.head, self.plan, self.framing == "chunked")
        return coalesced(runs) if coalesce else runs

    @functools.cached_property
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


def answer_model_request(
    registry: ScenarioRegistry,
    *,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    model_prefix: str = DEFAULT_MODEL_PREFIX,
) -> Answer | None:
    """Log a request to a dialect's endpoint and pick its answer; None for any other path.

    The answers the provider makes itself (no scenario, the wrong endpoint) have the error
    shape of the endpoint asked, so the client's SDK reports them as it would its provider's.
    """
    path = target.partition("?")[0]
    asked = endpoint_dialect(path)
    if asked is None:
        return None
    if method != "POST":
        return Answer(method_not_allowed(method, "POST", asked))
    try:
        scenario_id = select_scenario(path, headers, body, model_prefix)
        spoken = registry.get(scenario_id).dialect
        if spoken != asked:
            return Answer(wrong_endpoint(scenario_id, spoken, asked))
        number, attempt = registry.begin_request(
            scenario_id, method=method, path=target, headers=headers, body=body
        )
    except NoScenarioSelectedError as error:
        return Answer(error_playback(error.status, str(error), dialect=asked))
    except UnknownScenarioError:
        return Answer(unknown_scenario(scenario_id, asked))
    log_end = functools.partial(registry.end_request, scenario_id, number)
    try:
        return Answer(prepare(attempt, dialect=spoken, now=time.time()), log_end)
    except PlaybackError as error:
        message = f"scenario {scenario_id!r} attempt {number} cannot be played: {error}"
        return Answer(error_playback(500, message, dialect=spoken), log_end)


def endpoint_dialect(path: str) -> DialectId | None:
    """The dialect whose endpoint ``path`` (query string removed) is, or None."""
    match = _SHARED_PATH.fullmatch(path)
    if match is None and scenario_id_in_path(path) is not None:
        match = _SCENARIO_PATH.fullmatch(path)
    return None if match is None else _ENDPOINT_DIALECT[match["endpoint"]]


def scenario_id_in_path(path: str) -> str | None:
    """The scenario an endpoint path names, or None (another path, or a shared one).

    Both ``/{id}/v1/<endpoint>`` and ``/{id}/<endpoint>`` are accepted for every dialect's
    endpoint (``chat/completions``, ``messages``), so a client may be given either base
    URL: OpenAI SDKs append to a base with ``/v1``, Anthropic's to one without. The query
    string must already be removed. The shared paths ``/v1/<endpoint>`` and ``/<endpoint>``
    name no scenario: :func:`select_scenario` reads the request there.
    """
    if _SHARED_PATH.fullmatch(path):
        return None
    match = _SCENARIO_PATH.fullmatch(path)
    if match is None or not _SCENARIO_ID.match(match["id"]):
        return None
    return match["id"]


class NoScenarioSelectedError(FakeProviderError, ValueError):
    """A request to a shared path that names no scenario, or names one badly."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.status = status


def select_scenario(
    path: str, headers: list[tuple[str, str]], body: bytes, model_prefix: str
) -> str:
    """The scenario a request to an endpoint plays; raises NoScenarioSelectedError.

    The path prefix wins (``/{id}/v1/chat/completions``). On the shared paths (a scenario
    called ``v1`` is served at ``/v1/v1/chat/completions``) a gateway
    configured with one upstream base URL can still choose: first the ``x-scenario-id``
    header, then a ``model`` of ``{model_prefix}<id>`` in the JSON body.
    """
    scenario_id = scenario_id_in_path(path)
    if scenario_id is not None:
        return scenario_id
    header = next((v for k, v in headers if k.lower() == SCENARIO_HEADER), None)
    if header is not None:
        return _checked_id(header.strip(), f"the {SCENARIO_HEADER} header")
    model = request_model(body)
    if model is not None and model.startswith(model_prefix):
        return _checked_id(model.removeprefix(model_prefix), f"model {model!r}")
    endpoint = _SHARED_PATH.fullmatch(path)
    shown = endpoint["endpoint"] if endpoint is not None else DIALECTS[DEFAULT_DIALECT].endpoint
    raise NoScenarioSelectedError(
        f"no scenario selected: POST /{{scenario-id}}/v1/{shown}, send an "
        f"{SCENARIO_HEADER} header, or set the request's model to '{model_prefix}<id>'"
    )


def _checked_id(scenario_id: str, where: str) -> str:
    if not _SCENARIO_ID.match(scenario_id):
        raise NoScenarioSelectedError(
            f"{where} names no valid scenario id (ids match {SCENARIO_ID_PATTERN})", 400
        )
    return scenario_id


def request_model(body: bytes) -> str | None:
    """The ``model`` of a JSON request body, or None."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    model = request.get("model") if isinstance(request, dict) else None
    return model if isinstance(model, str) else None


def prepare(
    attempt: StreamAttempt | ErrorAttempt | FaultAttempt,
    *,
    dialect: DialectId = DEFAULT_DIALECT,
    now: float | None = None,
) -> Playback | Fault:
    """Turn an attempt of a ``dialect`` scenario into what the shells play; raises
    PlaybackError if it cannot be.

    ``now`` is the send time (epoch seconds), which a Retry-After date is relative to.
    """
    if isinstance(attempt, FaultAttempt):
        return Fault(attempt.fault)
    if isinstance(attempt, ErrorAttempt):
        body = error_body(attempt.error, dialect)
        headers = error_headers(attempt.error, len(body), now=now)
        playback = Playback(attempt.error.status, tuple(headers), _single_write(body), "length")
    else:
        playback = _stream_playback(attempt)
    _check_head(playback)
    return playback


class _PlaybackCache:
    """Stream playbacks by attempt, the least recently played dropped past ``max_bytes``.

    A load test replays one attempt for every request, and encoding a stream costs more
    than sending it (2.7 times, for 200 chunks). Keyed by identity (attempts are frozen
    models, so an entry cannot go stale; most are unhashable, holding lists) while the
    attempt lives: a weak reference tells a reused id apart, and its callback only queues
    the key, since it may run in the middle of another thread's lookup.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[int, tuple[weakref.ref[StreamAttempt], Playback]] = OrderedDict()
        self._bytes = 0
        self._dead: list[int] = []  # keys whose attempt is gone

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def get(self, attempt: StreamAttempt) -> Playback | None:
        key = id(attempt)
        with self._lock:
            self._drop_dead()
            entry = self._entries.get(key)
            if entry is None or entry[0]() is not attempt:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, attempt: StreamAttempt, playback: Playback) -> None:
        key = id(attempt)
        with self._lock:
            self._drop_dead()
            self._discard(key)
            self._entries[key] = (weakref.ref(attempt, self._queue_dead(key)), playback)
            self._bytes += _held_bytes(playback)
            while self._bytes > self.max_bytes and len(self._entries) > 1:
                self._discard(next(iter(self._entries)))

    def _queue_dead(self, key: int) -> Callable[[object], None]:
        return lambda _: self._dead.append(key)

    def _drop_dead(self) -> None:
        while self._dead:
            key = self._dead.pop()
            entry = self._entries.get(key)
            if entry is not None and entry[0]() is None:
                self._discard(key)

    def _discard(self, key: int) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= _held_bytes(entry[1])


def _held_bytes(playback: Playback) -> int:
    # The body, and up to three times as much again if the plan keeps its writes: the
    # writes, and their runs scripted and coalesced.
    return len(playback.plan.body) * (4 if playback.plan.keeps_writes else 1)


MAX_CACHED_PLAYBACK_BYTES = 64 * 1024 * 1024
"""Bytes of encoded stream bodies kept for replay; past it the least recently played go."""
_STREAM_PLAYBACKS = _PlaybackCache(MAX_CACHED_PLAYBACK_BYTES)


def _stream_playback(attempt: StreamAttempt) -> Playback:
    cached = _STREAM_PLAYBACKS.get(attempt)
    if cached is not None:
        return cached
    response = attempt.stream
    try:
        plan = encode_stream(response)
    except EncodeError as error:
        raise PlaybackError(str(error)) from None
    if response.framing.transfer == "close":
        plan = _ended_by_closing(plan)
    headers = stream_headers(response)
    playback = Playback(response.status, tuple(headers), plan, response.framing.transfer)
    _STREAM_PLAYBACKS.put(attempt, playback)
    return playback


def _ended_by_closing(plan: WirePlan) -> WirePlan:
    # Without chunked coding, closing the connection is how the body ends.
    return dataclasses.replace(plan, ending="close") if plan.ending == "disconnect" else plan


def for_http_1_0(answer: Answer) -> Answer:
    """``answer`` as an HTTP/1.0 client may be sent it: RFC 9112 §6.1 forbids chunked
    coding in a response to one, so a chunked stream is delimited by the close instead
    (``connection: close``, no length: the body is the stream, sent as it is made)."""
    playback = answer.response
    if not isinstance(playback, Playback) or playback.framing != "chunked":
        return answer
    kept = [
        (name, value)
        for name, value in playback.headers
        if name.lower() not in ("transfer-encoding", "connection")
    ]
    headers = (*kept, ("connection", "close"))
    closed = Playback(playback.status, headers, _ended_by_closing(playback.plan), "close")
    return dataclasses.replace(answer, response=closed)


def check_playable(scenario: Scenario) -> None:
    """Raise PlaybackError naming the first attempt that cannot be played."""
    for index, attempt in enumerate(scenario.attempts):
        try:
            prepare(attempt, dialect=scenario.dialect)
        except PlaybackError as error:
            raise PlaybackError(f"attempts[{index}]: {error}") from None


def stream_plan(attempt: StreamAttempt) -> WirePlan:
    """The plan the shells play for a stream attempt, from the playback cache: the oracle
    reads it rather than encoding the stream a second time. Raises PlaybackError if the
    stream cannot be encoded."""
    return _stream_playback(attempt).plan


# --- the control API (the loopback server's; the in-process transport has none) ---------

_CONTROL_PREFIX = "/_scenarios"
BaseUrl = Callable[[str], str]  # the OpenAI base URL that plays a scenario id


def answer_control(
    registry: ScenarioRegistry, *, method: str, path: str, body: bytes, base_url: BaseUrl
) -> Playback:
    """The answer to a request that is not a chat completion: ``/_health``, the scenarios
    under ``/_scenarios`` (list, PUT, GET, request log), or no route.

    ``path`` has its query string removed.
    """
    if path == "/_health":
        if method != "GET":
            return method_not_allowed(method, "GET")
        return json_playback(200, {"status": "ok"})
    if path != _CONTROL_PREFIX and not path.startswith(_CONTROL_PREFIX + "/"):
        return no_route(path)
    parts = path.removeprefix(_CONTROL_PREFIX).strip("/").split("/")
    match parts, method:
        case [""], "GET":
            listed: list[JsonValue] = [_summary(id_, base_url) for id_ in registry.ids()]
            return json_playback(200, {"scenarios": listed})
        case [""], _:
            return method_not_allowed(method, "GET")
        case [scenario_id], "PUT":
            return _put_scenario(registry, scenario_id, body, base_url)
        case [scenario_id], "GET":
            return _with_scenario(registry, scenario_id, _scenario_json)
        case [_], _:
            return method_not_allowed(method, "GET, PUT")
        case [scenario_id, "requests"], "GET":
            return _with_scenario(registry, scenario_id, _request_log)
        case [scenario_id, "requests"], "DELETE":
            return _with_scenario(registry, scenario_id, _clear_request_log)
        case [_, "requests"], _:
            return method_not_allowed(method, "GET, DELETE")
    return no_route(path)


def _summary(scenario_id: str, base_url: BaseUrl) -> JsonValue:
    return {"id": scenario_id, "base_url": base_url(scenario_id)}


def _with_scenario(
    registry: ScenarioRegistry,
    scenario_id: str,
    answer: Callable[[ScenarioRegistry, str], Playback],
) -> Playback:
    try:
        return answer(registry, scenario_id)
    except UnknownScenarioError:
        return unknown_scenario(scenario_id)


def _scenario_json(registry: ScenarioRegistry, scenario_id: str) -> Playback:
    return json_playback(200, registry.get(scenario_id).model_dump(mode="json"))


def _request_log(registry: ScenarioRegistry, scenario_id: str) -> Playback:
    # Each record written by a call of its own: one json.dumps of the whole log (up to
    # MAX_LOGGED_BYTES of bodies, twice) keeps the GIL from the loop's streams for 0.2 s.
    log = registry.request_log(scenario_id)
    parts = [b'{"requests": [']
    for number, record in enumerate(log.records):
        parts += [b", "] if number else []
        parts.append(json.dumps(record.model_dump(mode="json")).encode())
    parts.append(b'], "dropped": ' + str(log.dropped).encode() + b"}")
    return json_body_playback(200, b"".join(parts))


def _clear_request_log(registry: ScenarioRegistry, scenario_id: str) -> Playback:
    registry.clear_requests(scenario_id)
    return json_playback(204, None)


def _put_scenario(
    registry: ScenarioRegistry, scenario_id: str, body: bytes, base_url: BaseUrl
) -> Playback:
    scenario = _parse_scenario(scenario_id, body)
    if isinstance(scenario, Playback):
        return scenario
    is_new = scenario_id not in registry.ids()
    registry.register(scenario)
    return json_playback(201 if is_new else 200, _summary(scenario_id, base_url))


def _parse_scenario(scenario_id: str, body: bytes) -> Scenario | Playback:
    """The scenario a PUT body describes, or the error that says why it is not one."""
    try:
        data = json_pieces.loads(body)  # in pieces: this runs beside the event loop
    except (ValueError, RecursionError) as error:  # ValueError: also an int of 5 000 digits
        reason = str(error).partition("; use sys.")[0]  # Python's advice to raise the limit
        return error_playback(400, f"the body is not JSON: {reason}")
    if not isinstance(data, dict):
        return error_playback(422, "the body must be a JSON object (a scenario)")
    if (surrogate := lone_surrogate_at(data, body)) is not None:
        where = _shortened(".".join(str(part) for part in surrogate))
        return error_playback(422, f"{where}: {LONE_SURROGATE}")
    if data.setdefault("id", scenario_id) != scenario_id:
        message = f"the body's id {_shown(data['id'])} differs from the URL's {scenario_id!r}"
        return error_playback(422, message)
    try:
        scenario = validate_scenario(data)
        check_playable(scenario)
    except InvalidScenarioError as error:
        return error_playback(422, _describe_invalid(error))
    except PlaybackError as error:
        return error_playback(422, f"the scenario cannot be played: {error}")
    return scenario


MAX_LISTED_PROBLEMS = 20
"""Problems an invalid scenario's error message lists; the rest are counted."""
_MAX_SHOWN_CHARS = 200  # of a value or field path quoted in an error message


def _describe_invalid(error: InvalidScenarioError) -> str:
    listed = [
        _shortened(".".join(str(part) for part in problem["loc"]) or "(scenario)")
        + f": {problem['msg']}"
        for problem in error.problems[:MAX_LISTED_PROBLEMS]
    ]
    if error.count > MAX_LISTED_PROBLEMS:
        listed.append(f"and {error.count - MAX_LISTED_PROBLEMS} more")
    return f"invalid scenario ({error.count} problem(s)): " + "; ".join(listed)


def _shortened(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN_CHARS else text[:_MAX_SHOWN_CHARS] + "..."


def _shown(value: object) -> str:
    """``value`` quoted for an error message, cut short: a client's data is echoed bounded."""
    return _shortened(repr(value))


# --- responses the shells and the control API build ----------------------------------------


def json_playback(
    status: int, value: JsonValue, extra_headers: tuple[tuple[str, str], ...] = ()
) -> Playback:
    """A complete JSON response, for the control API and the shells' own errors."""
    body = b"" if status == 204 else json.dumps(value).encode()
    return json_body_playback(status, body, extra_headers)


def json_body_playback(
    status: int, body: bytes, extra_headers: tuple[tuple[str, str], ...] = ()
) -> Playback:
    """A complete response of JSON already encoded."""
    headers = (("content-type", "application/json"), ("content-length", str(len(body))))
    return Playback(status, headers + extra_headers, _single_write(body), "length")


def error_playback(
    status: int,
    message: str,
    extra_headers: tuple[tuple[str, str], ...] = (),
    *,
    dialect: DialectId = DEFAULT_DIALECT,
) -> Playback:
    """An error in the dialect's shape, so clients report it like a provider's own."""
    return json_playback(status, DIALECTS[dialect].error_object(status, message), extra_headers)


def unknown_scenario(scenario_id: str, dialect: DialectId = DEFAULT_DIALECT) -> Playback:
    return error_playback(
        404,
        f"no scenario {scenario_id!r}; PUT /_scenarios/{scenario_id} to create it",
        dialect=dialect,
    )


def wrong_endpoint(scenario_id: str, spoken: DialectId, asked: DialectId) -> Playback:
    """The answer to a request at another dialect's endpoint than the scenario's."""
    endpoint = DIALECTS[spoken].endpoint
    return error_playback(
        404,
        f"scenario {scenario_id!r} speaks {spoken}, not {asked}: "
        f"POST /{scenario_id}/v1/{endpoint} (or /{scenario_id}/{endpoint})",
        dialect=asked,
    )


def no_route(path: str) -> Playback:
    endpoints = " or ".join(dialect.endpoint for dialect in DIALECTS.values())
    return error_playback(
        404,
        f"no route for {_shortened(path)!r}; "
        f"scenarios answer at /{{scenario-id}}/v1/{{{endpoints}}} "
        f"(ids match {SCENARIO_ID_PATTERN}) and at /v1/<endpoint> with an "
        f"{SCENARIO_HEADER} header or a model of '{DEFAULT_MODEL_PREFIX}<id>'",
    )


def misdirected(host: str | None) -> Playback:
    """The control API's answer to a ``Host`` that is not this server's (fakeprovider.hosts)."""
    return error_playback(
        421,
        f"the control API does not answer to Host {_shown(host)}: only to localhost, an IP "
        "address or the name the server is bound to (a defence against DNS rebinding; "
        "fakeprovider serve --allow-host NAME adds one)",
    )


def method_not_allowed(method: str, allowed: str, dialect: DialectId = DEFAULT_DIALECT) -> Playback:
    return error_playback(
        405,
        f"{method} is not allowed here; use {allowed}",
        (("allow", allowed),),
        dialect=dialect,
    )


def _single_write(body: bytes) -> WirePlan:
    return WirePlan(body)


def _check_head(playback: Playback) -> None:
    # Header values are validated for line breaks only; HTTP heads are latin-1.
    try:
        playback.head  # noqa: B018 - encoding is the check
    except UnicodeEncodeError as error:
        raise PlaybackError(f"a response header cannot be sent in an HTTP head: {error}") from None
