"""``fakeprovider``: serve scenarios on loopback, show their bytes, validate fixtures."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import click

from .errors import FakeProviderError
from .files import unwritable_reason
from .fixtures import FixtureError, load_fixture, load_fixtures, validate_fixtures
from .follow_up import answer_attempt
from .hosts import is_loopback
from .interrupts import Interruption
from .listening import ListeningServer
from .playback import DEFAULT_MODEL_PREFIX, SCENARIO_HEADER
from .proxy import DEFAULT_IDLE_TIMEOUT_S, RecordingProxy, Saved
from .recording import DEFAULT_MIN_PAUSE_MS
from .redaction import redacted_url
from .registry import ScenarioRegistry
from .scenario import FollowUp, Scenario
from .server import FakeProviderServer
from .stopping import exit_interrupted, stops_on_signals
from .wire import EncodeError, TranscriptLine, attempt_transcript, escape_bytes

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:streamconform:fixture:scenario"
"""Names the schema; a URN, since the schema is printed by the installed version, not hosted."""


@click.group()
@click.version_option(package_name="streamconform")
def main() -> None:
    """A scriptable fake SSE provider: OpenAI chat-completions and Anthropic Messages."""


EXIT_COULD_NOT_START = 3
"""The exit status when a server cannot listen (a port in use), as ``conformance``'s."""


class _CouldNotListenError(FakeProviderError):
    """A server could not bind its address (a port in use, an address not this machine's)."""


F = TypeVar("F", bound=Callable[..., Any])


def _port_option(default: int) -> Callable[[F], F]:
    """``--port``: a TCP port (0 picks a free one); past 65535 is a usage error, exit 2."""
    return click.option(
        "--port",
        type=click.IntRange(0, 65535),
        default=default,
        show_default=True,
        help="Port; 0 picks a free one.",
    )


def _binding_options(command: F) -> F:
    """``--host`` and ``--allow-remote``, shared by the commands that listen."""
    command = click.option(
        "--allow-remote",
        is_flag=True,
        help="Allow a --host that is not loopback (0.0.0.0, a LAN address or a name): "
        "other machines can then reach the server, which has no authentication.",
    )(command)
    return click.option(
        "--host",
        default="127.0.0.1",
        show_default=True,
        help="Address to bind; one that is not loopback needs --allow-remote.",
    )(command)


