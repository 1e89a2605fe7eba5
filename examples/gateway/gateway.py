#!/usr/bin/env python3
"""A tiny OpenAI-compatible gateway for `conformance gateway`: Python 3.11, standard library.

It forwards `POST /v1/chat/completions` to one upstream base URL and re-emits the answer:

- `--mode passthrough` copies the bytes as they arrive (and the upstream's failures: a reset
  becomes a reset, a cut body a cut body). Gateway mode finds nothing to flag.
- `--mode faulty` re-emits the stream the way real gateways break it (anchors §3), each
  fault on its own with `--fault`:
  `null-identity`  continuation deltas repeat id, type and name as null (A1, A2);
  `index-offset`   tool-call indexes start at 1 (C3, a content-block index copied);
  `comment-as-data` keep-alive comments re-wrapped as `data: :...` (I2);
  `done-after-failure` an upstream failure mid-stream ends with `data: [DONE]` (J4).

    python examples/gateway/gateway.py --upstream http://127.0.0.1:8765/v1 --port 4000
    conformance gateway --gateway-url http://127.0.0.1:4000/v1 --upstream-port 8765

The first line printed is `gateway listening on http://127.0.0.1:PORT/v1`.
"""

import argparse
import http.client
import json
import socket
import struct
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

FAULTS = ("null-identity", "index-offset", "comment-as-data", "done-after-failure")
FORWARDED = ("authorization", "content-type", "accept", "x-scenario-id")
READ_SIZE = 65536


class UpstreamError(Exception):
    """The upstream's body ended badly: `how` is reset, cut or timeout."""

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


def read_upstream(response: http.client.HTTPResponse) -> Iterator[bytes]:
    """The body's reads as they arrive; raises UpstreamError when it ends badly."""
    while True:
        try:
            data = response.read1(READ_SIZE)
        except TimeoutError:
            raise UpstreamError("timeout") from None
        except ConnectionResetError:
            raise UpstreamError("reset") from None
        except (http.client.IncompleteRead, http.client.HTTPException, OSError):
            raise UpstreamError("cut") from None
        if not data:
            return
        yield data


class FaultyStream:
    """Re-emits an event stream line by line with the chosen faults (LF framing)."""

    def __init__(self, faults: frozenset[str]) -> None:
        self.faults = faults
        self.buffer = b""
        self.seen_calls: set[str] = set()

    def feed(self, data: bytes) -> bytes:
        self.buffer += data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *lines, self.buffer = self.buffer.split(b"\n")
        return b"".join(self.line(line) for line in lines)

    def finish(self) -> bytes:
        """The unterminated rest (an error body has no line break), passed on as it is."""
        rest, self.buffer = self.buffer, b""
        return rest

    def line(self, line: bytes) -> bytes:
        if line.startswith(b":") and "comment-as-data" in self.faults:
            return b"data: " + line + b"\n"
        if not line.startswith(b"data:"):
            return line + b"\n"
        payload = line[5:].removeprefix(b" ")
        try:
            chunk = json.loads(payload)
        except ValueError:
            return line + b"\n"
        if isinstance(chunk, dict):
            for choice in chunk.get("choices") or ():
                for entry in (choice.get("delta") or {}).get("tool_calls") or ():
                    self.rewrite_tool_call(entry)
        return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n"

    def rewrite_tool_call(self, entry: dict[str, Any]) -> None:
        key = json.dumps(entry.get("index"))
        if key in self.seen_calls and "null-identity" in self.faults:
            entry["id"] = entry["type"] = None
            if isinstance(entry.get("function"), dict):
                entry["function"]["name"] = None
        self.seen_calls.add(key)
        if "index-offset" in self.faults and isinstance(entry.get("index"), int):
            entry["index"] += 1


class GatewayHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream = urlsplit("http://127.0.0.1:8765/v1")
    mode = "passthrough"
    faults: frozenset[str] = frozenset()
    upstream_timeout_s = 30.0

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the suite reads stdout

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "x"}})
            return
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            upstream = self.open_upstream(body)
        except OSError as error:
            self.send_json(502, {"error": {"message": f"upstream: {error}", "type": "x"}})
            return
        try:
            self.relay(upstream.getresponse())
        except OSError:
            self.close_connection = True  # the upstream failed before answering
            self.abort()
        finally:
            upstream.close()

    def open_upstream(self, body: bytes) -> http.client.HTTPConnection:
        host, port = self.upstream.hostname or "127.0.0.1", self.upstream.port or 80
        connection = http.client.HTTPConnection(host, port, timeout=self.upstream_timeout_s)
        headers = {name: self.headers[name] for name in FORWARDED if self.headers[name]}
        path = self.upstream.path.rstrip("/") + "/chat/completions"
        connection.request("POST", path, body=body, headers=headers)
        return connection

    def relay(self, response: http.client.HTTPResponse) -> None:
        self.send_response(response.status)
        for name in ("content-type", "retry-after", "cache-control"):
            if response.getheader(name):
                self.send_header(name, response.getheader(name) or "")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        faulty = FaultyStream(self.faults) if self.mode == "faulty" else None
        try:
            for data in read_upstream(response):
                self.send_chunk(faulty.feed(data) if faulty else data)
        except UpstreamError as failure:
            if faulty and "done-after-failure" in self.faults:
                self.send_chunk(b"data: [DONE]\n\n")  # the fault: a failure made to look done
            else:
                self.close_connection = True
                if failure.how == "reset":
                    self.abort()
                return  # no last chunk: the client sees the body cut, as we did
        if faulty:
            self.send_chunk(faulty.finish())
        self.wfile.write(b"0\r\n\r\n")

    def send_chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def send_json(self, status: int, value: Any) -> None:
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def abort(self) -> None:
        """Reset the client's connection (RST), as the upstream did to us."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="upstream base URL, e.g. .../v1")
    parser.add_argument("--port", type=int, default=4000, help="0 picks a free port")
    parser.add_argument("--mode", choices=("passthrough", "faulty"), default="passthrough")
    parser.add_argument("--fault", action="append", choices=FAULTS, help="default: all")
    parser.add_argument("--upstream-timeout", type=float, default=30.0)
    options = parser.parse_args()
    GatewayHandler.upstream = urlsplit(options.upstream)
    GatewayHandler.mode = options.mode
    GatewayHandler.faults = frozenset(options.fault or FAULTS)
    GatewayHandler.upstream_timeout_s = options.upstream_timeout
    server = ThreadingHTTPServer(("127.0.0.1", options.port), GatewayHandler)
    server.daemon_threads = True
    print(f"gateway listening on http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
