"""The oracle and the reference adapter read the same inputs the same way.

Two independent readings of INVARIANTS.md (h11's ``test_against_stdlib_http``, applied to
ourselves): neither imports the other, and this file only feeds both the same inputs —
status lines and error wording (H1), Retry-After values (H2), retry decisions and waits
(R1-R3, R5, R6), SSE bodies cut into reads (S1-S3), tool-call entries to group into calls
(T1-T4, T7), and generated Anthropic Messages attempts into their blocks and finish (the AN
rules and the dialect-blind ones on that wire). A disagreement is a question the spec must
answer; where INVARIANTS.md is silent, the answers are in ``docs/decisions.md``.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from email.utils import format_datetime
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import assume, given, settings, strategies as st

from conformance import codes, oracle
from conformance.adapters.reference import (
    AnthropicTranslator,
    AttemptReader,
    Failure,
    ResponsesTranslator,
    SSEDecoder,
    StreamTranslator,
    backoff_delay_ms,
    classify_http_error,
    classify_stream_error,
    code_for_status,
    decide_retry,
    declared_policy,
    parse_retry_after,
)
from conformance.adapters.reference.attempt import Translator
from conformance.events import (
    MAX_DECLARED_WAIT_S,
    BlockEnd,
    DeclaredRetryPolicy,
    Finish,
    RetryPolicy,
)
from conformance.options import bundled_fixtures
from conformance.strategies import DIALECT_FAMILIES, family_cases
from fakeprovider.build import ABSENT, ScenarioBuilder, stream
from fakeprovider.dialects import DialectId
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.wire import WirePlan, encode_stream

NOW = 1_750_000_000.0  # epoch seconds: "now" for both readings of an HTTP-date
# Pure functions are cheap: four times the profile's budget (ci: 100 examples).
MANY = settings(max_examples=4 * settings().max_examples)

# --- error wording (H1) ---------------------------------------------------------------------

# The quota and context-overflow wording, as templates: `{a|b}` picks one (`{a|}`: optional),
# " " is a run of whitespace, "~" such a run, "_" or "-" (either possibly a near miss).
QUOTA_PHRASES = (
    "insufficient~{quota|balance|credit|credits}",
    "{quota|usage limit}~{exceeded|exhausted|reached}",
    "{exceed|exceeded|exceeds} {your |the |}{current |}quota",
    "{balance|credit|credits} {exhausted|depleted}",
    "out of {credit|credits|budget}",
)
CONTEXT_PHRASES = (
    "context~length~exceeded",
    "maximum context length",
    "{exceed|exceeded|exceeds} {the |}{model |model's |}context window",
    "too large for {the |}{model |model's |}context",
    "{the |}context window",
)
NEAR_MISSES = ("rate limit exceeded", "slow down", "quota", "exceeds maximum", "credits left")
PHRASES = QUOTA_PHRASES + CONTEXT_PHRASES + NEAR_MISSES
WHITESPACE = " \t\n\r\x0b\x0c\x1c\x85\xa0\u2003\u3000"
SPACES = st.one_of(st.just(" "), st.text(st.sampled_from(WHITESPACE), max_size=3))
SEPARATORS = st.one_of(SPACES, st.sampled_from(("_", "-", "__", "-_")))
CASINGS: tuple[Callable[[str], str], ...] = (str.lower, str.upper, str.title, str.swapcase)
STATUSES = (400, 401, 402, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529)


@st.composite
def wordings(draw: st.DrawFn, template: str) -> str:
    """One rendering of a wording template: words picked, gaps and casing drawn."""
    words = re.sub(r"\{([^}]*)\}", lambda pick: draw(st.sampled_from(pick[1].split("|"))), template)
    gaps = {" ": SPACES, "~": SEPARATORS}
    pieces = [draw(gaps[piece]) if piece in gaps else piece for piece in re.split("([ ~])", words)]
    return draw(st.sampled_from(CASINGS))("".join(pieces))


def details(template: str | None = None) -> st.SearchStrategy[str]:
    """Error wording: a phrase (of ``template``, or any), glued to noise or other phrases."""
    phrases = st.sampled_from(PHRASES).flatmap(wordings)
    noise = st.one_of(st.just(""), SPACES, st.text(max_size=6), phrases)
    phrase = phrases if template is None else wordings(template)
    return st.builds(lambda before, words, after: before + words + after, noise, phrase, noise)


def statuses() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(STATUSES), st.integers(100, 599))


def every_status() -> st.SearchStrategy[tuple[int, ...]]:
    """The statuses with a rule of their own, and one more: each wording is read at all."""
    return st.integers(100, 599).map(lambda other: (*STATUSES, other))


def error_members() -> st.SearchStrategy[Any]:
    """An `error` member: an OpenAI-style object, a bare string, or another JSON value."""
    wording = details()
    odd = st.one_of(
        st.none(),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.lists(wording, min_size=1, max_size=2),
        st.dictionaries(st.just("detail"), wording, min_size=1),
    )
    field = st.one_of(wording, odd)
    objects = st.fixed_dictionaries(
        {"code": st.one_of(statuses(), field), "type": field, "message": field},
        optional={"status": statuses()},
    )
    return st.one_of(objects, wording, odd)


def other_bodies() -> st.SearchStrategy[bytes]:
    """A non-2xx body without an error member: JSON, text, bytes, deep nesting."""
    documents = st.dictionaries(st.sampled_from(("detail", "message")), details())
    nested = st.integers(1, 100_000).map(lambda depth: b"[" * depth + b"]" * depth)
    return st.one_of(
        documents.map(json.dumps).map(str.encode),
        details().map(str.encode),
        nested,
        st.binary(max_size=12),
    )


@pytest.mark.parametrize("template", PHRASES)
@given(data=st.data(), status_set=every_status())
def test_status_classification_agrees(
    template: str, data: st.DataObject, status_set: tuple[int, ...]
) -> None:
    detail = data.draw(details(template), label="detail")
    for status in status_set:
        assert oracle.classify_status(status, detail) == code_for_status(status, detail), status


@given(
    error_members(),
    st.booleans(),
    st.sampled_from(("utf-8", "utf-8-sig", "utf-16")),
    other_bodies(),
    every_status(),
)
@MANY
def test_error_body_classification_agrees(
    error: Any, ascii_only: bool, encoding: str, other_body: bytes, status_set: tuple[int, ...]
) -> None:
    error_body = json.dumps({"error": error}, ensure_ascii=ascii_only).encode(encoding)
    for body in (error_body, other_body):
        detail = oracle.error_detail(body)
        for status in status_set:
            code = classify_http_error(status, {}, body, now_epoch_s=NOW).code
            assert oracle.classify_status(status, detail) == code, (body, status)


@given(error_members().filter(lambda error: error is not None), every_status())
@MANY
def test_stream_error_object_classification_agrees(error: Any, status_set: tuple[int, ...]) -> None:
    # An object's status decides its code: try it with each status (and without one).
    variants = [error]
    if isinstance(error, dict):
        variants += [{**error, "status": status} for status in status_set]
    for sent in variants:
        attempt = stream().chunk({"error": sent}, envelope=False).done()
        scenario = ScenarioBuilder("two-readings").attempt(attempt).build()
        expected = oracle.expected_attempt(scenario, 1, now=NOW)
        assert expected.code == classify_stream_error(sent).code, sent


# --- Retry-After (H2) -----------------------------------------------------------------------


def _asctime(moment: datetime) -> str:
    return f"{moment:%a %b} {moment.day:2d} {moment:%H:%M:%S %Y}"


# The three HTTP-date formats of RFC 9110 §5.6.7, then dates with another zone or none.
DATE_FORMATS: tuple[Callable[[datetime], str], ...] = (
    lambda moment: format_datetime(moment, usegmt=True),
    lambda moment: f"{moment:%A, %d-%b-%y %H:%M:%S} GMT",
    _asctime,
    lambda moment: format_datetime(moment).replace("+0000", "-0000"),
    lambda moment: f"{moment:%a, %d %b %Y %H:%M:%S}",
    lambda moment: format_datetime(moment.astimezone(timezone(timedelta(hours=1)))),
)


@st.composite
def http_dates(draw: st.DrawFn) -> str:
    near = st.integers(-100_000, 100_000).map(lambda s: datetime.fromtimestamp(NOW + s, UTC))
    anywhere = st.datetimes(datetime(1900, 1, 1), datetime(9999, 12, 30), timezones=st.just(UTC))
    moment = draw(st.one_of(near, anywhere))
    return draw(st.sampled_from(DATE_FORMATS))(moment)


@st.composite
def retry_after_values(draw: st.DrawFn) -> str:
    """Delay-seconds (huge, zero-padded, Unicode digits), HTTP-dates, junk; padded."""
    ascii_seconds = st.builds(
        lambda zeros, seconds: "0" * zeros + str(seconds),
        st.integers(0, 20),
        st.one_of(st.integers(0, 10**6), st.integers(0, 10**400)),
    )
    unicode_digits = st.text(st.characters(categories=("Nd", "No")), min_size=1, max_size=3)
    overflowing = st.builds(
        "Sun, 06 Nov 1994 {}:49:37 {}".format,
        st.one_of(st.just(8), st.integers(0, 10**25)),
        st.one_of(st.just("GMT"), st.integers(0, 10**20).map("+{:04d}".format)),
    )
    value = st.one_of(
        ascii_seconds, unicode_digits, http_dates(), overflowing, st.text(max_size=12)
    )
    padding = st.text(st.sampled_from(" \t\xa0"), max_size=2)
    return draw(padding) + draw(value) + draw(padding)


@pytest.fixture(scope="module")
def local_time_west_of_gmt() -> Iterator[None]:
    """A local time zone other than GMT's: an HTTP-date is GMT wherever the suite runs."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "EST+5"
    time.tzset()
    yield
    if saved is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = saved
    time.tzset()


