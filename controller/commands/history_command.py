"""``arcsm history NAMESPACE/NAME``: an object's phase history, read offline from a journal.

It prints what ``GET /api/v1/namespaces/{namespace}/{plural}/{name}/phases`` answers (re-affirmations only
with ``--reaffirmed``, as ``?include=reaffirmed``), one transition a line (seq, time, from → to, or
``(deleted)`` for the end of the object's history, trigger: reason, the revisions the guard read, and
``[observed]`` for a phase change this replica only observed while another one decided), or with ``--json``
the items as that endpoint serves them, one JSON object a line. A time is the record's journal time, shown
as every command shows one (``clocks.shown_time``: ``arcsm replay`` gives the same seq the same text); the
JSON keeps the journal's own text. It reads through a read-only connection
(``store.readonly``), so it works while a controller holds the journal, as ``arcsm journal export`` does; it
scans the journal (``phases.page``), as there is no running app whose index it could ask. It has SQLite check
the file's pages first (``ReadOnlyJournal.check``), so a damaged journal is reported, exit 1, rather than read
in part. Every failure is one line on stderr: exit 2 for a bad argument, 1 for a journal that cannot be read
or holds nothing about the object.

With ``--at SEQ`` (or an RFC 3339 time) it prints instead what
``GET /api/v1/namespaces/{namespace}/{plural}/{name}/at`` answers (``api.positions``): the object as the
journal had it at that position (phase, conditions, the seq it was observed at), the objects it owned then,
and the decision in force; ``--json`` prints that answer as the endpoint serves it, one JSON object. A
position the object did not exist at, or one retention pruned, is one line on stderr, exit 1.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer

from api import phasehistory, phases, positions
from api.models import ObjectAt, PhaseItem
from store import clocks
from store.errors import JournalCorrupt, JournalError
from store.readonly import ReadOnlyJournal

PAGE = 1_000


async def history_of(
    path: Path, *, kind: str, namespace: str, name: str, reaffirmed: bool = False
) -> tuple[bool, list[PhaseItem]]:
    """Whether the journal knows the object, and every transition it recorded for it, oldest first
    (``reaffirmed``: with the items that re-affirm a phase)."""
    async with await ReadOnlyJournal.open(path) as journal:
        await journal.check()  # a scan by object reads only some pages: damage elsewhere must not pass
        if not await phases.known(journal, kind=kind, namespace=namespace, name=name):
            return False, []
        items: list[PhaseItem] = []
        after: int | None = 0
        while after is not None:
            page = await phases.page(
                journal,
                after=after,
                limit=PAGE,
                kind=kind,
                namespace=namespace,
                name=name,
                raw_horizon=phasehistory.raw_horizon(journal),
                reaffirmed=reaffirmed,
            )
            items.extend(page.items)
            after = page.next
        return True, items


async def state_of(path: Path, *, kind: str, namespace: str, name: str, at: str) -> ObjectAt:
    """The object at ``at`` (a seq, or an RFC 3339 time); ``positions.NotThere`` when it cannot be told."""
    async with await ReadOnlyJournal.open(path) as journal:
        await journal.check()
        text = at.strip()
        if text.isdigit():
            seq = int(text)
            if seq < 1:
                raise positions.NotThere(422, "--at 0 is not a position; seqs start at 1")
        else:
            seq = await positions.seq_of_time(journal, positions.parse_time(text))
        return await positions.state_at(journal, kind=kind, namespace=namespace, name=name, seq=seq)


def state_lines(state: ObjectAt) -> list[str]:
    """``state`` as the lines ``arcsm history --at`` prints."""
    lines = [
        f"{state.kind} {state.namespace}/{state.name} at seq {state.seq}",
        f"  phase {state.phase or '(none)'}  "
        f"(observed at seq {state.observed_seq}, {clocks.shown_time(state.observed_at)})",
    ]
    for condition in state.conditions:
        lines.append(
            f"  condition {condition.get('type')}={condition.get('status')}  "
            f"{condition.get('reason', '')}: {condition.get('message', '')}"
        )
    lines.append(f"  children ({len(state.children)}):" if state.children else "  children: none")
    for child in state.children:
        lines.append(f"    {child.kind} {child.name}  {child.phase or '(no phase)'}  (seq {child.seq})")
    decision = state.decision
    if decision is None:
        lines.append("  decision in force: none yet")
        return lines
    trigger = decision.trigger or "(no transition)"
    at = clocks.shown_time(decision.at)
    lines.append(f"  decision in force: seq {decision.seq}  {at}  {trigger}: {decision.reason}")
    lines.extend(f"    {line(item)}" for item in decision.transitions)
    lines.extend(f"    effect {effect}" for effect in decision.effects)
    return lines


def line(item: PhaseItem) -> str:
    to = "(deleted)" if item.to is None else item.to
    at = clocks.shown_time(item.at)
    text = f"seq {item.seq}  {at}  {item.from_ or '(none)'} → {to}  {item.trigger}: {item.reason}"
    if item.revisions:
        text += "  (" + ", ".join(f"{key} {value}" for key, value in item.revisions.items()) + ")"
    if item.source == phasehistory.OBSERVED:
        text += "  [observed]"
    return text


def history(
    target: Annotated[str, typer.Argument(metavar="NAMESPACE/NAME", help="The object, e.g. default/arc.")],
    journal: Annotated[Path, typer.Option("--journal", help="The journal file.", dir_okay=False)],
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="AutoscalingRunnerSet, EphemeralRunnerSet, EphemeralRunner or AutoscalingListener "
            "(or their plurals).",
        ),
    ] = phases.Kind.AUTOSCALING_RUNNER_SET.value,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per transition, as the API.")
    ] = False,
    reaffirmed: Annotated[
        bool,
        typer.Option(
            "--reaffirmed", help="Also the items that re-affirm a phase (from = to), as ?include=reaffirmed."
        ),
    ] = False,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            metavar="SEQ|TIME",
            help="Instead of the history, the object at this seq or RFC 3339 time: its observed body, "
            "children and the decision in force, as GET .../at.",
        ),
    ] = None,
) -> None:
    """Print an object's phase history from a journal, oldest first (works while a controller runs)."""
    namespace, sep, name = target.partition("/")
    if not sep or not namespace or not name or "/" in name:
        typer.echo(f"arcsm history: {target!r} is not NAMESPACE/NAME (e.g. default/arc)", err=True)
        raise typer.Exit(2)
    found_kind = phases.kind_named(kind)
    if found_kind is None:
        names = ", ".join(k.value for k in phases.Kind)
        typer.echo(f"arcsm history: --kind {kind!r} is not one of {names}", err=True)
        raise typer.Exit(2)
    if at is not None:
        _print_state(journal, kind=found_kind, namespace=namespace, name=name, at=at, as_json=as_json)
        return
    try:
        known, items = asyncio.run(
            history_of(journal, kind=found_kind, namespace=namespace, name=name, reaffirmed=reaffirmed)
        )
    except JournalCorrupt as exc:
        where = f"damaged at {exc}" if exc.seq is not None else f"damaged: {exc}"
        typer.echo(f"arcsm history: the journal is {where}; run `arcsm journal verify`", err=True)
        raise typer.Exit(1) from None
    except (JournalError, OSError) as exc:
        typer.echo(f"arcsm history: {exc}", err=True)
        raise typer.Exit(1) from None
    if not known:
        typer.echo(
            f"arcsm history: the journal holds nothing about {found_kind} {namespace}/{name}; "
            "check the namespace, name and --kind",
            err=True,
        )
        raise typer.Exit(1)
    for item in items:
        if as_json:
            typer.echo(json.dumps(item.model_dump(mode="json", by_alias=True), separators=(",", ":")))
        else:
            typer.echo(line(item))


def _print_state(path: Path, *, kind: str, namespace: str, name: str, at: str, as_json: bool) -> None:
    try:
        state = asyncio.run(state_of(path, kind=kind, namespace=namespace, name=name, at=at))
    except positions.NotThere as exc:
        typer.echo(f"arcsm history: {exc}", err=True)
        raise typer.Exit(2 if exc.status == 422 and not at.strip().isdigit() else 1) from None
    except JournalCorrupt as exc:
        where = f"damaged at {exc}" if exc.seq is not None else f"damaged: {exc}"
        typer.echo(f"arcsm history: the journal is {where}; run `arcsm journal verify`", err=True)
        raise typer.Exit(1) from None
    except (JournalError, OSError) as exc:
        typer.echo(f"arcsm history: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(state.model_dump(mode="json", by_alias=True), separators=(",", ":")))
    else:
        typer.echo("\n".join(state_lines(state)))
