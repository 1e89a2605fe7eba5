"""The loopback server in a process of its own, with a memory probe, for the load test.

Prints ``{"port": N}``, then answers each line on stdin with one JSON line, after a garbage
collection: ``trace`` starts tracemalloc, any other line reports the heap traced since then,
``{"current": bytes, "peak": bytes}``. EOF on stdin stops the server.
"""

from __future__ import annotations

import gc
import json
import sys
import tracemalloc

from fakeprovider.server import ServerThread


def main() -> None:
    with ServerThread() as server:
        print(json.dumps({"port": server.port}), flush=True)
        for command in sys.stdin:
            gc.collect()
            if command.strip() == "trace":
                tracemalloc.start()
            current, peak = tracemalloc.get_traced_memory()
            print(json.dumps({"current": current, "peak": peak}), flush=True)


if __name__ == "__main__":
    main()