@pytest.mark.usefixtures("local_time_west_of_gmt")
@given(retry_after_values())
@MANY
def test_retry_after_agrees(value: str) -> None:
    assert oracle.retry_after_ms({"retry-after": value}, now=NOW) == parse_retry_after(value, NOW)


# --- retry decisions and waits (R1-R3, R5, R6) ----------------------------------------------

ALL_CODES = (*sorted(codes.CANONICAL_CODES), "HTTP_404", "CONTENT_FILTER")


@st.composite
def policies(draw: st.DrawFn, longest_ms: float = 1e9) -> RetryPolicy:
    delays = st.floats(1e-3, longest_ms)
    initial, cap = sorted((draw(delays), draw(delays)))
    return RetryPolicy(
        max_retries=draw(st.integers(0, 5)),
        retryable_codes=draw(st.lists(st.sampled_from(ALL_CODES), unique=True)),
        initial_delay_ms=initial,
        max_delay_ms=cap,
        jitter_ratio=draw(st.floats(0, 1)),
    )


@given(policies(), st.floats(-1, 1), st.data())
@MANY
def test_retry_decision_and_wait_agree(
    policy: RetryPolicy, sample: float, data: st.DataObject
) -> None:
    cap = policy.max_delay_ms
    retry_after_ms = data.draw(st.one_of(st.none(), st.floats(1e-3, 1e12), st.just(cap)))
    assert_decisions_agree(policy, policy, sample, retry_after_ms)


