"""A subprocess adapter that misbehaves on demand, for tests of SubprocessAdapterSession.

Stdlib only. A case whose id contains one of these words gets that misbehaviour; any other
case gets a correct `finish` + `end` (the echo adapter, which makes no HTTP request), or with
--delegate is run by the stdlib example adapter (examples/python-adapter), so that a whole
suite can be judged around the misbehaving cases:

    hang           spawns a sleeping grandchild (sharing our pipes), then never answers;
                   with "garbage" too, it first prints a non-JSON line
    escape         double-forks a `sleep` that leaves our session and process group
                   (writing `escaped=PID` to stderr), then finishes correctly; with "hang"
                   too, it then never answers
    exit           writes to stderr, then exits with code 3 mid-case
    garbage        prints a non-JSON line, then finishes correctly
    other          prints an event tagged with another case id, then finishes correctly
    huge           prints a 20 MB line, then finishes correctly
    megaline       prints a 10 MB line that is not JSON, then finishes correctly
    flood-forever  prints events for ever, never `end`
    flood          prints FLOOD_EVENTS events, then finishes correctly
    bulk           prints BULK_BYTES of events of 64 KiB of text each, then finishes correctly
    post           POSTs POST_BYTES to its case's chat completions URL (the body is read and
                   logged by the provider, a 200 stream answers), then finishes correctly
    heads          sends HEAD_REQUESTS requests with a HEADER_BYTES header to its case's chat
                   completions URL (each answered), then finishes correctly
    stderr         writes a marker line to stderr, then finishes correctly
    deep           prints an event nested 100 000 arrays deep, then finishes correctly
    bigint         prints an event with a 5 000-digit integer, then finishes correctly
    surrogate      prints a `thrown` event whose message is a lone surrogate (valid JSON),
                   then finishes correctly
    markup         prints a `thrown` event whose message is MARKUP (rich markup, a link,
                   terminal escapes), then `end`
    whoami         writes `pid=PID` to stderr, takes WHOAMI_S, then finishes correctly

Flags: --no-hello (never greets), --protocol N (greets with that version),
--hello-once PATH (greets only if PATH does not exist, creating it: every restart fails),
--silent-restart PATH (the same, but a restart stays alive and silent instead of exiting),
--ignore-eof (keeps running after stdin closes, until a signal ends it),
--delegate (normal cases are run by the example adapter, with its capabilities),
--hello-name NAME (greets with that name), --sleepers (starts a sleeping child in its
group and one that escapes it, both left running), --slow S (every case waits S seconds
first), --cases-log PATH (appends each case's id to PATH as it starts).
"""

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

FLOOD_EVENTS = 20_000
WHOAMI_S = 0.2  # long enough for cases sent together to be in flight together
BULK_BYTES = 5 * 1024 * 1024
POST_BYTES = 9 * 1024 * 1024  # within the provider's 10 MiB request bound, over a case's 4 MiB
# Their heads: 4.4 MiB in all, within the provider's 16 MiB request log, over a case's 4 MiB.
HEADER_BYTES, HEAD_REQUESTS = 15_000, 300
# Text a terminal must show literally: rich markup, a link, a window title, a clear screen,
# an emoji code, and bidi controls that would reorder what follows (right-to-left override,
# left-to-right isolate).
MARKUP = (
    "[/] [link=https://evil.example]click[/link] \x1b]0;pwned\x07\x1b[2J[bold]"
    " :smile: \u202eevil\u2066"
)
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "python-adapter" / "adapter.py"


