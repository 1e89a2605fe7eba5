"""The redaction rule (redaction.py): which names carry credentials, and URLs without them."""

from __future__ import annotations

import pytest

from fakeprovider.redaction import REDACTED, is_secret_name, redacted_headers, redacted_url


@pytest.mark.parametrize(
    "name",
    [
        # the words of the rule, alone
        "key",
        "auth",
        "token",
        "secret",
        "signature",
        "cookie",
        "session",
        "password",
        # vendors' names, as they are sent
        "Authorization",
        "Proxy-Authorization",
        "api-key",
        "x-api-key",
        "api_key",
        "X-Goog-Api-Key",
        "Ocp-Apim-Subscription-Key",
        "cf-aig-authorization",
        "helicone-auth",
        "x-auth",
        "Set-Cookie",
        "x-session-token",
        "X-Amz-Security-Token",
        "X-Amz-Signature",
        "X-Amz-Credential",
        "client_secret",
        "access_token",
        "passwd",
        "sig",
        "pwd",
    ],
)
def test_a_credential_name_is_secret(name: str) -> None:
    assert is_secret_name(name)
    assert is_secret_name(name.upper())


@pytest.mark.parametrize(
    "name",
    ["content-type", "accept", "user-agent", "api-version", "x-request-id", "retry-after", "model"],
)
def test_other_names_are_not(name: str) -> None:
    assert not is_secret_name(name)


def test_headers_keep_their_names_and_order_and_lose_secret_values() -> None:
    headers = [("Authorization", "Bearer a"), ("accept", "text/event-stream"), ("x-auth", "b")]

    assert redacted_headers(headers) == [
        ("Authorization", REDACTED),
        ("accept", "text/event-stream"),
        ("x-auth", REDACTED),
    ]


def test_a_url_loses_its_userinfo_and_the_values_of_secret_parameters() -> None:
    url = "https://me:pw@api.example.com:8443/v1/chat?api-version=1&key=k&api%5Fkey=k&x=&sig=k#f"

    assert redacted_url(url) == (
        f"https://{REDACTED}@api.example.com:8443/v1/chat"
        f"?api-version=1&key={REDACTED}&api%5Fkey={REDACTED}&x=&sig={REDACTED}#f"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8765",
        "https://api.example.com/openai/v1/chat/completions?api-version=2024-10-21",
        "http://[::1]:9/x?flag&a=b=c",
    ],
)
def test_a_url_without_credentials_is_kept_as_written(url: str) -> None:
    assert redacted_url(url) == url


def test_a_user_without_a_password_is_redacted_too() -> None:
    assert redacted_url("http://sk-live-123@h/x") == f"http://{REDACTED}@h/x"
