"""``arcsm journal``: export a journal to JSONL, import one, and verify a journal file.

Every failure is one line on stderr naming what is wrong, with exit status 1 (a usage error: 2).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from controller.commands.usagelines import OneLineUsageGroup
from store import exporting, verifying
from store.errors import JournalCorrupt, JournalError

T = TypeVar("T")

app = typer.Typer(
    cls=OneLineUsageGroup,  # a usage error is one line, as for every arcsm command (usagelines)
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain help, as the rest of arcsm's (controller.commands.cli)
    help="Export, import and verify the journal (the SQLite file arcsm records every event and decision in).",
)

JournalPath = Annotated[Path, typer.Option("--journal", help="The journal file.", dir_okay=False)]


def _run(command: str, work: Coroutine[Any, Any, T]) -> T:
    try:
        return asyncio.run(work)
    except JournalCorrupt as exc:
        where = f"damaged at {exc}" if exc.seq is not None else f"damaged: {exc}"
        typer.echo(f"arcsm journal {command}: journal {where}", err=True)
    except (JournalError, OSError) as exc:
        typer.echo(f"arcsm journal {command}: {exc}", err=True)
    raise typer.Exit(1)


@app.command("export")
def export_(
    journal: JournalPath,
    since: Annotated[int, typer.Option("--since", help="Only records after this seq.", min=0)] = 0,
) -> None:
    """Write the journal's records to stdout as JSONL, one record per line, oldest first."""
    try:
        _run("export", exporting.export(journal, sys.stdout, after=since))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep the exit flush from failing too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


@app.command("import")
def import_(
    journal: JournalPath,
    file: Annotated[
        str,
        typer.Argument(
            help="A JSONL file of records (gzipped if it ends in .gz), or - for stdin.", metavar="FILE|-"
        ),
    ],
) -> None:
    """Append the records of a JSONL file (as `export` writes them) to the journal, creating it if needed.

    Records keep their seq and time; the import is one transaction, so nothing is written unless all is,
    and a failed import into a new journal leaves no file behind.
    """
    if file == "-":
        imported = _run("import", exporting.import_lines(journal, sys.stdin.buffer))
    else:
        try:
            with exporting.open_lines(Path(file)) as lines:
                imported = _run("import", exporting.import_lines(journal, lines))
        except JournalError as exc:
            typer.echo(f"arcsm journal import: {exc}", err=True)
            raise typer.Exit(1) from exc
        except OSError as exc:
            typer.echo(f"arcsm journal import: cannot read {file}: {exc.strerror or exc}", err=True)
            raise typer.Exit(1) from exc
    span = f" (seq {imported.first_seq}–{imported.last_seq})" if imported.records else ""
    typer.echo(f"imported {imported.records} records{span} into {journal}")


@app.command()
def verify(journal: JournalPath) -> None:
    """Check SQLite's integrity, every record's checksum and the sequence's continuity."""
    typer.echo(_run("verify", verifying.verify(journal)).summary())