def emit(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def finish(case: str) -> None:
    emit({"case": case, "type": "finish", "reason": "stop"})
    emit({"case": case, "type": "end"})


def hang(case: str) -> None:
    if "garbage" in case:
        sys.stdout.write("garbage before a hang\n")
        sys.stdout.flush()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    sys.stderr.write(f"grandchild={sleeper.pid}\n")
    sys.stderr.flush()
    time.sleep(60)


def abandon_sleeper() -> int:
    """A `sleep` that leaves our session and process group; its pid."""
    reader, writer = os.pipe()
    if os.fork() == 0:  # the child: a session of its own, then a grandchild it abandons
        os.setsid()
        grandchild = os.fork()
        if grandchild == 0:
            os.execvp("sleep", ["sleep", "60"])
        os.write(writer, str(grandchild).encode())
        os._exit(0)
    os.close(writer)
    escaped = int(os.read(reader, 32))
    os.wait()  # the child has exited: the grandchild is nobody's child of ours any more
    return escaped


def escape(case: str) -> None:
    escaped = abandon_sleeper()
    sys.stderr.write(f"escaped={escaped}\n")
    sys.stderr.flush()
    if "hang" in case:
        time.sleep(60)
    else:
        finish(case)


def exit_mid_case(case: str) -> None:
    emit({"case": case, "type": "block-start", "index": 0, "block_type": "text"})
    sys.stderr.write("about to die\n")
    sys.stderr.flush()
    os._exit(3)


def garbage(case: str) -> None:
    sys.stdout.write("this is not json {\n")
    finish(case)


def other(case: str) -> None:
    emit({"case": "someone-else", "type": "finish", "reason": "stop"})
    finish(case)


def huge(case: str) -> None:
    padding = "x" * (20 * 1000 * 1000)
    emit({"case": case, "type": "thrown", "message": padding})
    finish(case)


def megaline(case: str) -> None:
    sys.stdout.write("{" + "x" * (10 * 1000 * 1000) + "\n")
    finish(case)


def flood(case: str, count: int | None) -> None:
    line = json.dumps({"case": case, "type": "text-delta", "index": 0, "text": "a"}) + "\n"
    batch = line * 1000
    sent = 0
    while count is None or sent < count:
        sys.stdout.write(batch)
        sent += 1000
    finish(case)


def bulk(case: str) -> None:
    line = json.dumps({"case": case, "type": "text-delta", "index": 0, "text": "b" * 65536})
    for _ in range(BULK_BYTES // len(line) + 1):
        sys.stdout.write(line + "\n")
    finish(case)


def post(message: dict[str, object]) -> None:
    import urllib.request

    body = b'{"model":"m","stream":true,"pad":"' + b"x" * POST_BYTES + b'"}'
    url = f"{message['base_url']}/chat/completions"
    request = urllib.request.Request(url, body, {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        answer.read()
    finish(str(message["case"]))


def heads(message: dict[str, object]) -> None:
    import http.client
    import urllib.parse

    url = urllib.parse.urlsplit(f"{message['base_url']}/chat/completions")
    connection = http.client.HTTPConnection(url.netloc, timeout=30)
    for _ in range(HEAD_REQUESTS):
        headers = {"content-type": "application/json", "x-pad": "h" * HEADER_BYTES}
        connection.request("POST", url.path, b'{"model":"m","stream":true}', headers)
        connection.getresponse().read()
    connection.close()
    finish(str(message["case"]))


def stderr(case: str) -> None:
    sys.stderr.write(f"stderr-marker-{case}\n")
    sys.stderr.flush()
    finish(case)


def deep(case: str) -> None:
    nested = "[" * 100_000 + "]" * 100_000
    sys.stdout.write(f'{{"case": "{case}", "type": "text-delta", "index": {nested}}}\n')
    finish(case)


def bigint(case: str) -> None:
    sys.stdout.write(f'{{"case": "{case}", "type": "usage", "input_tokens": {"9" * 5000}, ')
    sys.stdout.write('"output_tokens": 1}\n')
    finish(case)


def surrogate(case: str) -> None:
    emit({"case": case, "type": "thrown", "message": "\ud800"})  # json.dumps writes \ud800
    finish(case)


def markup(case: str) -> None:
    emit({"case": case, "type": "thrown", "message": MARKUP})
    emit({"case": case, "type": "end"})


def whoami(case: str) -> None:
    sys.stderr.write(f"pid={os.getpid()}\n")
    sys.stderr.flush()
    time.sleep(WHOAMI_S)
    finish(case)


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_adapter", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def handle(message: dict[str, object], example: ModuleType | None) -> None:
    case = str(message["case"])
    if "escape" in case:
        escape(case)
    elif "hang" in case:
        hang(case)
    elif "exit" in case:
        exit_mid_case(case)
    elif "garbage" in case:
        garbage(case)
    elif "other" in case:
        other(case)
    elif "huge" in case:
        huge(case)
    elif "megaline" in case:
        megaline(case)
    elif "flood-forever" in case:
        flood(case, None)
    elif "flood" in case:
        flood(case, FLOOD_EVENTS)
    elif "bulk" in case:
        bulk(case)
    elif "heads" in case:
        heads(message)
    elif "post" in case:
        post(message)
    elif "stderr" in case:
        stderr(case)
    elif "deep" in case:
        deep(case)
    elif "bigint" in case:
        bigint(case)
    elif "surrogate" in case:
        surrogate(case)
    elif "markup" in case:
        markup(case)
    elif "whoami" in case:
        whoami(case)
    elif example is not None:
        example.run_case(message, lambda event: emit({"case": case, **event}))
        emit({"case": case, "type": "end"})
    else:
        finish(case)


def first_start(args: list[str]) -> bool:
    """False once the marker file of --hello-once or --silent-restart exists."""
    for flag in ("--hello-once", "--silent-restart"):
        if flag in args:
            marker = args[args.index(flag) + 1]
            if os.path.exists(marker):
                return False
            open(marker, "w").close()
    return True


def greet(args: list[str], example: ModuleType | None) -> bool:
    if "--no-hello" in args or not first_start(args):
        return False
    protocol = int(args[args.index("--protocol") + 1]) if "--protocol" in args else 1
    capabilities = example.HELLO["capabilities"] if example is not None else {"deltas": True}
    emit(
        {
            "type": "hello",
            "protocol": protocol,
            "name": args[args.index("--hello-name") + 1] if "--hello-name" in args else "hostile",
            "version": "0.0.1",
            "capabilities": capabilities,
        }
    )
    return True


def main() -> None:
    example = load_example() if "--delegate" in sys.argv else None
    if not greet(sys.argv[1:], example):
        sys.stderr.write(f"no hello from me (pid={os.getpid()})\n")
        sys.stderr.flush()
        if "--no-hello" in sys.argv or "--silent-restart" in sys.argv:
            time.sleep(60)  # silent but alive: the suite must time out, not wait
        sys.exit(1)
    if "--sleepers" in sys.argv:
        subprocess.Popen(["sleep", "60"])
        abandon_sleeper()
    slow = float(sys.argv[sys.argv.index("--slow") + 1]) if "--slow" in sys.argv else 0.0
    log = sys.argv[sys.argv.index("--cases-log") + 1] if "--cases-log" in sys.argv else None
    for line in sys.stdin:
        message = json.loads(line)
        if log is not None:
            with open(log, "a") as cases:
                cases.write(f"{message['case']}\n")
        time.sleep(slow)
        handle(message, example)
    if "--ignore-eof" in sys.argv:
        time.sleep(60)


if __name__ == "__main__":
    main()
