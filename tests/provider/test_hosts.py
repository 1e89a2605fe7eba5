"""Binding and Host names: the control API answers only to this machine's names."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from fakeprovider.build import ScenarioBuilder, stream
from fakeprovider.hosts import HostCheck, is_loopback
from fakeprovider.registry import ScenarioRegistry
from fakeprovider.server import ServerThread

PORT = 8765


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.5.6.7", True),
        ("::1", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("", False),
        ("192.168.1.5", False),
        ("my-laptop.lan", False),
    ],
)
def test_only_loopback_addresses_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        (f"127.0.0.1:{PORT}", True),
        (f"localhost:{PORT}", True),
        (f"[::1]:{PORT}", True),
        (f"10.1.2.3:{PORT}", True),  # an IP address: no DNS rebinding goes through one
        ("localhost", True),
        (None, True),  # HTTP/1.0 without Host; a browser always sends one
        (f"evil.example:{PORT}", False),
        ("evil.example", False),
        (f"localhost:{PORT + 1}", False),
        (f"localhost.evil.example:{PORT}", False),
        (f"[::1]x:{PORT}", False),
        ("[::1", False),
    ],
)
def test_the_host_check_answers_to_local_names_and_addresses(
    header: str | None, allowed: bool
) -> None:
    assert HostCheck("127.0.0.1").allows(header, PORT) is allowed


def test_the_bound_name_and_given_names_are_allowed_and_star_allows_any() -> None:
    assert HostCheck("my-laptop.lan").allows(f"MY-LAPTOP.lan:{PORT}", PORT)
    assert not HostCheck("0.0.0.0").allows(f"my-laptop.lan:{PORT}", PORT)
    assert HostCheck("127.0.0.1", ["proxy.internal"]).allows("proxy.internal", PORT)
    assert HostCheck("127.0.0.1", ["*"]).allows(f"evil.example:{PORT + 1}", PORT)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    scenario = ScenarioBuilder("hello").attempt(stream().text("hi").done()).build()
    with ServerThread(ScenarioRegistry([scenario])) as running:
        yield running


def test_the_control_api_refuses_a_foreign_host_with_a_json_421(server: ServerThread) -> None:
    rebinding = {"host": f"evil.example:{server.port}"}
    with httpx.Client(timeout=5) as client:
        for method, path in [
            ("GET", "/_scenarios"),
            ("GET", "/_scenarios/hello/requests"),
            ("PUT", "/_scenarios/hijacked"),
            ("GET", "/_health"),
        ]:
            refused = client.request(method, server.root_url + path, headers=rebinding, json={})
            assert refused.status_code == 421, path
            assert "DNS rebinding" in refused.json()["error"]["message"]
        assert client.get(f"{server.root_url}/_scenarios").status_code == 200
        # A gateway may call the provider by any name: completions answer whatever the Host.
        played = client.post(
            f"{server.base_url('hello')}/chat/completions", headers=rebinding, json={}
        )
        assert played.status_code == 200
    assert "hijacked" not in server.registry.ids()


def test_allowed_hosts_open_the_control_api_to_more_names() -> None:
    with (
        ServerThread(allowed_hosts=["proxy.internal"]) as running,
        httpx.Client(timeout=5) as client,
    ):
        url = f"{running.root_url}/_scenarios"
        assert client.get(url, headers={"host": "proxy.internal"}).status_code == 200
        assert client.get(url, headers={"host": "evil.example"}).status_code == 421
