"""A typer group whose commands are imported when they are used, so a command pays only for its own imports.

``arcsm run`` needs the controller and ``arcsm listener`` the Actions client, while ``arcsm demo`` and
``arcsm sim`` bring the whole emulator; importing every command to start any of them cost every process,
each listener pod included, a second and tens of MB. Here a group is given a table instead of commands:

    Lazy(module="controller.commands.run_command", attribute="run", summary="Run the controller: …")

``attribute`` names the command's function (declared with typer's options, as any typer command) or a
``typer.Typer`` of subcommands. A command's module is imported when the command is looked up to run or to
show its own help (``arcsm run …``, ``arcsm run --help``), and only then. The group's help lists every
command from the table's ``summary`` without importing one; a test keeps each summary equal to the
first paragraph of its command's own help, so the option declarations and the help stay in one place,
the command's module.

It is click's lazy group (click's documentation, "Lazily Loading Subcommands") on typer's
``TyperGroup``, with the one thing click's recipe leaves out: listing the commands for ``--help`` reads
the table, since click and typer look every listed command up to print its one line.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import typer
from typer.core import MarkupMode, TyperCommand, TyperGroup, TyperOption

if TYPE_CHECKING:
    # typer's own copy of click: the types TyperGroup's methods are declared with.
    from typer._click import Command, Context, HelpFormatter


@dataclass(frozen=True)
class Lazy:
    """Where a command is (``module``, and its function or ``typer.Typer`` there) and its one line."""

    module: str
    attribute: str
    summary: str

    def load(self, name: str, *, rich_markup_mode: MarkupMode = None) -> Command:
        """Import the module and build the command, named ``name``; a function's help is formatted in
        ``rich_markup_mode`` (a ``typer.Typer`` keeps its own)."""
        target = getattr(importlib.import_module(self.module), self.attribute)
        if not isinstance(target, typer.Typer):
            single = typer.Typer(add_completion=False, rich_markup_mode=rich_markup_mode)
            single.command(name)(target)
            target = single
        command = typer.main.get_command(target)
        command.name = name
        return command


class Commands(MutableMapping[str, "Command"]):
    """A group's commands by name: the table's, each imported on its first lookup, then any added.

    Names, ``in`` and iteration read the table and import nothing; a lookup (``commands[name]``,
    ``.get``) returns the real command.
    """

    def __init__(
        self, table: Mapping[str, Lazy], added: Mapping[str, Command], *, rich_markup_mode: MarkupMode
    ) -> None:
        self._table = table
        self._loaded = dict(added)
        self._markup: MarkupMode = rich_markup_mode

    def __getitem__(self, name: str) -> Command:
        if name not in self._loaded:
            self._loaded[name] = self._table[name].load(name, rich_markup_mode=self._markup)
        return self._loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError(f"the command {name!r} cannot be removed")

    def __contains__(self, name: object) -> bool:
        return name in self._table or name in self._loaded

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self._table), **self._loaded})

    def __len__(self) -> int:
        return len(self._table.keys() | self._loaded.keys())

    def listed(self, name: str) -> Command | None:
        """What a listing shows for ``name``: the command if it is loaded, else a stand-in with its
        summary (never run: a lookup loads the real one first)."""
        if name in self._loaded:
            return self._loaded[name]
        entry = self._table.get(name)
        return None if entry is None else TyperCommand(name, short_help=entry.summary, help=entry.summary)


class LazyGroup(TyperGroup):
    """A ``TyperGroup`` whose ``commands`` are ``Commands`` over the table ``lazy`` (a subclass sets it:
    name → ``Lazy``, in listing order). While the group writes its own help, ``get_command`` answers
    from ``Commands.listed``, so ``--help`` imports no command."""

    lazy: ClassVar[Mapping[str, Lazy]] = {}
    _listing = False

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = Commands(self.lazy, self.commands, rich_markup_mode=self.rich_markup_mode)

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.commands)

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        option = super().get_help_option(ctx)
        if option is not None:
            # Unset, a flag is None, which typer coerces to a bool through pydantic: importing it is
            # about 0.1 s of every ``arcsm COMMAND`` whose group --help was not asked for. False is the
            # same answer without it.
            option.default = False
        return option

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if self._listing and isinstance(self.commands, Commands):
            return self.commands.listed(cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
