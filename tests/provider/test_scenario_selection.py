"""Scenario selection a gateway can pass through: the x-scenario-id header and the model.

The loopback server and the in-process transport share the routing (playback.py), so each
selector is checked through both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.playback import DEFAULT_MODEL_PREFIX, SCENARIO_HEADER
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.server import ServerThread
from fakeprovider.transport import IN_PROCESS_ORIGIN, FakeTransport

pytestmark = pytest.mark.timeout(30)

# A client and the root URL it posts to; the root is where a gateway's base URL points.
Provider = Callable[[str], tuple[httpx.Client, str]]


def _scenario(scenario_id: str, text: str) -> Any:
    return (
        ScenarioBuilder(scenario_id)
        .attempt(stream().role().text(text).finish("stop").done())
        .build()
    )


def _registry() -> ScenarioRegistry:
    return ScenarioRegistry([_scenario("alpha", "from alpha"), _scenario("beta", "from beta")])


@pytest.fixture(params=["loopback", "in-process"])
def provider(request: pytest.FixtureRequest) -> Iterator[Provider]:
    """Opens a provider with the given model prefix; yields a client and its root URL."""
    opened: list[tuple[httpx.Client, ServerThread | None]] = []

    def open_provider(model_prefix: str) -> tuple[httpx.Client, str]:
        if request.param == "loopback":
            server = ServerThread(_registry(), model_prefix=model_prefix)
            server.start()
            client = httpx.Client(timeout=5.0)
            opened.append((client, server))
            return client, server.root_url
        transport = FakeTransport(_registry(), model_prefix=model_prefix)
        client = httpx.Client(transport=transport, timeout=5.0)
        opened.append((client, None))
        return client, IN_PROCESS_ORIGIN

    yield open_provider
    for client, server in opened:
        client.close()
        if server is not None:
            server.stop()


def _post(
    client: httpx.Client, url: str, model: str = "gpt-4o", headers: dict[str, str] | None = None
) -> httpx.Response:
    return client.post(url, json={"model": model, "stream": True}, headers=headers or {})


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/chat/completions"])
def test_the_header_selects_the_scenario_on_the_shared_path(provider: Provider, path: str) -> None:
    client, root = provider(DEFAULT_MODEL_PREFIX)

    response = _post(client, root + path, headers={SCENARIO_HEADER: "beta"})

    assert response.status_code == 200
    assert "from beta" in response.text


def test_the_model_selects_the_scenario_on_the_shared_path(provider: Provider) -> None:
    client, root = provider(DEFAULT_MODEL_PREFIX)

    response = _post(client, root + "/v1/chat/completions", model="scenario/alpha")

    assert response.status_code == 200
    assert "from alpha" in response.text


def test_a_configured_prefix_replaces_the_default(provider: Provider) -> None:
    client, root = provider("fake-")

    chosen = _post(client, root + "/v1/chat/completions", model="fake-beta")
    default = _post(client, root + "/v1/chat/completions", model="scenario/beta")

    assert "from beta" in chosen.text
    assert default.status_code == 404
    assert "fake-<id>" in default.json()["error"]["message"]


def test_the_header_wins_over_the_model(provider: Provider) -> None:
    client, root = provider(DEFAULT_MODEL_PREFIX)

    response = _post(
        client, root + "/v1/chat/completions", "scenario/alpha", {SCENARIO_HEADER: "beta"}
    )

    assert "from beta" in response.text


def test_the_path_prefix_wins_over_header_and_model(provider: Provider) -> None:
    client, root = provider(DEFAULT_MODEL_PREFIX)

    response = _post(
        client, root + "/alpha/v1/chat/completions", "scenario/beta", {SCENARIO_HEADER: "beta"}
    )

    assert "from alpha" in response.text


def test_a_selected_request_is_logged_and_counted_as_the_scenarios_attempt() -> None:
    registry = _registry()
    with httpx.Client(transport=FakeTransport(registry)) as client:
        _post(client, IN_PROCESS_ORIGIN + "/v1/chat/completions", "scenario/alpha")
        _post(client, IN_PROCESS_ORIGIN + "/v1/chat/completions", "scenario/alpha")

    records = registry.requests("alpha")
    assert [r.attempt for r in records] == [1, 2]
    assert records[0].path == "/v1/chat/completions"
    assert registry.requests("beta") == []


@pytest.mark.parametrize(
    ("model", "headers", "status", "words"),
    [
        ("gpt-4o", {}, 404, "no scenario selected"),
        ("scenario/nope", {}, 404, "no scenario 'nope'"),
        ("scenario/", {}, 400, "no valid scenario id"),
        ("gpt-4o", {SCENARIO_HEADER: "../etc"}, 400, "x-scenario-id header"),
    ],
)
def test_a_request_that_selects_nothing_gets_a_json_error(
    provider: Provider, model: str, headers: dict[str, str], status: int, words: str
) -> None:
    client, root = provider(DEFAULT_MODEL_PREFIX)

    response = _post(client, root + "/v1/chat/completions", model, headers)

    assert response.status_code == status
    assert words in response.json()["error"]["message"]


def test_a_body_that_is_not_json_selects_nothing(provider: Provider) -> None:
    client, root = provider(DEFAULT_MODEL_PREFIX)

    response = client.post(root + "/v1/chat/completions", content=b"\xff not json")

    assert response.status_code == 404
    assert "no scenario selected" in response.json()["error"]["message"]