# A declared wait is at most MAX_DECLARED_WAIT_S, jitter (at most doubling) included.
DECLARABLE = policies(longest_ms=MAX_DECLARED_WAIT_S * 1000 / 2)


@given(DECLARABLE, st.floats(-1, 1), st.one_of(st.none(), st.floats(1e-3, 1e12)))
@MANY
def test_the_reference_s_own_policy_and_its_declaration_agree(
    policy: RetryPolicy, sample: float, retry_after_ms: float | None
) -> None:
    """The reference running ``policy`` as its own, and the oracle reading what it declares
    (seconds, not ms: a Retry-After exactly at the cap may round either way, so it is left
    out)."""
    assume(retry_after_ms is None or abs(retry_after_ms - policy.max_delay_ms) > 1e-6)
    # A relative 1e-9: the declaration is in seconds, the policy in ms.
    assert_decisions_agree(policy, declared_policy(policy), sample, retry_after_ms, slack=1e-9)


def assert_decisions_agree(
    runs: RetryPolicy,
    reads: RetryPolicy | DeclaredRetryPolicy,
    sample: float,
    retry_after_ms: float | None,
    *,
    slack: float = 0.0,
) -> None:
    """The reference running ``runs`` retries exactly where the oracle reading ``reads``
    does, and waits within the oracle's bounds (widened by the relative ``slack``)."""
    for code in ALL_CODES:
        for retries_done in range(runs.max_retries + 2):
            failed = oracle.ExpectedAttempt(
                retries_done + 1, "error", code, retry_after_ms=retry_after_ms
            )
            failure = Failure(code, "failed", retry_after_ms=retry_after_ms)
            delay = decide_retry(runs, failure, retries_done, jitter_sample=sample)
            decision = oracle.retry_decision(failed, reads, retries_done)
            assert (decision == "retry") == (delay is not None), (code, retries_done)
            if delay is not None:
                bounds = oracle.wait_bounds(reads, failed, retries_done + 1)
                assert bounds.lower_ms * (1 - slack) <= delay <= bounds.upper_ms * (1 + slack)


