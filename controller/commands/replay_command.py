"""``arcsm replay FILE [--check]``: replay a recorded journal through the machines.

FILE is a JSONL export (``arcsm journal export``; gzipped when its name ends in ``.gz``), or with
``--journal-file`` a journal file itself (read through a read-only connection). Without ``--check``:
print the phase timeline (one line per transition: seq, time, kind namespace/name, from → to, trigger,
reason) and each decision's effects (type and key), as the machines decide them again, and exit 0. The
time is the recorded decision record's, shown as ``arcsm history`` shows the same seq
(``clocks.shown_time``). With
``--check``: compare each decision with the recorded one; exit 0 with ``N decisions replayed, all
equal``, exit 1 with the first decision that differs (its seq and where). With ``--diff``: compare them
too, and print per object the first decision that differs, with the transitions and effects recorded
and replayed and the first difference (``replaydiffs``; ``--json``: one JSON document); exit 1 if any
object differs, 0 with ``N decisions replayed, all equal``.
Either way exit 1 with what keeps the file from being replayed, in one line (and nothing on stdout).

The machine settings come from the journal's ``settings`` records (the controller journals them at start);
``--controller-namespace`` and ``--listener-image`` only serve decisions that no settings record precedes,
as in a journal recorded before arcsm journaled its settings.

The records stream through ``replaying.Replay`` in two passes over FILE: the first finds how far ahead of
the seq it read a decision lies (for a journal file SQLite answers it from the type index; in an export
only the lines that mention a decision are parsed), the second folds and decides. Memory follows the
objects alive and that distance, not the journal's length; the timeline waits in a temporary file until
the whole journal has replayed.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Annotated

import typer

from controller.loop import replaydiffs, replaying
from controller.loop.replaying import Mismatch, ReplayError, Step
from statemachines.snapshots import Settings as MachineSettings
from store import exporting, journal, jsontext, reading, rows, schema, upcasting
from store.errors import JournalError
from store.records import Record, RecordType

# The record types whose body text replay compares (the source's text, read once).
COMPARED = frozenset({RecordType.DECISION, RecordType.EFFECT})
SPOOLED = 1 << 20  # timeline characters kept in memory before the temporary file goes to disk

Settled = Callable[[list[tuple[Step, Mismatch | None]]], None]


def load_jsonl(path: Path) -> list[Record]:
    with exporting.open_lines(path) as lines:
        return list(exporting.parse_lines(lines))


def _decisions_of(lines: Iterable[bytes]) -> Iterator[tuple[int, object]]:
    """The first pass over export lines: each decision's seq and the seq its body says it read. Only a
    line that mentions a decision is parsed, and only its seqs are read (no record is built); what cannot
    be read is left to the second pass to report (it stops there too)."""
    with contextlib.suppress(OSError, EOFError, zlib.error, gzip.BadGzipFile):
        for line in lines:
            if b'"decision"' not in line:
                continue
            try:
                data = upcasting.upcast(jsontext.loads(line))
                if data["type"] == RecordType.DECISION.value and isinstance(data["seq"], int):
                    yield data["seq"], data["body"].get("seq")
            except (ValueError, KeyError, TypeError, AttributeError):
                continue


def replay_jsonl(path: Path, replay: Callable[[int], replaying.Replay], settled: Settled) -> None:
    """Stream the export at ``path`` through the replay ``replay(reach)`` makes."""
    with exporting.open_lines(path) as lines:
        reach = replaying.reach_of(_decisions_of(lines))
    replayer = replay(reach)
    with exporting.open_lines(path) as lines:
        for record, text in exporting.parse_lines_with_bodies(lines, bodies=COMPARED):
            settled(replayer.feed(record, text))
    settled(replayer.end())


async def replay_journal(path: Path, replay: Callable[[int], replaying.Replay], settled: Settled) -> None:
    """Stream the journal file at ``path`` (its records up to the last one when the replay starts)."""
    await journal.upgrade_if_older(path)
    db = await schema.connect(path, read_only=True)
    try:
        last, reach = await reading.decision_reach(db)
        replayer = replay(reach)
        async with contextlib.aclosing(reading.scan(db, after=0, through=last)) as pages:
            async for page in pages:
                for row in page:
                    record = rows.decode(row)
                    settled(replayer.feed(record, row[8] if record.type in COMPARED else None))
        settled(replayer.end())
    finally:
        await db.close()


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
    diff: Annotated[
        bool,
        typer.Option(
            "--diff",
            help="Per object, the first decision the installed machines take differently (transitions, "
            "effects); exit 1 if any. How to check an upgrade against a recorded production journal.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --diff: one JSON document.")] = False,
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
    effects, or with --check report the first decision that comes out differently (with --diff, the
    first for each object, and what differs)."""
    if check and diff:
        typer.echo("arcsm replay: --check and --diff compare the same way; give one of them", err=True)
        raise typer.Exit(2)
    if as_json and not diff:
        typer.echo("arcsm replay: --json goes with --diff", err=True)
        raise typer.Exit(2)
    settings = MachineSettings(controller_namespace=controller_namespace, listener_image=listener_image)
    made: list[replaydiffs.DiffingReplay] = []
    mismatches: list[Mismatch] = []
    diffs = replaydiffs.Diffs()

    def start(reach: int) -> replaying.Replay:
        made.append(replaydiffs.DiffingReplay(settings, reach=reach))
        return made[-1]

    with tempfile.SpooledTemporaryFile(SPOOLED, mode="w+", encoding="utf-8") as timeline:

        def settled(steps: list[tuple[Step, Mismatch | None]]) -> None:
            if diff:
                diffs.settle(made[-1], steps)
                return
            for step, mismatch in steps:
                if check:
                    if mismatch is not None and not mismatches:
                        mismatches.append(mismatch)
                else:
                    timeline.writelines(line + "\n" for line in step.lines())

        try:
            if not file.is_file():
                raise ReplayError(f"{file} is not a file")
            if not journal_file and exporting.is_database(file):
                raise ReplayError(f"{file} is a journal file (SQLite), not JSONL: add --journal-file")
            if journal_file:
                asyncio.run(replay_journal(file, start, settled))
            else:
                replay_jsonl(file, start, settled)
        except (ReplayError, JournalError) as exc:
            typer.echo(f"arcsm replay: {exc}", err=True)
            raise typer.Exit(1) from exc
        except OSError as exc:
            typer.echo(f"arcsm replay: cannot read {file}: {exc.strerror or exc}", err=True)
            raise typer.Exit(1) from exc
        if diff:
            _report(diffs, made[-1].decisions, as_json=as_json)
            return
        if not check:
            _copy(timeline)
            return
    replayed = replaying.Replayed(decisions=made[-1].decisions, mismatch=next(iter(mismatches), None))
    if replayed.mismatch is not None:
        typer.echo(f"arcsm replay: {replayed.summary()}", err=True)
        raise typer.Exit(1)
    typer.echo(replayed.summary())


def _report(diffs: replaydiffs.Diffs, decisions: int, *, as_json: bool) -> None:
    """Print the differences (text or JSON) on stdout; exit 1 when an object was decided differently."""
    if as_json:
        typer.echo(json.dumps(diffs.as_json(decisions), indent=2))
    else:
        for line in diffs.lines(decisions):
            typer.echo(line)
    if diffs.by_object:
        raise typer.Exit(1)


def _copy(timeline: IO[str]) -> None:
    timeline.seek(0)
    for line in timeline:
        typer.echo(line, nl=False)
