"""An object as the journal had it at a position: read by index from a snapshot and the records after it.

``Position`` answers, for one object and a seq N: its last observed record at or before N, the last
observed record of each object it owned then (``ownerReferences`` naming its uid), and the last decision
recorded for it at or before N (a decision of an earlier object of the same name does not count). Nothing
is folded from the journal's first record:

* the object's own records and its decision come from the object index (kind, namespace, name, seq),
  read backwards from N;
* its children are the children the newest snapshot at or before N holds for its uid (``store.snapshots``,
  read back once per snapshot and kept, ``Snapshots``), plus the objects observed in the snapshot's tail
  (after it, up to N, same namespace) whose bodies name the uid; each candidate's last observation at or
  before N is then read by the object index, and kept if it was not DELETED and still names the owner.

Without a snapshot at or before N the tail starts at the journal's first record (a journal younger than
``snapshot_every`` records, or a position before the oldest snapshot kept): still correct, only slower.
Where retention pruned records the journal may no longer say what held at N: a position at or below the
raw horizon, or between it and the oldest snapshot kept, raises ``Pruned`` naming the first position it
can answer (``first``).
"""

from __future__ import annotations

import collections
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import aiosqlite

from store import clocks, reading, retention, rows, schema, snapshots
from store.errors import JournalCorrupt, JournalError, translate
from store.projection import Projection, owner_uids
from store.records import Record, RecordType

CACHED = 2  # snapshots whose projections are kept for the positions after them
CHUNK = 200  # children looked up per statement (a few bound parameters each)
_OBSERVED = RecordType.OBSERVED.value
_DECISION = RecordType.DECISION.value


class Pruned(JournalError):
    """Retention pruned the records that said what held at the position; ``first`` is the first seq the
    journal can still answer for."""

    def __init__(self, message: str, *, first: int) -> None:
        super().__init__(message)
        self.first = first


class Beyond(JournalError):
    """The position lies after the journal's last record."""


@dataclass(frozen=True)
class Position:
    """What the journal held about an object at ``seq``: its last observation (``None`` if it was never
    observed by then), its children's last observations, and the decision in force."""

    seq: int
    observed: Record | None
    children: list[Record] = field(default_factory=list)
    decision: Record | None = None
    snapshot: int = 0  # the seq of the snapshot the children were read from (0: from the first record)

    @property
    def exists(self) -> bool:
        return self.observed is not None and self.observed.body.get("event") != "DELETED"


class Snapshots:
    """Projections read back from snapshots, kept per snapshot seq (a snapshot never changes; the
    ``CACHED`` most recently used are kept)."""

    def __init__(self) -> None:
        self._held: collections.OrderedDict[int, Projection] = collections.OrderedDict()

    async def newest_through(
        self, db: aiosqlite.Connection, seq: int, *, raw_horizon: int
    ) -> Projection | None:
        """The newest snapshot's projection at or before ``seq`` (and not below the raw horizon) that
        reads back; ``None`` when there is none."""
        async with db.execute(
            "SELECT seq FROM snapshots WHERE seq <= ? AND seq >= ? ORDER BY seq DESC", (seq, raw_horizon)
        ) as cursor:
            stored = [int(row[0]) for row in await cursor.fetchall()]
        for found in stored:
            held = self._held.get(found)
            if held is not None:
                self._held.move_to_end(found)
                return held
            async with db.execute("SELECT body, checksum FROM snapshots WHERE seq = ?", (found,)) as cursor:
                row = await cursor.fetchone()
            if row is None:  # pruned since it was listed
                continue
            try:
                projection = snapshots.unpack(bytes(row[0]), int(row[1]), seq=found)
            except JournalCorrupt:
                continue  # an older one may do
            self._held[found] = projection
            if len(self._held) > CACHED:
                self._held.popitem(last=False)
            return projection
        return None


async def first_answerable(db: aiosqlite.Connection, horizons: retention.Horizons) -> int:
    """The first seq a position can be answered for: 1, or after pruning the oldest usable snapshot."""
    if horizons.raw == 0:
        return 1
    async with db.execute("SELECT min(seq) FROM snapshots WHERE seq >= ?", (horizons.raw,)) as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row is not None and row[0] is not None else horizons.raw + 1


