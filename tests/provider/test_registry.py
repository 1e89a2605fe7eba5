"""The request log: settled() waits for every connection to record how it ended."""

from __future__ import annotations

import asyncio
import time

from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.registry import RequestRecord, ScenarioRegistry

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
