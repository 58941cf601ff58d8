"""The ``arcsm`` command line as a user starts it: ``--version``, ``--help`` listing every command, each
command's own help, and each command importing only what it uses.

The installed console script runs in a subprocess that writes the names of the modules it imported when it
exits (``tests.helpers.reporting_modules``). ``arcsm --help`` lists the commands from the table in
``controller.commands.cli`` without importing one; ``arcsm run --help`` and ``arcsm listener --help`` read
their options without the Kubernetes, HTTP or Actions clients; none imports the emulator (``sim``). What a
running listener and a running controller import is checked where they run against the emulated cluster
(``e2e/actions/test_listener_command.py``, ``e2e/controller/test_controller_kubeconfig.py``).
"""

from __future__ import annotations

import importlib.metadata
import inspect
import os
import subprocess
from pathlib import Path

import pytest
from typer.core import TyperGroup

from controller.commands import cli, usagelines
from tests.helpers import ARCSM, modules_in, of_packages, reporting_modules

# The libraries a command that runs the controller or a listener needs, and --help does not.
CLIENTS = ("kubernetes_asyncio", "aiohttp", "httpx", "fastapi", "uvicorn", "aiosqlite", "jwt")


def arcsm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARCSM, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "100", **(env or {})},
    )


def first_paragraph(text: str) -> str:
    return " ".join(inspect.cleandoc(text).split("\n\n")[0].split())


def test_version_prints_the_package_version_and_exits_0() -> None:
    result = arcsm("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"arcsm {importlib.metadata.version('arcsm')}\n"


def test_help_lists_every_command_and_imports_none_of_them(tmp_path: Path) -> None:
    env, report = reporting_modules(tmp_path)
    result = arcsm("--help", env=env)
    assert result.returncode == 0, result.stderr
    listed = result.stdout.split("Commands:", 1)[1]
    for name, entry in cli.ArcsmCommands.lazy.items():
        assert f"\n  {name} " in listed, name
        assert entry.summary.split()[0] in listed, name
    modules = modules_in(report)
    assert "controller.commands.cli" in modules
    command_modules = {entry.module for entry in cli.ArcsmCommands.lazy.values()}
    assert not modules & command_modules, modules & command_modules
    assert not of_packages(modules, "sim", *CLIENTS)


def test_each_listed_line_is_the_first_paragraph_of_the_command_s_own_help() -> None:
    for name, entry in cli.ArcsmCommands.lazy.items():
        command = entry.load(name)
        assert command.name == name
        assert entry.summary == first_paragraph(command.help or ""), name


@pytest.mark.parametrize("name", list(cli.ArcsmCommands.lazy))
def test_a_command_s_help_shows_its_own_options(name: str) -> None:
    result = arcsm(name, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Usage: arcsm {name} [OPTIONS]")
    command = cli.ArcsmCommands.lazy[name].load(name)
    for param in command.params:
        for opt in param.opts:
            if opt.startswith("--"):
                assert opt in result.stdout, (name, opt)


def test_run_help_imports_neither_the_emulator_nor_the_clients(tmp_path: Path) -> None:
    env, report = reporting_modules(tmp_path)
    result = arcsm("run", "--help", env=env)
    assert result.returncode == 0, result.stderr
    assert "--kubeconfig" in result.stdout
    modules = modules_in(report)
    assert "controller.commands.run_command" in modules
    assert not of_packages(modules, "sim", *CLIENTS), of_packages(modules, "sim", *CLIENTS)
    assert "controller.loop.running" not in modules
    # typer coerces an unset flag through pydantic; the group's --help is never unset (LazyGroup).
    assert "pydantic" not in modules


def test_listener_help_imports_neither_the_emulator_nor_the_clients(tmp_path: Path) -> None:
    env, report = reporting_modules(tmp_path)
    result = arcsm("listener", "--help", env=env)
    assert result.returncode == 0, result.stderr
    modules = modules_in(report)
    assert "controller.commands.listener_command" in modules
    assert not of_packages(modules, "sim", "actions", *CLIENTS)


@pytest.mark.parametrize("name", list(cli.ArcsmCommands.lazy))
def test_every_group_of_commands_writes_usage_errors_in_one_line(name: str) -> None:
    """A group that is not a ``OneLineUsageGroup`` would name its parent in an error that carries no
    context (``arcsm journal: option '--journal' requires an argument`` for ``arcsm journal export``)."""
    assert issubclass(cli.ArcsmCommands, usagelines.OneLineUsageGroup)
    pending = [cli.ArcsmCommands.lazy[name].load(name)]
    while pending:
        command = pending.pop()
        if isinstance(command, TyperGroup):
            assert isinstance(command, usagelines.OneLineUsageGroup), command.name
            pending += [command.commands[sub] for sub in command.commands]


@pytest.mark.parametrize("name", list(cli.ArcsmCommands.lazy))
def test_a_log_level_s_default_is_one_of_the_levels_its_help_names(name: str) -> None:
    command = cli.ArcsmCommands.lazy[name].load(name)
    for param in command.params:
        if (param.name or "").endswith("log_level") and isinstance(param.default, str):
            assert param.default in ("debug", "info", "warn", "error"), (name, param.name, param.default)


def test_no_command_s_help_speaks_of_the_project_s_own_documents() -> None:
    """The help names what a user sees (the Outdated story), not the specification's names for it."""
    for name, entry in cli.ArcsmCommands.lazy.items():
        command = entry.load(name)
        assert "seed's" not in f"{entry.summary} {command.help}", name
        assert "§" not in f"{entry.summary} {command.help}", name
