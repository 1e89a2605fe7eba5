"""Every command exits as pytest does: 0 conformant, 1 not, 2 usage or input, 3 no start."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from text_case import write_text_case

from conformance.cli import main
from conformance.cli.options import EXIT_CODES_HELP, ExitCode

SILENT = shlex.join([sys.executable, "-c", "pass"])  # exits before its hello


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
    ],
    ids=["option", "no-case", "baseline", "two-adapters", "results", "replay", "validate"],
)
def test_usage_and_input_errors_exit_2(
    args: tuple[str, ...], fixture: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("attempts: [{fault: explode}]\n", encoding="utf-8")
    paths = {"fixture": fixture, "bad": bad, "out": tmp_path / "out"}
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