@given(policies(), st.integers(1, 2000))
def test_backoff_extremes_are_the_wait_bounds(policy: RetryPolicy, retry: int) -> None:
    bounds = oracle.wait_bounds(policy, oracle.ExpectedAttempt(retry, "error", "SERVER"), retry)
    extremes = (backoff_delay_ms(policy, retry, -1), backoff_delay_ms(policy, retry, 1))
    assert extremes == (bounds.lower_ms, bounds.upper_ms)


# --- SSE framing (S1-S3) --------------------------------------------------------------------

LINE_ENDINGS = st.sampled_from((b"\n", b"\r\n", b"\r"))
LINE_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=8)


def sse_lines() -> st.SearchStrategy[bytes]:
    """One line of an event stream, without its line ending: `data` half of the time."""
    values = st.one_of(LINE_TEXT, st.sampled_from(("[DONE]", '{"a": 1}', ": keep-alive")))
    colons = st.sampled_from(("", ":", ": ", ":  "))
    data = st.builds(lambda colon, value: f"data{colon}{value}", colons, values)
    names = st.sampled_from(("event", "id", "retry", "x-vendor", "Data", "data ", ""))
    field = st.builds(lambda name, colon, value: name + colon + value, names, colons, values)
    raw = st.binary(max_size=6).map(lambda line: line.replace(b"\r", b"").replace(b"\n", b""))
    return st.one_of(data.map(str.encode), st.one_of(st.just(b""), field.map(str.encode), raw))


@st.composite
def sse_bodies(draw: st.DrawFn) -> bytes:
    """Events of a few lines, each ended by a blank line, with mixed line endings; a BOM or
    not; the last line unterminated or not."""
    events = draw(st.lists(st.lists(sse_lines(), min_size=1, max_size=3), max_size=5))
    lines = [line for event in events for line in (*event, b"")]
    body = b"".join(line + draw(LINE_ENDINGS) for line in lines)
    bom = b"\xef\xbb\xbf" if draw(st.booleans()) else b""
    return bom + body + draw(st.one_of(st.just(b""), sse_lines()))


def decoded(reads: list[bytes]) -> list[str]:
    """The reference decoder's payloads for a body arriving as ``reads``."""
    decoder = SSEDecoder()
    payloads = [event.data for read in reads for event in decoder.feed(read)]
    return payloads + [event.data for event in decoder.close()]


@given(sse_bodies(), st.lists(st.integers(0, 2**16), max_size=6))
@MANY
def test_sse_payloads_agree_under_any_split(body: bytes, cuts: list[int]) -> None:
    # Reads cut where drawn, and one byte per read with an empty read after each.
    offsets = [0, *sorted(cut % (len(body) + 1) for cut in cuts), len(body)]
    drawn = [body[start:end] for start, end in pairwise(offsets)]
    bytewise = [read for at in range(len(body)) for read in (body[at : at + 1], b"")]
    expected = oracle.sse_payloads(body)
    assert decoded(drawn) == expected
    assert decoded(bytewise) == expected


@given(family_cases("S"))
def test_sse_payloads_of_generated_streams_agree(scenario: Scenario) -> None:
    for attempt in scenario.attempts:
        if isinstance(attempt, StreamAttempt):
            plan = encode_stream(attempt.stream)
            assert oracle.sse_payloads(plan.body) == decoded([w.data for w in plan.writes])


# --- tool-call grouping (T1-T4, T7) ---------------------------------------------------------

IDS = st.sampled_from((ABSENT, None, "", "call_a", "call_b"))
NAMES = st.sampled_from((ABSENT, None, "", "get_weather", "get_time"))
FRAGMENTS = st.sampled_from((ABSENT, None, "", '{"a"', ":1}"))