async def seq_at(db: aiosqlite.Connection, moment: datetime) -> int:
    """The seq of the last record appended at or before ``moment`` (0 if none is left that early)."""
    cutoff = clocks.format_time(moment + timedelta(microseconds=1))
    tip = await schema.scalar(db, "SELECT max(seq) FROM records")
    try:
        return await retention.newest_before(db, cutoff, above=0, through=tip)
    except sqlite3.Error as exc:
        raise translate(exc, doing="read") from exc


async def at(
    db: aiosqlite.Connection,
    cache: Snapshots,
    horizons: retention.Horizons,
    *,
    kind: str,
    namespace: str,
    name: str,
    seq: int,
) -> Position:
    """What the journal held about ``kind`` ``namespace/name`` at ``seq``; ``Pruned`` when retention
    took the records that would say."""
    tip = await schema.scalar(db, "SELECT max(seq) FROM records")
    if seq > tip:
        raise Beyond(f"seq {seq} is after the journal's last record (seq {tip}); ask for a seq up to it")
    first = await first_answerable(db, horizons)
    if seq < first:
        raise Pruned(
            f"seq {seq} was pruned by retention (records up to seq {horizons.raw} are gone); "
            f"positions from seq {first} on can be answered",
            first=first,
        )
    try:
        observed = await _last(db, kind, namespace, name, _OBSERVED, seq)
        if observed is None or observed.body.get("event") == "DELETED":
            return Position(seq=seq, observed=observed)
        uid = observed.uid
        decision = await _last(db, kind, namespace, name, _DECISION, seq, uid=uid)
        projection = await cache.newest_through(db, seq, raw_horizon=horizons.raw)
        children = await _children(db, projection, uid=uid, namespace=namespace, seq=seq, own=observed)
    except sqlite3.Error as exc:
        raise translate(exc, doing="read") from exc
    return Position(
        seq=seq,
        observed=observed,
        children=children,
        decision=decision,
        snapshot=0 if projection is None else projection.seq,
    )


async def _last(
    db: aiosqlite.Connection,
    kind: str,
    namespace: str,
    name: str,
    type_: str,
    seq: int,
    *,
    uid: str | None = None,
) -> Record | None:
    sql = (
        f"SELECT {rows.COLUMNS} FROM records WHERE kind = ? AND namespace = ? AND name = ? AND seq <= ? "
        "AND type = ?"
    )
    args: list[object] = [kind, namespace, name, seq, type_]
    if uid:
        sql += " AND uid IN (?, '')"
        args.append(uid)
    found = await reading.select(db, sql + " ORDER BY seq DESC LIMIT 1", args)
    return found[0] if found else None


async def _children(
    db: aiosqlite.Connection,
    projection: Projection | None,
    *,
    uid: str,
    namespace: str,
    seq: int,
    own: Record,
) -> list[Record]:
    if not uid:
        return []
    after = 0 if projection is None else projection.seq
    keys = set(projection.children(uid)) if projection is not None else set()
    async with db.execute(
        "SELECT DISTINCT kind, namespace, name FROM records WHERE type = ? AND seq > ? AND seq <= ? "
        "AND namespace = ? AND instr(body, ?) > 0",
        (_OBSERVED, after, seq, namespace, uid),
    ) as cursor:
        keys.update((str(k), str(ns), str(n)) for k, ns, n in await cursor.fetchall())
    keys.discard((own.kind, own.namespace, own.name))
    found: list[Record] = []
    ordered = sorted(keys)
    for start in range(0, len(ordered), CHUNK):
        found.extend(await _last_of_each(db, ordered[start : start + CHUNK], seq))
    return [
        record
        for record in found
        if record.body.get("event") != "DELETED" and uid in owner_uids(_object(record))
    ]


async def _last_of_each(db: aiosqlite.Connection, keys: list[tuple[str, str, str]], seq: int) -> list[Record]:
    """Each key's last observed record at or before ``seq``, in key order."""
    picks = " UNION ALL ".join(
        [
            "SELECT (SELECT max(seq) FROM records WHERE kind = ? AND namespace = ? AND name = ? "
            "AND seq <= ? AND type = ?)"
        ]
        * len(keys)
    )
    args: list[object] = []
    for kind, namespace, name in keys:
        args.extend((kind, namespace, name, seq, _OBSERVED))
    found = await reading.select(db, f"SELECT {rows.COLUMNS} FROM records WHERE seq IN ({picks})", args)
    return sorted(found, key=lambda r: (r.kind, r.namespace, r.name))


def _object(record: Record) -> Mapping[str, Any]:
    obj = record.body.get("object")
    return obj if isinstance(obj, Mapping) else {}
