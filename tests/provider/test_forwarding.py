"""Where the recording proxy forwards (forwarding.py): the upstream's origin, nowhere else."""

from __future__ import annotations

import pytest

from fakeprovider.forwarding import ForwardingError, forwarded_url, upstream_origin

UPSTREAM = upstream_origin("https://me:pw@api.example.com:8443/openai/?api-version=1")


def test_the_path_is_appended_to_the_upstreams_and_the_query_to_its_query() -> None:
    url = forwarded_url(UPSTREAM, "/v1/chat/completions?stream=true")

    assert str(url) == (
        "https://me:pw@api.example.com:8443/openai/v1/chat/completions?api-version=1&stream=true"
    )


def test_a_bare_upstream_takes_the_path_as_it_is() -> None:
    url = forwarded_url(upstream_origin("http://127.0.0.1:9"), "/a%2F%2Fb/c")

    assert str(url) == "http://127.0.0.1:9/a%2F%2Fb/c"


@pytest.mark.parametrize(
    "target",
    [
        "@127.0.0.1:9/x",  # glued after the upstream: a userinfo, and another host
        "http://127.0.0.1:9/x",  # absolute-form
        "//127.0.0.1:9/x",  # a network-path reference
        "127.0.0.1:9",  # authority-form
        "*",  # asterisk-form
        "v1/chat",
        "/v1/../../admin",
        "/v1/%2E%2E/admin",
        "/v1/./chat",
        "/v1/chat#fragment",
    ],
)
def test_a_target_that_is_not_an_origin_form_path_is_refused(target: str) -> None:
    with pytest.raises(ForwardingError, match="request target"):
        forwarded_url(UPSTREAM, target)


@pytest.mark.parametrize(
    ("upstream", "reason"),
    [
        ("api.example.com", "not an http"),
        ("ftp://example.com", "not an http"),
        ("http:///x", "not an http"),
        ("http://h:99999", "no valid port"),
        ("http://h/#x", "fragment"),
    ],
)
def test_an_unusable_upstream_is_refused(upstream: str, reason: str) -> None:
    with pytest.raises(ForwardingError, match=reason):
        upstream_origin(upstream)


def test_a_refused_upstream_is_named_without_its_credentials() -> None:
    with pytest.raises(ForwardingError) as refused:
        upstream_origin("ftp://me:sk-live-123@example.com")

    assert "sk-live-123" not in str(refused.value)
