"""The reference adapter as a subprocess adapter: JSON Lines over stdin and stdout.

``--adapter-cmd "python -m conformance.adapters.reference"``. Prints `hello`, then runs each
`run` line to its `end`, one case at a time. stdout carries protocol lines only; anything
else goes to stderr. Exits 0 at the end of stdin.
"""

import asyncio
import io
import sys

from conformance.adapters.reference.adapter import ReferenceAdapter
from conformance.events import (
    End,
    EventDecodeError,
    RunCase,
    Thrown,
    WireModel,
    dump_event,
    parse_run_line,
)


def main() -> int:
    for stream in (sys.stdin, sys.stdout):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(encoding="utf-8")  # JSON Lines are UTF-8 whatever the locale
    adapter = ReferenceAdapter()
    _emit(adapter.hello)
    # readline, not iteration: a line must be answered as soon as it arrives.
    for line in iter(sys.stdin.readline, ""):
        if not line.strip():
            continue
        try:
            case = parse_run_line(line)
        except EventDecodeError as error:
            print(f"reference adapter: skipped input line: {error}", file=sys.stderr, flush=True)
            continue
        asyncio.run(_run_case(adapter, case))
    return 0


async def _run_case(adapter: ReferenceAdapter, case: RunCase) -> None:
    try:
        async for event in adapter.run(case):
            _emit(event)
    except Exception as error:  # the case's outcome, reported as the protocol says; not a crash
        _emit(Thrown(case=case.case, message=f"{type(error).__name__}: {error}"))
    _emit(End(case=case.case))


def _emit(message: WireModel) -> None:
    sys.stdout.write(dump_event(message) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
