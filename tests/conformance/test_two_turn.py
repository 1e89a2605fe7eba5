"""Two-turn cases end to end: the reference builds the next request from what it assembled
and passes; a client that loses ids or tokens on the way back fails the rule that owns the
loss; one without the capability gets n/a; one that never sends it fails N1 or times out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from typing import Any

import httpx
import pytest

from conformance.adapters.base import PythonAdapterSession
from conformance.adapters.mutants import MUTANTS
from conformance.adapters.reference import ReferenceAdapter
from conformance.events import Event, RunCase
from conformance.options import RunOptions, bundled_fixtures
from conformance.results import RunResult
from conformance.run.runner import run_suite
from conformance.verdicts import Contract
from fakeprovider.fixtures import load_fixtures
from fakeprovider.scenario import Scenario

TWO_TURN = [s for s in load_fixtures([bundled_fixtures()]) if s.follow_up is not None]
RULES = ("N1", "N2", "AN-R2", "RS-R2")
OPTIONS = RunOptions(transport="in-process", timeout_s=5.0)


def run(adapter: Any, scenarios: Sequence[Scenario], options: RunOptions = OPTIONS) -> RunResult:
    return asyncio.run(run_suite(PythonAdapterSession(adapter), scenarios, options))


def verdicts(result: RunResult, case: str) -> dict[str, tuple[str, str]]:
    (found,) = (c for c in result.cases if c.case == case)
    return {id: (v.verdict, v.reason) for id, v in found.verdicts.items()}


def test_every_dialect_has_a_two_turn_fixture() -> None:
    assert {s.dialect for s in TWO_TURN} == {
        "chat-completions",
        "anthropic-messages",
        "openai-responses",
    }


@pytest.mark.parametrize("contract", ["harness", "interop"])
def test_the_reference_passes_every_two_turn_case(contract: Contract) -> None:
    result = run(ReferenceAdapter(), TWO_TURN, replace(OPTIONS, contract=contract))
    for case in result.cases:
        judged = {id: v.verdict for id, v in case.verdicts.items()}
        assert not {"fail", "non-strict"} & set(judged.values()), (case.case, judged)
        assert {judged[id] for id in RULES if id in judged} == {"pass"}
        assert {"N1", "N2"} <= set(judged)
        assert [r["follow_up"] for r in case.requests] == [False, True]


@pytest.mark.parametrize(
    ("mutant", "case", "rule", "reason"),
    [
        (
            "signature_dropped_on_replay",
            "an-two-turn-thinking-tool",
            "AN-R2",
            "the thinking block's signature (reasoning block 1) is missing",
        ),
        (
            "item_id_as_call_id",
            "resp-two-turn-reasoning-function-call",
            "N1",
            'is the item id of call "call_3YyJxexPQxpgBOa8IiNGJDoK", not its call_id',
        ),
        (
            "calls_replayed_twice",
            "two-turn-parallel-tool-calls",
            "N2",
            'the replayed turn has call "call_Pq7WmZ2cR4tY8uK1oL5nB3vX" 2 times',
        ),
        (
            "encrypted_content_dropped_on_replay",
            "resp-two-turn-reasoning-function-call",
            "RS-R2",
            "the reasoning item's encrypted_content (reasoning block 1) is missing",
        ),
    ],
)
def test_a_next_request_mutant_fails_its_rule(
    mutant: str, case: str, rule: str, reason: str
) -> None:
    result = run(MUTANTS[mutant].factory(OPTIONS), TWO_TURN)
    verdict, why = verdicts(result, case)[rule]
    assert verdict == "fail" and reason in why
    # The first turn was read right: only the next request is wrong.
    first_turn = {id: v for id, (v, _) in verdicts(result, case).items() if id not in RULES}
    assert not {"fail", "non-strict"} & set(first_turn.values())


class _Wrapped:
    """The reference with its hello or its run changed by a subclass."""

    def __init__(self) -> None:
        self.inner = ReferenceAdapter()
        self.hello = self.inner.hello

    async def run(
        self, case: RunCase, http_client: httpx.AsyncClient | None = None
    ) -> AsyncGenerator[Event, None]:
        async for event in self.inner.run(case, http_client):
            yield event


class _Undeclared(_Wrapped):
    def __init__(self) -> None:
        super().__init__()
        capabilities = self.hello.capabilities.model_copy(update={"follow_up": False})
        self.hello = self.hello.model_copy(update={"capabilities": capabilities})


class _NeverSends(_Wrapped):
    async def run(
        self, case: RunCase, http_client: httpx.AsyncClient | None = None
    ) -> AsyncGenerator[Event, None]:
        async for event in self.inner.run(case.model_copy(update={"follow_up": None}), http_client):
            yield event


class _Hangs(_Wrapped):
    async def run(
        self, case: RunCase, http_client: httpx.AsyncClient | None = None
    ) -> AsyncGenerator[Event, None]:
        async for event in self.inner.run(case.model_copy(update={"follow_up": None}), http_client):
            yield event
        if case.follow_up is not None:
            await asyncio.sleep(3600)  # waits for a tool result it never asks for


def test_an_adapter_without_the_capability_gets_n_a_with_the_reason() -> None:
    result = run(_Undeclared(), TWO_TURN)
    for case in result.cases:
        for id in RULES:
            if id in case.verdicts:
                assert case.verdicts[id].verdict == "n/a"
                assert case.verdicts[id].reason == "the adapter does not declare follow_up"


def test_a_client_that_never_sends_the_next_request_fails_n1_alone() -> None:
    result = run(_NeverSends(), TWO_TURN)
    for case in result.cases:
        assert case.verdicts["N1"].verdict == "fail"
        assert case.verdicts["N1"].reason == "the client sent no next request"
        others = {id: v.verdict for id, v in case.verdicts.items() if id != "N1"}
        assert not {"fail", "non-strict"} & set(others.values()), (case.case, others)


def test_a_client_that_waits_forever_is_a_timeout_of_its_case_and_the_run_goes_on() -> None:
    chat = next(s for s in TWO_TURN if s.id == "two-turn-parallel-tool-calls")
    one_turn = chat.model_copy(update={"id": "one-turn", "follow_up": None})
    result = run(_Hangs(), [chat, one_turn], replace(OPTIONS, timeout_s=1.0))
    hung, after = result.cases
    assert hung.status == "timeout"
    assert after.status == "completed" and "N1" not in after.verdicts
