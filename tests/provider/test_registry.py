"""The request log: settled() waits for every connection to record how it ended."""

from __future__ import annotations

import asyncio
import base64
import time

from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.registry import (
    MAX_LOGGED_BYTES,
    MAX_LOGGED_REQUESTS,
    RequestRecord,
    ScenarioRegistry,
)

SCENARIO = ScenarioBuilder("s").attempt(stream().text("x").finish("stop").done()).build()


def registry_with_a_request() -> ScenarioRegistry:
    registry = ScenarioRegistry([SCENARIO])
    registry.begin_request("s", method="POST", path="/s/v1", headers=[], body=b"{}")
    return registry


def test_an_ended_log_is_settled_at_once() -> None:
    registry = registry_with_a_request()
    registry.end_request("s", 1, "complete")
    started = time.monotonic()
    requests = asyncio.run(registry.settled("s"))
    assert [request.ended for request in requests] == ["complete"]
    assert time.monotonic() - started < 0.5


def test_an_empty_log_is_settled() -> None:
    assert asyncio.run(ScenarioRegistry([SCENARIO]).settled("s")) == []


def test_settled_waits_for_the_end_to_be_recorded() -> None:
    registry = registry_with_a_request()

    async def end_later() -> list[RequestRecord]:
        asyncio.get_running_loop().call_later(0.1, registry.end_request, "s", 1, "reset")
        return await registry.settled("s", within_s=5)

    started = time.monotonic()
    requests = asyncio.run(end_later())
    assert [request.ended for request in requests] == ["reset"]
    assert time.monotonic() - started < 4  # it returned when the end came, not at the bound


def test_settled_gives_up_after_within_s() -> None:
    registry = registry_with_a_request()
    started = time.monotonic()
    requests = asyncio.run(registry.settled("s", within_s=0.1))
    assert [request.ended for request in requests] == ["pending"]
    assert 0.1 <= time.monotonic() - started < 1


# --- the log's bounds: the oldest records go, counted ---------------------------------------

OTHER = ScenarioBuilder("other").attempt(stream().text("y").done()).build()


def log_one(registry: ScenarioRegistry, scenario_id: str = "s", body: bytes = b"{}") -> int:
    number, _ = registry.begin_request(
        scenario_id, method="POST", path=f"/{scenario_id}/v1", headers=[], body=body
    )
    return number


def test_past_the_count_bound_the_oldest_record_is_dropped_and_counted() -> None:
    registry = ScenarioRegistry([SCENARIO])
    for _ in range(MAX_LOGGED_REQUESTS + 1):
        log_one(registry)

    log = registry.request_log("s")
    assert len(log.records) == MAX_LOGGED_REQUESTS
    assert log.dropped == 1
    assert log.records[0].attempt == 2
    assert log_one(registry) == MAX_LOGGED_REQUESTS + 2  # attempts count every request
    registry.end_request("s", MAX_LOGGED_REQUESTS + 2, "complete")
    assert registry.requests("s")[-1].ended == "complete"
    registry.end_request("s", 1, "complete")  # dropped: nothing to mark


def test_past_the_byte_bound_the_oldest_records_are_dropped_across_scenarios() -> None:
    registry = ScenarioRegistry([SCENARIO, OTHER])
    mebibyte = b"x" * 1024 * 1024
    log_one(registry, "other", mebibyte)
    for _ in range(MAX_LOGGED_BYTES // len(mebibyte)):
        log_one(registry, "s", mebibyte)

    assert registry.request_log("other") == ([], 1)  # the oldest, whatever its scenario
    kept = registry.request_log("s")
    assert kept.dropped == 1
    assert len(kept.records) == MAX_LOGGED_BYTES // len(mebibyte) - 1
    assert sum(len(base64.b64decode(r.body_base64)) for r in kept.records) <= MAX_LOGGED_BYTES


def test_the_latest_record_is_kept_however_large() -> None:
    registry = ScenarioRegistry([SCENARIO])
    log_one(registry)
    log_one(registry, body=b"x" * (MAX_LOGGED_BYTES + 1))
    assert registry.request_log("s").dropped == 1
    assert [record.attempt for record in registry.requests("s")] == [2]


def test_clearing_the_log_resets_its_dropped_count_and_frees_its_share() -> None:
    registry = ScenarioRegistry([SCENARIO, OTHER])
    for _ in range(MAX_LOGGED_REQUESTS + 5):
        log_one(registry)
    registry.clear_requests("s")
    assert registry.request_log("s") == ([], 0)
    for _ in range(MAX_LOGGED_REQUESTS):
        log_one(registry, "other")
    assert registry.request_log("other").dropped == 0  # the cleared records took no room
    assert log_one(registry) == 1


def test_bounded_each_a_scenario_s_large_requests_never_push_out_another_s() -> None:
    registry = ScenarioRegistry([SCENARIO, OTHER], bound_each_scenario=True)
    mebibyte = b"x" * 1024 * 1024
    log_one(registry, "other", mebibyte)
    within = MAX_LOGGED_BYTES // len(mebibyte) - 1  # a record is its path and headers too
    for _ in range(within):
        log_one(registry, "s", mebibyte)

    assert [record.attempt for record in registry.requests("other")] == [1]
    kept = registry.request_log("s")
    assert kept.dropped == 0 and len(kept.records) == within
    log_one(registry, "s", mebibyte)
    log_one(registry, "s", mebibyte)  # past its own bound: its own oldest go
    kept = registry.request_log("s")
    assert kept.dropped > 0 and kept.records[0].attempt == kept.dropped + 1
    assert sum(len(base64.b64decode(r.body_base64)) for r in kept.records) <= MAX_LOGGED_BYTES
    assert registry.request_log("other").dropped == 0


def test_bounded_each_a_scenario_s_log_keeps_the_count_bound_and_its_latest_record() -> None:
    registry = ScenarioRegistry([SCENARIO], bound_each_scenario=True)
    for _ in range(MAX_LOGGED_REQUESTS + 1):
        log_one(registry)
    assert registry.request_log("s").dropped == 1
    log_one(registry, body=b"x" * (MAX_LOGGED_BYTES + 1))
    assert [record.attempt for record in registry.requests("s")] == [MAX_LOGGED_REQUESTS + 2]
    registry.clear_requests("s")
    assert registry.request_log("s") == ([], 0)
    assert log_one(registry) == 1
