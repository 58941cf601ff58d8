"""``arcsm history NAMESPACE/NAME``: an object's phase history, read offline from a journal.

It prints what ``GET /api/v1/namespaces/{namespace}/{plural}/{name}/phases`` answers (re-affirmations only
with ``--reaffirmed``, as ``?include=reaffirmed``), one transition a line (seq, time, from → to, or
``(deleted)`` for the end of the object's history, trigger: reason, the revisions the guard read, and
``[observed]`` for a phase change this replica only observed while another one decided), or with ``--json``
the items as that endpoint serves them, one JSON object a line. A time is the record's journal time, shown
as every command shows one (``clocks.shown_time``: ``arcsm replay`` gives the same seq the same text); the
JSON keeps the journal's own text.

A name can be held by several objects in turn: one deleted, another created under the same name with a new
uid. The API serves their items in one list, each with its ``uid``, the first object's ending with its
deletion (``phasehistory``: a new uid starts over). The text splits that list into lives, oldest first, each
under a line with its uid's first eight characters, the first record the journal holds of it (``first
seen``: its creation, when the controller watched it being created) and its deletion, if journaled; the
transitions of that life follow, indented. It reads through a read-only connection
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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from api import phasehistory, phases, positions
from api.models import ObjectAt, PhaseItem
from store import clocks
from store.errors import JournalCorrupt, JournalError
from store.readonly import ReadOnlyJournal

PAGE = 1_000
SEEN_PAGE = 100  # records of the name read at a time while looking for a life's first one
SHORT_UID = 8


@dataclass(frozen=True)
class Life:
    """One object of the name: its items (of one uid, oldest first) and the first record the journal
    holds of it."""

    uid: str
    items: tuple[PhaseItem, ...]
    first_seq: int
    first_at: str

    @property
    def end(self) -> PhaseItem | None:
        last = self.items[-1]
        return last if last.to is None else None

    def header(self, *, last: bool) -> str:
        text = (
            f"uid {self.uid[:SHORT_UID] or '(none)'}: first seen at seq {self.first_seq} "
            f"({clocks.shown_time(self.first_at)})"
        )
        end = self.end
        if end is not None:
            return f"{text}, deleted at seq {end.seq} ({clocks.shown_time(end.at)})"
        return f"{text}, {'not deleted' if last else 'its deletion not in the journal'}"


def split_lives(items: Sequence[PhaseItem]) -> list[list[PhaseItem]]:
    """``items`` split where another object of the name starts: after an end (``to`` None), or at an item
    of another uid. An item without a uid stays with the one before it."""
    found: list[list[PhaseItem]] = []
    uid = ""
    for item in items:
        if not found or found[-1][-1].to is None or (item.uid and uid and item.uid != uid):
            found.append([])
            uid = ""
        found[-1].append(item)
        uid = uid or item.uid
    return found


async def _first_seen(
    journal: ReadOnlyJournal, items: list[PhaseItem], *, after: int, kind: str, namespace: str, name: str
) -> tuple[int, str]:
    """The seq and time of the first record of the name after ``after`` that has the uid of ``items``,
    up to their first; the first item's own when none is found (no uid, or its records pruned)."""
    uid, first = next((i.uid for i in items if i.uid), ""), items[0]
    while uid:
        page = await journal.read(
            after=after, through=first.seq, limit=SEEN_PAGE, kind=kind, namespace=namespace, name=name
        )
        found = next((r for r in page if r.uid == uid and r.seq is not None), None)
        if found is not None and found.seq is not None:
            return found.seq, found.at
        if len(page) < SEEN_PAGE:
            break
        after = page[-1].seq or after
    return first.seq, first.at


async def lives_of(
    journal: ReadOnlyJournal, items: list[PhaseItem], *, kind: str, namespace: str, name: str
) -> list[Life]:
    """``items`` as the lives of the objects that held the name, oldest first."""
    lives: list[Life] = []
    for part in split_lives(items):
        after = lives[-1].items[-1].seq if lives else 0
        seq, at = await _first_seen(journal, part, after=after, kind=kind, namespace=namespace, name=name)
        uid = next((i.uid for i in part if i.uid), "")
        lives.append(Life(uid=uid, items=tuple(part), first_seq=seq, first_at=at))
    return lives


async def history_of(
    path: Path, *, kind: str, namespace: str, name: str, reaffirmed: bool = False
) -> tuple[bool, list[Life]]:
    """Whether the journal knows the object, and every transition it recorded for the objects of that
    name, oldest first, life by life (``reaffirmed``: with the items that re-affirm a phase)."""
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
        return True, await lives_of(journal, items, kind=kind, namespace=namespace, name=name)


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
    """Print an object's phase history from a journal, oldest first (works while a controller runs).

    Objects that held the name in turn (one deleted, another created under the same name) are printed one
    after the other, each under a line with its uid, when the journal first saw it and its deletion."""
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
        known, lives = asyncio.run(
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
    for i, life in enumerate(lives):
        if not as_json:
            typer.echo(life.header(last=i == len(lives) - 1))
        for item in life.items:
            if as_json:
                typer.echo(json.dumps(item.model_dump(mode="json", by_alias=True), separators=(",", ":")))
            else:
                typer.echo(f"  {line(item)}")


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
