"""The fake provider speaks OpenAI Responses: numbered events, its paths, the openai SDK.

The openai SDK's own Responses stream reads what the loopback server sends: a real client,
the fake provider as its upstream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pytest
from pydantic import ValidationError

from fakeprovider import FixtureError, load_fixture
from fakeprovider.build import ScenarioBuilder, http_error, responses_stream
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.scenario import Scenario, StreamAttempt
from fakeprovider.server import ServerThread
from fakeprovider.wire import encode_stream

pytestmark = [pytest.mark.timeout(30)]

USAGE = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
}


def text_scenario(output: list[object] | None = None) -> Scenario:
    return (
        ScenarioBuilder("resp-text", dialect="openai-responses")
        .attempt(
            responses_stream()
            .created()
            .message_added(0, "msg_1")
            .part_added(0, "msg_1")
            .text_delta(0, "msg_1", "Hel")
            .keepalive()
            .text_delta(0, "msg_1", "lo")
            .item_done(0, MESSAGE)
            .completed(output=output or [], usage=USAGE)
        )
        .build()
    )


def events(scenario: Scenario) -> list[dict[str, object]]:
    attempt = scenario.attempts[0]
    assert isinstance(attempt, StreamAttempt)
    body = encode_stream(attempt.stream).body.decode()
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]


def test_each_event_is_numbered_by_its_position_right_after_its_type() -> None:
    sent = events(text_scenario())
    assert [event["sequence_number"] for event in sent] == list(range(8))
    assert all(list(event)[:2] == ["type", "sequence_number"] for event in sent)


def test_a_number_the_step_sets_is_kept_and_unnumbered_sends_none() -> None:
    scenario = (
        ScenarioBuilder("resp-seq", dialect="openai-responses")
        .attempt(
            responses_stream()
            .created()
            .event({"type": "response.in_progress", "sequence_number": 7, "response": {}})
            .keepalive()
            .unnumbered()
            .completed()
        )
        .build()
    )
    assert [event.get("sequence_number") for event in events(scenario)] == [0, 7, None, 3]


def test_numbers_survive_a_round_trip_through_the_model() -> None:
    scenario = text_scenario()
    again = Scenario.model_validate(scenario.model_dump(mode="json"))
    assert events(again) == events(scenario)


def test_unnumbered_on_a_wire_without_numbers_is_refused() -> None:
    with pytest.raises(ValidationError, match="only openai-responses numbers its events"):
        Scenario.model_validate(
            {
                "id": "an-x",
                "dialect": "anthropic-messages",
                "attempts": [
                    {"stream": {"steps": [{"event": {"type": "ping"}, "numbered": False}]}}
                ],
            }
        )


def test_a_malformed_responses_fixture_names_its_file_field_and_reason(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    path.write_text(
        "id: resp-bad\ndialect: openai-responses\nattempts:\n"
        "  - stream:\n      steps:\n        - event: {type: response.created}\n"
        "          numbered: maybe\n",
        encoding="utf-8",
    )
    with pytest.raises(FixtureError) as caught:
        load_fixture(path)
    assert f"{path}:7: attempts[0].stream.steps[0].numbered" in str(caught.value)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    registry = ScenarioRegistry(
        [
            text_scenario(),
            ScenarioBuilder("resp-429", dialect="openai-responses")
            .attempt(http_error(429, retry_after=0))
            .attempt(
                responses_stream()
                .created()
                .error("insufficient_quota", "You exceeded your current quota")
                .failed("insufficient_quota", "You exceeded your current quota")
            )
            .build(),
        ]
    )
    with ServerThread(registry, request_timeout_s=2.0) as running:
        yield running


def client(server: ServerThread, scenario_id: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.sdk_base_url(scenario_id), api_key="sk-test", max_retries=0
    )


def test_the_openai_sdk_streams_a_scenario_and_keeps_every_delta(server: ServerThread) -> None:
    with client(server, "resp-text").responses.stream(model="fake-model", input="hi") as stream:
        deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert deltas == ["Hel", "lo"]
    assert final.status == "completed" and final.usage is not None
    assert final.usage.output_tokens == 2
    # the SDK takes the terminal snapshot as sent, empty as some gateways send it (§4.G)
    assert final.output == []


@pytest.mark.parametrize("path", ["/resp-text/v1/responses", "/resp-text/responses"])
def test_a_scenario_is_served_at_both_responses_paths(server: ServerThread, path: str) -> None:
    response = httpx.post(f"{server.root_url}{path}", json={"stream": True}, timeout=5)
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text.startswith("event: response.created\ndata: ")


def test_an_http_error_has_the_chat_body_and_a_failed_response_raises_in_the_sdk(
    server: ServerThread,
) -> None:
    with pytest.raises(openai.RateLimitError):
        client(server, "resp-429").responses.create(model="m", input="hi", stream=True)
    with (
        pytest.raises(openai.APIError, match="exceeded your current quota"),
        client(server, "resp-429").responses.stream(model="m", input="hi") as stream,
    ):
        for _ in stream:
            pass


def test_the_wrong_endpoint_gets_a_json_4xx_naming_the_dialect(server: ServerThread) -> None:
    response = httpx.post(f"{server.root_url}/resp-text/v1/chat/completions", json={}, timeout=5)
    assert response.status_code == 404
    message = response.json()["error"]["message"]
    assert "speaks openai-responses" in message and "/resp-text/v1/responses" in message
