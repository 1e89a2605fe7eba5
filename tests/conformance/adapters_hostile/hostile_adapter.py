"""A subprocess adapter that misbehaves on demand, for tests of SubprocessAdapterSession.

Stdlib only. It never makes HTTP requests. A case whose id contains one of these words gets
that misbehaviour; any other case gets a correct `finish` + `end` (the echo adapter):

    hang           spawns a sleeping grandchild (sharing our pipes), then never answers;
                   with "garbage" too, it first prints a non-JSON line
    exit           writes to stderr, then exits with code 3 mid-case
    garbage        prints a non-JSON line, then finishes correctly
    other          prints an event tagged with another case id, then finishes correctly
    huge           prints a 20 MB line, then finishes correctly
    flood-forever  prints events for ever, never `end`
    flood          prints FLOOD_EVENTS events, then finishes correctly
    stderr         writes a marker line to stderr, then finishes correctly

Flags: --no-hello (never greets), --protocol N (greets with that version),
--hello-once PATH (greets only if PATH does not exist, creating it: every restart fails),
--ignore-eof (keeps running after stdin closes, until a signal ends it).
"""

import json
import os
import subprocess
import sys
import time

FLOOD_EVENTS = 20_000


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


def flood(case: str, count: int | None) -> None:
    line = json.dumps({"case": case, "type": "text-delta", "index": 0, "text": "a"}) + "\n"
    batch = line * 1000
    sent = 0
    while count is None or sent < count:
        sys.stdout.write(batch)
        sent += 1000
    finish(case)


def stderr(case: str) -> None:
    sys.stderr.write(f"stderr-marker-{case}\n")
    sys.stderr.flush()
    finish(case)


def handle(case: str) -> None:
    if "hang" in case:
        hang(case)
    elif "exit" in case:
        exit_mid_case(case)
    elif "garbage" in case:
        garbage(case)
    elif "other" in case:
        other(case)
    elif "huge" in case:
        huge(case)
    elif "flood-forever" in case:
        flood(case, None)
    elif "flood" in case:
        flood(case, FLOOD_EVENTS)
    elif "stderr" in case:
        stderr(case)
    else:
        finish(case)


def greet(args: list[str]) -> bool:
    if "--no-hello" in args:
        return False
    if "--hello-once" in args:
        marker = args[args.index("--hello-once") + 1]
        if os.path.exists(marker):
            return False
        open(marker, "w").close()
    protocol = int(args[args.index("--protocol") + 1]) if "--protocol" in args else 1
    emit(
        {
            "type": "hello",
            "protocol": protocol,
            "name": "hostile",
            "version": "0.0.1",
            "capabilities": {"deltas": True},
        }
    )
    return True


def main() -> None:
    if not greet(sys.argv[1:]):
        sys.stderr.write(f"no hello from me (pid={os.getpid()})\n")
        sys.stderr.flush()
        if "--no-hello" in sys.argv:
            time.sleep(60)  # silent but alive: the suite must time out, not wait
        sys.exit(1)
    for line in sys.stdin:
        handle(json.loads(line)["case"])
    if "--ignore-eof" in sys.argv:
        time.sleep(60)


if __name__ == "__main__":
    main()
