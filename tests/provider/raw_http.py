"""HTTP/1.1 as bytes, for tests that talk to the loopback server over raw sockets."""

from __future__ import annotations


def post_bytes(path: str, body: bytes = b"{}", extra: str = "") -> bytes:
    """A POST request; ``extra`` is more header lines, each ending in CRLF."""
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}\r\n"
    ).encode() + body


def split_response(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    """The status line, the headers (names lowercased) and the body of one response."""
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in header_lines)
    return status_line, headers, body


def dechunk(body: bytes) -> list[bytes]:
    """The chunks of a chunked body, which must end with the last chunk."""
    chunks: list[bytes] = []
    while True:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            assert rest == b"\r\n", "nothing may follow the last chunk"
            return chunks
        chunks.append(rest[:size])
        assert rest[size : size + 2] == b"\r\n"
        body = rest[size + 2 :]
