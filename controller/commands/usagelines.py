"""Usage errors in one line on stderr, exit status 2:

    arcsm run: no such option: --bogus (see arcsm run --help)

click (which typer carries inside itself) shows a usage error as a block: the command's usage line, a
``Try '... --help'`` line, a blank line and ``Error: ...``. arcsm's other errors are one line naming the
command, so a bad option, a missing argument, a value of the wrong type or an unknown command is too.
``OneLineUsageGroup`` is a typer group whose two steps that parse and dispatch a command line
(``make_context``: its own options; ``invoke``: the subcommand's name, its options, its run) print a
usage error raised in them as one line before click would print its block. Every group of ``arcsm`` is
one, so the errors of every subcommand pass through one of them.

A usage error is recognised by public names only: typer's exceptions derive from
``typer.TyperException``, and click's usage errors are those whose ``exit_code`` is 2. Most carry the
context of the command they are about (``ctx``); for those that do not (an option missing its value)
the group names the command it was parsing. One of them is not an error: a group given nothing
(``arcsm``, ``arcsm journal``) raises its own help that way, and that help is shown as click shows it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    # typer's own copy of click: the types TyperGroup's methods are declared with.
    from typer._click import Context

USAGE = 2  # the exit status of click's usage errors


class OneLineUsageGroup(TyperGroup):
    """A typer group whose usage errors, and those of the commands under it, are one line on stderr."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Context | None = None, **extra: Any
    ) -> Context:
        def parsing() -> str:
            above = parent.command_path if parent is not None else None
            return " ".join(filter(None, [above, info_name])) or "arcsm"

        with one_line_usage_errors(parsing):
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: Context) -> Any:
        def parsing() -> str:
            return " ".join(filter(None, [ctx.command_path, ctx.invoked_subcommand]))

        with one_line_usage_errors(parsing):
            return super().invoke(ctx)


@contextlib.contextmanager
def one_line_usage_errors(parsing: Callable[[], str]) -> Iterator[None]:
    """Print a usage error raised in the block as one line on stderr and exit with status 2. The line
    names the command the error's context is about, else the one ``parsing()`` names."""
    try:
        yield
    except typer.TyperException as error:
        if error.exit_code != USAGE or _is_help(error):
            raise
        context = getattr(error, "ctx", None)
        path = context.command_path if context is not None else parsing()
        typer.echo(f"{path}: {_sentence(error.format_message())} (see {path} --help)", err=True)
        raise typer.Exit(USAGE) from None


def _is_help(error: typer.TyperException) -> bool:
    """click asks for a group's help when it is given nothing (``no_args_is_help``) by raising the help."""
    context = getattr(error, "ctx", None)
    return context is not None and error.format_message() == context.get_help()


def _sentence(message: str) -> str:
    """click's message as part of a line: one line, no closing full stop, lower case first unless the
    first word is upper case (``No such option: --bogus.`` → ``no such option: --bogus``)."""
    text = " ".join(part.strip() for part in message.splitlines() if part.strip()).removesuffix(".")
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]
    return text
