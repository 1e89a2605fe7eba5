"""Every command exits as pytest does: 0 conformant, 1 not, 2 usage or input, 3 no start."""

from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path
from typing import NoReturn

import click
import pytest
from click.testing import CliRunner, Result
from text_case import write_text_case

from conformance.cli import main
from conformance.cli.options import EXIT_CODES_HELP, ExitCode
from fakeprovider.cli import main as fakeprovider_main

SILENT = shlex.join([sys.executable, "-c", "pass"])  # exits before its hello
REFERENCE = shlex.join([sys.executable, "-m", "conformance.adapters.reference"])


@pytest.fixture
def fixture(tmp_path: Path) -> Path:
    return write_text_case(tmp_path)


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(arg) for arg in args])


def test_a_conformant_run_exits_0_and_a_failing_one_1(fixture: Path) -> None:
    assert invoke("replay", fixture).exit_code == ExitCode.CONFORMANT
    mutant = "conformance.adapters.mutants:finish_twice"
    assert invoke("replay", fixture, "--adapter", mutant).exit_code == ExitCode.NOT_CONFORMANT


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--no-such-option"),
        ("run", "--fixtures", "{fixture}", "-k", "nothing-has-this-id"),
        ("run", "--fixtures", "{fixture}", "--baseline", "{fixture}"),
        ("run", "--adapter", "a:b", "--adapter-cmd", "c"),
        ("report", "{fixture}", "--out", "{out}"),
        ("replay", "{bad}"),
        ("validate", "{bad}"),
        ("run", "--fixtures", "{fixture}", "--timeout", "-1"),
        ("run", "--fixtures", "{fixture}", "--idle-timeout", "0"),
        ("run", "--fixtures", "{fixture}", "--transport", "in-process", "--adapter-cmd", REFERENCE),
        ("replay", "{empty}"),
        ("gateway", "--gateway-url", "http://127.0.0.1:9/v1", "--upstream-port", "99999"),
        ("run", "--fixtures", "{fixture}", "--adapter-cmd", " "),
        ("replay", "{fixture}", "--adapter", ""),
    ],
    ids=[
        "option",
        "no-case",
        "baseline",
        "two-adapters",
        "results",
        "replay",
        "validate",
        "negative-timeout",
        "zero-idle-timeout",
        "in-process-subprocess",
        "replay-no-case",
        "port-out-of-range",
        "blank-adapter-cmd",
        "blank-adapter",
    ],
)
def test_usage_and_input_errors_exit_2(
    args: tuple[str, ...], fixture: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("attempts: [{fault: explode}]\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    paths = {"fixture": fixture, "bad": bad, "out": tmp_path / "out", "empty": tmp_path / "empty"}
    result = invoke(*(arg.format(**paths) for arg in args))
    assert result.exit_code == ExitCode.USAGE_ERROR, result.output


@pytest.mark.parametrize("command", ["run", "fuzz", "replay"])
@pytest.mark.parametrize(
    "adapter",
    [("--adapter", "no_such_adapter_module:factory"), ("--adapter-cmd", SILENT)],
    ids=["import", "handshake"],
)
def test_an_adapter_that_does_not_start_exits_3(
    command: str, adapter: tuple[str, str], fixture: Path
) -> None:
    where = {"run": ("--fixtures", fixture), "fuzz": (), "replay": (fixture,)}[command]
    result = invoke(command, *where, *adapter)
    assert result.exit_code == ExitCode.SETUP_ERROR, result.output
    assert "Error: " in result.output


def _commands(group: click.Group) -> list[click.Command]:
    """The group and every command below it, as ``--help`` finds them (``main`` imports
    each command's module only when it is asked for)."""
    found: list[click.Command] = [group]
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, name
        found += _commands(command) if isinstance(command, click.Group) else [command]
    return found


def test_every_command_is_listed() -> None:
    names = {command.name for command in _commands(main)}
    assert {"run", "fuzz", "replay", "mutants", "matrix", "gateway", "list"} <= names


@pytest.mark.parametrize("command", _commands(main), ids=lambda command: command.name)
def test_every_help_lists_the_exit_codes(command: click.Command) -> None:
    with click.Context(command, info_name=command.name) as context:
        text = command.get_help(context)
    assert " ".join(text.split()).endswith(EXIT_CODES_HELP)


# --- fakeprovider: 1 a malformed fixture, 2 a usage error, 3 cannot listen ---------------------


@pytest.mark.parametrize("command", ["serve", "record"])
def test_fakeprovider_port_past_65535_is_a_usage_error(command: str) -> None:
    upstream = ["--upstream", "http://127.0.0.1:9/v1"] if command == "record" else []
    result = CliRunner().invoke(fakeprovider_main, [command, *upstream, "--port", "99999"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def test_fakeprovider_host_that_does_not_resolve_cannot_listen_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unresolved(*_: object, **__: object) -> NoReturn:  # no resolver asked: loopback only
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unresolved)
    args = ["serve", "--host", "no-such-host.invalid", "--allow-remote", "--port", "0"]
    result = CliRunner().invoke(fakeprovider_main, args)
    assert result.exit_code == 3, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("Error: cannot listen on no-such-host.invalid:0: "), last
    assert "Unknown error" not in last  # a gaierror's errno is no errno os.strerror knows


def test_validate_names_an_empty_recording_and_why(fixture: Path) -> None:
    cut_short = fixture.parent / "recorded-001.yaml"
    cut_short.write_bytes(b"")
    result = CliRunner().invoke(fakeprovider_main, ["validate", str(fixture.parent)])
    assert result.exit_code == 1, result.output
    assert result.output.strip() == (
        f"{cut_short}:1: no scenario: the file is empty or only comments "
        "(as a save cut short leaves it)"
    )
