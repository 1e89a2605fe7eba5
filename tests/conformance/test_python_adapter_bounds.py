"""A Python adapter that yields events outside the protocol's bounds (nesting, integer size,
lone surrogates) gets a protocol error for that case, as a subprocess adapter does; nothing
escapes, and what is recorded can be written."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.base import AdapterLoadError, PythonAdapterSession, load_python_adapter
from conformance.events import Capabilities, Hello, RunCase, TextDelta, Thrown
from conformance.options import RunOptions

HELLO = Hello(protocol=1, name="bounds", version="0", capabilities=Capabilities())
CASE = RunCase.model_validate(
    {
        "case": "c",
        "base_url": "http://127.0.0.1:1/v1",
        "api_key": "k",
        "request": {},
        "retry": {"max_retries": 0, "initial_delay_ms": 1, "max_delay_ms": 1, "jitter_ratio": 0},
        "idle_timeout_s": 1,
        "timeout_s": 5,
    }
)


def deep(depth: int) -> list[Any]:
    nested: list[Any] = []
    for _ in range(depth):
        nested = [nested]
    return nested


def cyclic() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


class Yielding:
    hello = HELLO

    def __init__(self, item: object) -> None:
        self.item = item

    def run(self, case: RunCase) -> Iterator[object]:
        yield self.item


@pytest.mark.parametrize(
    ("item", "match"),
    [
        ({"case": "c", "type": "text-delta", "index": deep(100_000), "text": "x"}, "nested"),
        ({"case": "c", "type": "text-delta", "index": cyclic(), "text": "x"}, "nested"),
        ({"case": "c", "type": "text-delta", "index": 10**5000, "text": "x"}, "out of range"),
        (TextDelta(case="c", index=10**5000, text="x"), "out of range"),
        (Thrown(case="c", message="\ud800"), "lone surrogate"),
        ({"case": "c", "type": "thrown", "message": "x", "\udfff": 1}, "lone surrogate"),
        (
            {"case": "c", "type": "retry", "attempt": 1, "code": "X", "delay_ms": float("nan")},
            "nan",
        ),
    ],
)
def test_an_event_outside_the_bounds_is_a_protocol_error(item: object, match: str) -> None:
    run = asyncio.run(PythonAdapterSession(Yielding(item)).run_case(CASE, None))

    assert run.status == "protocol-error"
    assert match in run.detail
    assert run.detail.encode()


def test_a_hello_outside_the_bounds_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "surrogate_hello.py").write_text(
        "from conformance.events import Capabilities, Hello\n"
        "class Adapter:\n"
        "    hello = Hello(protocol=1, name='\\ud800', version='0', capabilities=Capabilities())\n"
        "    def run(self, case):\n"
        "        yield from ()\n"
        "def factory(options):\n"
        "    return Adapter()\n"
    )
    monkeypatch.chdir(tmp_path)

    with pytest.raises(AdapterLoadError, match="lone surrogate"):
        load_python_adapter("surrogate_hello:factory", RunOptions())


class Raising:
    hello = HELLO

    def run(self, case: RunCase) -> Iterator[object]:
        raise ValueError("bad \ud800 byte")
        yield


def test_a_thrown_message_with_a_lone_surrogate_is_kept_escaped() -> None:
    run = asyncio.run(PythonAdapterSession(Raising()).run_case(CASE, None))

    assert run.events[0] == Thrown(message="ValueError: bad \\ud800 byte")
    assert "\\ud800" in run.stderr