def _check_binding(host: str, allow_remote: bool) -> None:
    """Refuse a non-loopback address without --allow-remote; warn with it."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise click.BadParameter(
            f"{host!r} is not a loopback address: other machines could reach the server, "
            "which has no authentication; add --allow-remote to listen there anyway",
            param_hint="'--host'",
        )
    click.echo(
        f"warning: listening on {host}, which other machines may reach; the server has no "
        "authentication",
        err=True,
    )


@contextlib.asynccontextmanager
async def _listening(server: ListeningServer, host: str, port: int) -> AsyncIterator[None]:
    """``server`` started and, at the end, stopped; _CouldNotListenError if it cannot bind."""
    try:
        await server.start()
    except OSError as error:
        await server.stop()
        shown = f"[{host}]" if ":" in host else host
        # asyncio words it "error while attempting to bind on address ...: ..."; the
        # errno's own text is the reason, the address is said once.
        # A name that does not resolve is a gaierror, whose errno os.strerror does not know.
        reason = (
            error.strerror
            if isinstance(error, socket.gaierror) or not error.errno
            else os.strerror(error.errno)
        ) or str(error)
        raise _CouldNotListenError(f"cannot listen on {shown}:{port}: {reason}") from None
    try:
        yield
    finally:
        await server.stop()


def _run_until_interrupted(
    serving: Coroutine[Any, Any, None], interruption: Interruption, kept: Callable[[], str]
) -> None:
    """Serve until SIGINT or SIGTERM, then end with one line (``kept()``: what was saved)
    and 130 or 143. The signals are caught before the server announces itself, so one sent
    as soon as that line is read is not lost; explicitly, so that a SIGINT ignored by the
    parent (a shell's background job) stops it too, and SIGTERM stops the server (a
    recording proxy saves the exchanges in flight) rather than end the process."""
    try:
        with interruption.deferred():
            asyncio.run(serving)
    except _CouldNotListenError as error:
        click.echo(f"Error: {error}", err=True)
        sys.exit(EXIT_COULD_NOT_START)
    assert interruption.signal is not None  # serving ends on a signal only
    exit_interrupted(interruption.signal, kept())


@main.command()
@_binding_options
@_port_option(8765)
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="A Host name the control API also answers to (repeatable; '*' for any). It answers "
    "to localhost, IP addresses and the --host name: a defence against DNS rebinding.",
)
@click.option(
    "--fixtures",
    "fixture_dirs",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Fixture file or directory to register (repeatable).",
)
@click.option(
    "--model-prefix",
    default=DEFAULT_MODEL_PREFIX,
    show_default=True,
    help="At /v1/chat/completions, a request whose model is PREFIX<id> plays scenario <id>.",
)
@click.option(
    "--coalesce",
    is_flag=True,
    help="Load mode: send each run of writes that no pause parts as one write. The same "
    "bytes and pauses, but not the scenario's write boundaries: for load tests, not for "
    "conformance cases.",
)
@stops_on_signals
def serve(
    host: str,
    allow_remote: bool,
    port: int,
    allowed_hosts: tuple[str, ...],
    fixture_dirs: tuple[Path, ...],
    model_prefix: str,
    coalesce: bool,
    interruption: Interruption,
) -> None:
    """Serve scenarios; each answers at http://HOST:PORT/{id}/v1/chat/completions, or
    /{id}/v1/messages for an anthropic-messages scenario (/v1 may be left out).

    A gateway with one upstream base URL (http://HOST:PORT/v1) selects a scenario with an
    x-scenario-id header or a model of PREFIX<id>. The control API (/_scenarios) has no
    authentication. Exit status 3 if the port is in use; SIGINT or SIGTERM stops it, exit
    status 130 or 143.
    """
    _check_binding(host, allow_remote)
    registry = ScenarioRegistry(_load_or_exit(fixture_dirs))
    server = FakeProviderServer(
        registry,
        host=host,
        port=port,
        model_prefix=model_prefix,
        allowed_hosts=allowed_hosts,
        coalesce=coalesce,
    )
    serving = _serve(server, port, interruption)
    _run_until_interrupted(serving, interruption, lambda: "stopped serving")


async def _serve(server: FakeProviderServer, port: int, interruption: Interruption) -> None:
    async with _listening(server, server.host, port):
        root = server.root_url
        click.echo(f"fakeprovider listening on {root}")
        if server.coalesce:
            click.echo("load mode: each run of writes between pauses is sent as one write")
        click.echo(f"control API: {root}/_scenarios")
        click.echo(
            f"shared base URL: {root}/v1 "
            f"(model {server.model_prefix}<id> or header {SCENARIO_HEADER}: <id>)"
        )
        for scenario_id in server.registry.ids():
            click.echo(f"  {scenario_id}: {server.sdk_base_url(scenario_id)}")
        # What start-up made (modules, the loaded scenarios) lives as long as the process:
        # kept out of the collector, a full collection no longer walks it all under load.
        gc.freeze()
        await interruption.signalled()


@main.command()
@click.option(
    "--upstream",
    required=True,
    help="Base URL: a request's path is appended to its path; no other host is contacted.",
)
@_binding_options
@_port_option(8766)
@click.option(
    "--out",
    "out_dir",
    default=Path("recorded"),
    show_default=True,
    type=click.Path(path_type=Path),
    help="Directory for the fixtures and .sse dumps.",
)
@click.option(
    "--name",
    default="recorded",
    show_default=True,
    help="Fixture id prefix: letters, digits, '.', '_', '-'.",
)
@click.option(
    "--min-pause-ms",
    default=DEFAULT_MIN_PAUSE_MS,
    show_default=True,
    help="Shorter waits between reads are not kept as pauses.",
)
@click.option(
    "--idle-timeout",
    default=DEFAULT_IDLE_TIMEOUT_S,
    show_default=True,
    help="Seconds without an upstream byte before the body is recorded as a stall.",
)
@stops_on_signals
def record(
    upstream: str,
    host: str,
    allow_remote: bool,
    port: int,
    out_dir: Path,
    name: str,
    min_pause_ms: float,
    idle_timeout: float,
    interruption: Interruption,
) -> None:
    """Record a real upstream: a loopback proxy that saves every answer as a fixture.

    Point a client at http://HOST:PORT (plus the path it would use upstream, e.g. /v1);
    each request goes to UPSTREAM's host with the path appended to UPSTREAM's path, and
    its answer is relayed as it arrives and saved as OUT/NAME-NNN.yaml (reads, pauses,
    ending, provenance) with the raw body as OUT/NAME-NNN.sse, numbered after the files
    already there. A request to .../messages is recorded as an anthropic-messages fixture,
    one to .../responses as an openai-responses one, each SSE event an event step (its
    event: line and sequence_number kept as sent, an event sent without a number marked
    numbered: false) wherever that replays the same bytes. Credentials are redacted in what
    is saved: secret-looking headers (x-api-key, authorization, ...) and query parameters,
    and the user:password of a URL.
    An answer the client leaves, or that is in flight at SIGINT/SIGTERM, is saved as far as
    it went, marked partial; the signal ends it with exit status 130 or 143.
    Exit status 3 if the port is in use.
    """
    _check_binding(host, allow_remote)
    unwritable = unwritable_reason(out_dir, directory=True)
    if unwritable is not None:  # before listening: a client's answers would be lost
        click.echo(f"fakeprovider record: --out {out_dir}: {unwritable}", err=True)
        sys.exit(2)
    saves: list[Saved] = []
    try:
        proxy = RecordingProxy(
            upstream,
            out_dir,
            host=host,
            port=port,
            name=name,
            min_pause_ms=min_pause_ms,
            idle_timeout_s=idle_timeout,
            on_saved=lambda saved: _report_saved(saved, saves),
        )
    except FakeProviderError as error:
        click.echo(f"fakeprovider record: {error}", err=True)
        sys.exit(2)

    def kept() -> str:
        return f"{len(saves)} answer(s) saved in {out_dir}/"

    _run_until_interrupted(_record(proxy, port, interruption), interruption, kept)


async def _record(proxy: RecordingProxy, port: int, interruption: Interruption) -> None:
    async with _listening(proxy, proxy.host, port):
        upstream = redacted_url(str(proxy.upstream))
        click.echo(f"fakeprovider record listening on {proxy.root_url} -> {upstream}")
        click.echo(f"saving to {proxy.out_dir}/")
        await interruption.signalled()


def _report_saved(saved: Saved, saves: list[Saved]) -> None:
    saves.append(saved)
    status = "no response" if saved.status is None else f"HTTP {saved.status}"
    partial = f" (partial: {saved.partial})" if saved.partial else ""
    if saved.fixture is None:
        click.echo(f"{status}: {saved.dump} (no fixture: {saved.problem}){partial}", err=True)
    else:
        click.echo(f"{status}: {saved.fixture}{partial}")


@main.command()
@click.argument("fixture", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--attempt", "number", type=int, default=None, help="Only this attempt (1-based).")
@click.option("--raw", is_flag=True, help="Write the body bytes unescaped (needs --attempt).")
def show(fixture: Path, number: int | None, raw: bool) -> None:
    """Print the exact bytes a fixture sends: one write per line, escaped.

    Each byte is escaped once: \\n, \\r and \\t are LF, CR and tab, \\xNN any other
    byte outside printable ASCII, and \\\\ is one backslash (so a JSON escape such as \\n on
    the wire shows as \\\\n). --raw writes the body as it is.
    """
    scenario = _load_or_exit([fixture])[0]
    if raw and number is None:
        raise click.UsageError("--raw writes one attempt's body; give --attempt N")
    numbers = [number] if number is not None else range(1, len(scenario.attempts) + 1)
    for n in numbers:
        if not 1 <= n <= len(scenario.attempts):
            raise click.BadParameter(f"the scenario has {len(scenario.attempts)} attempt(s)")
        try:
            _show_attempt(scenario, n, raw)
        except EncodeError as error:
            raise click.ClickException(f"{fixture}: attempt {n}: {error}") from None
    if scenario.follow_up is not None and number is None:
        _show_follow_up(scenario, scenario.follow_up)


def _show_attempt(scenario: Scenario, number: int, raw: bool) -> None:
    lines = attempt_transcript(scenario.attempt(number), scenario.dialect)
    if raw:
        body = [line.data for line in lines if line.label not in ("head", "end")]
        sys.stdout.buffer.write(b"".join(body))
        sys.stdout.buffer.flush()
        return
    click.echo(f"# attempt {number}")
    _show_lines(lines)


def _show_follow_up(scenario: Scenario, follow_up: FollowUp) -> None:
    """What the client is handed for the next request, and the answer it gets."""
    handed = follow_up.model_dump(mode="json", exclude={"answer"}, exclude_none=True)
    # ensure_ascii: fixture strings are shown escaped, as the bytes are.
    click.echo(f"# follow-up: the client sends {json.dumps(handed, ensure_ascii=True)}")
    click.echo("# the answer to the next request")
    _show_lines(
        attempt_transcript(answer_attempt(scenario.dialect, follow_up.answer), scenario.dialect)
    )


def _show_lines(lines: list[TranscriptLine]) -> None:
    for line in lines:
        delay = f" after {line.delay_ms:g} ms" if line.delay_ms else ""
        if line.label == "end":
            click.echo(f"<{line.ending}{delay}>")
        elif line.label in ("head", "body"):
            click.echo(f"{line.label}  {escape_bytes(line.data)}")
        else:
            click.echo(f"write {line.label}{delay}  {escape_bytes(line.data)}")


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
def validate(paths: tuple[Path, ...]) -> None:
    """Check every fixture below PATHS; exit 1 on any problem.

    Warnings (a plain scalar cut short by ' #') are printed too, and do not change the exit
    code.
    """
    fixtures, problems = validate_fixtures(paths)
    for problem in [*problems, *(w for fixture in fixtures for w in fixture.warnings)]:
        click.echo(str(problem), err=True)
    if problems:
        sys.exit(1)
    click.echo(f"{len(fixtures)} fixture(s) valid")
    click.echo("`conformance validate` also checks each expect block against the oracle")


@main.command()
def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of a fixture (a scenario), for editors."""
    schema = {"$schema": JSON_SCHEMA_DIALECT, "$id": SCHEMA_ID, **Scenario.model_json_schema()}
    click.echo(json.dumps(schema, indent=2))


def _load_or_exit(paths: tuple[Path, ...] | list[Path]) -> list[Scenario]:
    try:
        if len(paths) == 1 and paths[0].is_file():
            return [load_fixture(paths[0])]
        return load_fixtures(paths)
    except FixtureError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        sys.exit(1)