@st.composite
def tool_call_streams(draw: st.DrawFn) -> Scenario:
    """Tool-call entries at a few indexes or none, their identity absent, null, empty,
    repeated, late or conflicting: which entries make one call is what both must agree on."""
    builder = stream().role()
    for _ in range(draw(st.integers(1, 6))):
        index = draw(st.sampled_from((0, 1, ABSENT)))
        builder = builder.tool_call(
            index, id=draw(IDS), name=draw(NAMES), arguments=draw(FRAGMENTS)
        )
    attempt = builder.finish("tool_calls").done()
    return ScenarioBuilder("two-readings").attempt(attempt).build()


@given(tool_call_streams())
@MANY
def test_tool_call_grouping_agrees(scenario: Scenario) -> None:
    expected = oracle.expected_attempt(scenario, 1, now=NOW)
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    translator = StreamTranslator()
    events = [
        event
        for payload in decoded([encode_stream(attempt.stream).body])
        for event in translator.feed(payload)
    ]
    finish = events[-1]
    assert isinstance(finish, Finish)
    assert (finish.reason, finish.code) == (expected.reason, expected.code)
    ends = [event.block for event in events if isinstance(event, BlockEnd)]
    assert ends == (list(expected.blocks) if expected.success else [])


# --- Anthropic Messages: whole attempts ---------------------------------------------------


def stream_attempts(dialect: DialectId) -> st.SearchStrategy[tuple[Scenario, int]]:
    """Each 2xx stream attempt of the generated cases of ``dialect``, of every family, as
    (scenario, attempt number): routing, identity, content, empty turns, framing, errors."""
    families = st.sampled_from(DIALECT_FAMILIES[dialect])
    scenarios = families.flatmap(lambda family: family_cases(family, dialect))
    return scenarios.flatmap(
        lambda scenario: st.sampled_from(
            [
                (scenario, number)
                for number, attempt in enumerate(scenario.attempts, start=1)
                if isinstance(attempt, StreamAttempt) and 200 <= attempt.stream.status < 300
            ]
            or [(scenario, 0)]
        )
    )


def closed_plan(scenario: Scenario, number: int) -> WirePlan:
    attempt = scenario.attempts[number - 1]
    assert isinstance(attempt, StreamAttempt)
    return encode_stream(attempt.stream)


def assert_attempt_agrees(
    scenario: Scenario, number: int, translator: Callable[[], Translator]
) -> None:
    """The translator's finish and block-ends for attempt ``number`` are the oracle's."""
    plan = closed_plan(scenario, number)
    expected = oracle.expected_attempt(scenario, number, now=NOW)
    reader = AttemptReader(translator=translator)
    events = []
    for write in plan.writes:
        events += reader.receive_data(write.data)
        if reader.finished:
            break
    events += reader.end()
    finish = next(event for event in events if isinstance(event, Finish))
    assert (finish.reason, finish.code) == (expected.reason, expected.code)
    ends = [event.block for event in events if isinstance(event, BlockEnd)]
    assert ends == (list(expected.blocks) if expected.success else ends)


@given(stream_attempts("anthropic-messages"))
@MANY
def test_anthropic_attempts_agree(drawn: tuple[Scenario, int]) -> None:
    scenario, number = drawn
    assume(number > 0)
    # a reset or stall is the transport's, read by the shell
    assume(closed_plan(scenario, number).ending == "close")
    assert_attempt_agrees(scenario, number, AnthropicTranslator)


# --- OpenAI Responses: whole attempts -------------------------------------------------------


def responses_corpus() -> list[tuple[Scenario, int]]:
    """Each 2xx stream attempt of the bundled Responses fixtures: the hand-built streams."""
    return [
        (scenario, number)
        for scenario in load_fixtures([bundled_fixtures()])
        if scenario.dialect == "openai-responses"
        for number, attempt in enumerate(scenario.attempts, start=1)
        if isinstance(attempt, StreamAttempt) and 200 <= attempt.stream.status < 300
        if closed_plan(scenario, number).ending == "close"
    ]


@pytest.mark.parametrize(
    ("scenario", "number"),
    responses_corpus(),
    ids=lambda value: value.id if isinstance(value, Scenario) else str(value),
)
def test_responses_fixture_attempts_agree(scenario: Scenario, number: int) -> None:
    assert_attempt_agrees(scenario, number, ResponsesTranslator)


@given(stream_attempts("openai-responses"))
@MANY
def test_responses_attempts_agree(drawn: tuple[Scenario, int]) -> None:
    scenario, number = drawn
    assume(number > 0)
    assume(closed_plan(scenario, number).ending == "close")
    assert_attempt_agrees(scenario, number, ResponsesTranslator)
