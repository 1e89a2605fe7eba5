"""The stdlib Python example adapter's own parts, loaded from its file (it is no package)."""

from __future__ import annotations

import importlib.util
import ssl
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/python-adapter/adapter.py"


@pytest.fixture
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("python_example_adapter", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ca_certificates_are_loaded_once(
    example: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Loading them costs more than a loopback case; each https attempt used to.
    loads: list[object] = []
    load_default_certs = ssl.SSLContext.load_default_certs

    def counted(context: ssl.SSLContext, *args: Any) -> None:
        loads.append(args)
        load_default_certs(context, *args)

    monkeypatch.setattr(ssl.SSLContext, "load_default_certs", counted)
    case = {"case": "c", "base_url": "https://127.0.0.1:9/v1", "idle_timeout_s": 1, "api_key": "k"}
    finishes = [
        example.run_attempt(case, b"{}", time.monotonic() + 5, lambda event: None)[0]
        for _ in range(2)
    ]
    assert [finish["code"] for finish in finishes] == ["TRANSPORT", "TRANSPORT"]  # refused
    assert len(loads) == 1
