"""``arcsm replay FILE [--check]``: replay a recorded journal through the machines.

FILE is a JSONL export (``arcsm journal export``; gzipped when its name ends in ``.gz``), or with
``--journal-file`` a journal file itself (read through a read-only connection). Without ``--check``:
print the phase timeline (one line per transition: seq, time, kind namespace/name, from → to, trigger,
reason) and each decision's effects (type and key), as the machines decide them again, and exit 0. With
``--check``: compare each decision with the recorded one; exit 0 with ``N decisions replayed, all
equal``, exit 1 with the first decision that differs (its seq and where).
Either way exit 1 with what keeps the file from being replayed, in one line.

The machine settings come from the journal's ``settings`` records (the controller journals them at start);
``--controller-namespace`` and ``--listener-image`` only serve decisions that no settings record precedes,
as in a journal recorded before arcsm journaled its settings.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Annotated

import typer

from controller import replaying
from controller.replaying import ReplayError
from statemachines.snapshots import Settings as MachineSettings
from store import exporting, journal, reading, rows, schema
from store.errors import JournalError
from store.records import Record


def load_jsonl(path: Path) -> list[Record]:
    with exporting.open_lines(path) as lines:
        return list(exporting.parse_lines(lines))


async def load_journal(path: Path) -> list[Record]:
    await journal.upgrade_if_older(path)
    db = await schema.connect(path, read_only=True)
    found: list[Record] = []
    try:
        async with contextlib.aclosing(reading.scan(db, after=0)) as pages:
            async for page in pages:
                found.extend(rows.decode(row) for row in page)
    finally:
        await db.close()
    return found


def replay(
    file: Annotated[
        Path,
        typer.Argument(help="A recorded journal: JSONL as `arcsm journal export` writes it (gzipped: .gz)."),
    ],
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Compare with the recorded decisions; exit 1 naming the first that differs."
        ),
    ] = False,
    journal_file: Annotated[
        bool, typer.Option("--journal-file", help="FILE is a journal file (SQLite), not JSONL.")
    ] = False,
    controller_namespace: Annotated[
        str,
        typer.Option(
            help="The controller namespace the recording ran with, for a journal without settings records."
        ),
    ] = MachineSettings.controller_namespace,
    listener_image: Annotated[
        str,
        typer.Option(
            help="The listener image the recording ran with, for a journal without settings records."
        ),
    ] = MachineSettings.listener_image,
) -> None:
    """Replay a recorded journal: fold its records and decide each recorded decision again from the
    journal prefix it read, with the machine settings the journal recorded; print the phase timeline and
    effects, or with --check report the first decision that comes out differently."""
    settings = MachineSettings(controller_namespace=controller_namespace, listener_image=listener_image)
    try:
        if not file.is_file():
            raise ReplayError(f"{file} is not a file")
        if not journal_file and exporting.is_database(file):
            raise ReplayError(f"{file} is a journal file (SQLite), not JSONL: add --journal-file")
        records = asyncio.run(load_journal(file)) if journal_file else load_jsonl(file)
        replayed = replaying.replay(records, settings)
    except (ReplayError, JournalError) as exc:
        typer.echo(f"arcsm replay: {exc}", err=True)
        raise typer.Exit(1) from exc
    except OSError as exc:
        typer.echo(f"arcsm replay: cannot read {file}: {exc.strerror or exc}", err=True)
        raise typer.Exit(1) from exc
    if not check:
        for step in replayed.timeline:
            for line in step.lines():
                typer.echo(line)
        return
    if replayed.mismatch is not None:
        typer.echo(f"arcsm replay: {replayed.summary()}", err=True)
        raise typer.Exit(1)
    typer.echo(replayed.summary())
