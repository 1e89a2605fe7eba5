"""The playbacks both shells play: encoded once per attempt, within a byte budget."""

from __future__ import annotations

import gc
import json
import tracemalloc

from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.playback import MAX_CACHED_PLAYBACK_BYTES, Playback, answer_control, prepare
from fakeprovider.registry import MAX_LOGGED_BYTES, ScenarioRegistry
from fakeprovider.scenario import StreamAttempt

BODY_BYTES = 15 * 1024 * 1024  # under the body cap; eight of them are twice the cache's budget


def large_attempt(number: int) -> StreamAttempt:
    scenario = ScenarioBuilder(f"large-{number}").attempt(stream().raw("x" * BODY_BYTES)).build()
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    return attempt


def test_a_played_attempt_is_encoded_once() -> None:
    attempt = large_attempt(0)
    assert prepare(attempt) is prepare(attempt)


def test_the_encoded_playbacks_kept_stay_within_their_budget() -> None:
    attempts = [large_attempt(number) for number in range(8)]  # alive: none drops by itself
    gc.collect()
    tracemalloc.start()
    try:
        played = [prepare(attempt) for attempt in attempts]
        del played
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept <= MAX_CACHED_PLAYBACK_BYTES  # all eight bodies were kept: 120 MiB
    latest = prepare(attempts[-1])
    assert isinstance(latest, Playback)
    assert latest is prepare(attempts[-1])  # the most recent is still there


def test_an_attempt_that_is_gone_takes_its_playback_along() -> None:
    attempt = large_attempt(9)
    gc.collect()
    tracemalloc.start()
    try:
        prepare(attempt)
        del attempt
        gc.collect()
        small = ScenarioBuilder("small").attempt(stream().raw("x")).build().attempts[0]
        assert isinstance(small, StreamAttempt)
        prepare(small)  # any later use drops what is gone
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept < BODY_BYTES


def test_reading_the_request_log_back_costs_a_few_times_its_bound() -> None:
    """Past its byte bound the log drops its oldest records, so the answer to a GET of it,
    and the memory it takes to write, stay proportional to MAX_LOGGED_BYTES."""
    registry = ScenarioRegistry([ScenarioBuilder("busy").attempt(stream().done()).build()])
    body = b"x" * (256 * 1024)
    for _ in range(2 * MAX_LOGGED_BYTES // len(body)):
        registry.begin_request("busy", method="POST", path="/busy/v1", headers=[], body=body)
    gc.collect()
    tracemalloc.start()
    try:
        answer = answer_control(
            registry, method="GET", path="/_scenarios/busy/requests", body=b"", base_url=str
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert json.loads(answer.plan.body)["dropped"] == MAX_LOGGED_BYTES // len(body) + 1
    assert peak < 7 * MAX_LOGGED_BYTES  # all 32 MiB kept, it took 9 times
