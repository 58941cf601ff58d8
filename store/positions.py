"""An object as the journal had it at a position: read by index from a snapshot and the records after it.

``Position`` answers, for one object and a seq N: its last observed record at or before N, the last
observed record of each object it owned then (``ownerReferences`` naming its uid), and the last decision
recorded for it at or before N (a decision of an earlier object of the same name does not count). Nothing
is folded from the journal's first record:

* the object's own records and its decision come from the object index (kind, namespace, name, seq),
  read backwards from N;
* its children are read by the same index, for candidate keys from the snapshot window of N
  (``Window``): the children the newest snapshot at or before N holds for its uid, and the objects that
  named the uid in their ``ownerReferences`` in the records after that snapshot (up to the next one)
  during a range of seqs open at N. Each candidate's last observation at or before N is kept if it was
  not DELETED and still names the owner.

A window is read once and kept (``Snapshots``, the ``CACHED`` most recently used, one cache per
reader): the snapshot's projection is unpacked, and the ranges in which objects named an owner are read
from the ``owners`` index (``store.schema``, format 3) by (uid, seq) the first time that owner is asked
in the window; the window after the newest snapshot grows as records are appended. So the first position
asked for an owner in a window costs the snapshot's unpacking and one index range (its rows after the
snapshot, a few thousand at most), and every later one a few index lookups; no record body is read but
the object's, its decision's and its candidates'. Without a snapshot at or before N the window starts at
the journal's first record (a journal younger than ``snapshot_every`` records, or a position before the
oldest snapshot kept; the journal keeps ``snapshots_kept``, two by default): still correct, its first
read longer.

A format-2 journal read as it is (read-only, beside an older arcsm) has no ``owners`` table: there the
first position asked in a window reads the owners every observed record after the snapshot names
(``json_extract`` of their ``ownerReferences``), at most ``snapshot_every`` records, for every owner at
once.

A position is read whole on the reader's connection thread, in one hand-off (``store.onthread``), rather
than with an aiosqlite call (a queue put and two thread wake-ups) per statement; its cache is touched
only there, so by one request at a time.

Where retention pruned records the journal may no longer say what held at N: a position at or below the
raw horizon, or between it and the oldest snapshot kept, raises ``Pruned`` naming the first position it
can answer (``first``).
"""

from __future__ import annotations

import collections
import functools
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import aiosqlite

from statemachines.jsonvalues import section
from store import clocks, onthread, reading, retention, rows, schema, snapshots
from store.errors import JournalCorrupt, JournalError, translate
from store.projection import Projection, owner_uids
from store.records import Record, RecordType

CACHED = 32  # snapshot windows kept (each a projection and the owners named after it)
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
    """The position lies after the journal's last record, ``tip``."""

    def __init__(self, message: str, *, tip: int) -> None:
        super().__init__(message)
        self.tip = tip


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


Key = tuple[str, str, str]


@dataclass
class Window:
    """What one snapshot window holds: the projection at its snapshot (``seq`` 0: none, the first record)
    and owner uid → child key → the seq ranges ``[first, ended]`` in which the child named that owner
    after the snapshot (``ended`` 0 while it lives). On a journal with the ``owners`` index an owner's
    ranges are read from it when that owner is first asked, up to ``reached[uid]``; without it every
    owner's are read from the records' bodies at once, up to ``through``."""

    projection: Projection | None
    through: int
    owned: dict[str, dict[Key, list[list[int]]]] = field(default_factory=dict)
    reached: dict[str, int] = field(default_factory=dict)

    @property
    def seq(self) -> int:
        return 0 if self.projection is None else self.projection.seq

    def candidates(self, uid: str, seq: int) -> set[Key]:
        """The keys that may have been owned by ``uid`` at ``seq``: the snapshot's children and those
        named it in a range open at ``seq``."""
        keys = set(self.projection.children(uid)) if self.projection is not None else set()
        for key, ranges in self.owned.get(uid, {}).items():
            if any(first <= seq and (ended == 0 or ended > seq) for first, ended in ranges):
                keys.add(key)
        return keys

    def add(self, seq: int, key: Key, event: str, owners: list[str]) -> None:
        for uid in owners:
            ranges = self.owned.setdefault(uid, {}).setdefault(key, [])
            if not ranges or ranges[-1][1] != 0:
                ranges.append([seq, 0])
            if event == "DELETED":
                ranges[-1][1] = seq


class Snapshots:
    """Snapshot windows read back once and kept (``CACHED`` of them, the most recently used): a
    snapshot's projection never changes, and its window's owner map only grows, as owners are asked and
    as records are appended after the newest snapshot. Used only on its reader's connection thread
    (``at`` runs there), so one request at a time touches it."""

    def __init__(self) -> None:
        self._held: collections.OrderedDict[int, Window] = collections.OrderedDict()
        self._indexed = False

    def indexed(self, connection: sqlite3.Connection) -> bool:
        """Whether the journal has the ``owners`` table (an older one opened read-only has not, until an
        arcsm that writes it upgrades it)."""
        if not self._indexed:
            found = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'owners'")
            self._indexed = found.fetchone() is not None
        return self._indexed

    def window(self, connection: sqlite3.Connection, seq: int, *, raw_horizon: int) -> Window:
        """The window of the newest snapshot at or before ``seq`` (not below the raw horizon) that reads
        back; without one, the window from the first record."""
        stored = connection.execute(
            "SELECT seq FROM snapshots WHERE seq <= ? AND seq >= ? ORDER BY seq DESC", (seq, raw_horizon)
        ).fetchall()
        window = None
        for (found,) in stored:
            window = self._held.get(int(found)) or _read_window(connection, int(found))
            if window is not None:
                break
        if window is None:
            window = self._held.get(0) or Window(projection=None, through=0)
        self._held[window.seq] = window
        self._held.move_to_end(window.seq)
        if len(self._held) > CACHED:
            self._held.popitem(last=False)
        return window


def _read_window(connection: sqlite3.Connection, seq: int) -> Window | None:
    row = connection.execute("SELECT body, checksum FROM snapshots WHERE seq = ?", (seq,)).fetchone()
    if row is None:  # pruned since it was listed
        return None
    try:
        projection = snapshots.unpack(bytes(row[0]), int(row[1]), seq=seq)
    except JournalCorrupt:
        return None  # an older one may do
    return Window(projection=projection, through=seq)


def _window_end(connection: sqlite3.Connection, window: Window, seq: int) -> int:
    """How far to read ``window``'s owners for ``seq``: to the next snapshot (so a window is read once),
    or to ``seq`` after the newest one."""
    row = connection.execute("SELECT min(seq) FROM snapshots WHERE seq > ?", (window.seq,)).fetchone()
    return max(seq, int(row[0])) if row is not None and row[0] is not None else seq


def _extend_owner(connection: sqlite3.Connection, window: Window, uid: str, seq: int) -> None:
    """Read the ranges in which objects named ``uid`` into the window from the ``owners`` index, from
    where they were read before up to ``_window_end``."""
    reached = window.reached.get(uid, window.seq)
    if reached >= seq:
        return
    through = _window_end(connection, window, seq)
    found = connection.execute(
        "SELECT seq, kind, namespace, name, gone FROM owners WHERE uid = ? AND seq > ? AND seq <= ? "
        "ORDER BY seq",
        (uid, reached, through),
    )
    for at, kind, namespace, name, gone in found:
        window.add(int(at), (str(kind), str(namespace), str(name)), "DELETED" if gone else "", [uid])
    window.reached[uid] = through


def _extend(connection: sqlite3.Connection, window: Window, seq: int) -> None:
    """Without the ``owners`` index: read the owners the observed records in ``(window.through, end]``
    name (``_window_end``) into the window, every owner at once."""
    if window.through >= seq:
        return
    through = _window_end(connection, window, seq)
    found = connection.execute(
        "SELECT seq, kind, namespace, name, json_extract(body, '$.event'), refs FROM (SELECT *, "
        "json_extract(body, '$.object.metadata.ownerReferences') AS refs FROM records "
        "WHERE type = ? AND seq > ? AND seq <= ?) WHERE refs IS NOT NULL",
        (_OBSERVED, window.through, through),
    )
    for at, kind, namespace, name, event, refs in found:
        owners = owner_uids({"metadata": {"ownerReferences": json.loads(refs)}})
        if owners:
            window.add(int(at), (str(kind), str(namespace), str(name)), str(event or ""), list(owners))
    window.through = through


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
    took the records that would say. Read whole on ``db``'s thread, in one hand-off (``onthread``)."""
    try:
        return await onthread.call(
            db,
            functools.partial(
                _at, cache=cache, horizons=horizons, kind=kind, namespace=namespace, name=name, seq=seq
            ),
        )
    except sqlite3.Error as exc:
        raise translate(exc, doing="read") from exc


def _at(
    connection: sqlite3.Connection,
    *,
    cache: Snapshots,
    horizons: retention.Horizons,
    kind: str,
    namespace: str,
    name: str,
    seq: int,
) -> Position:
    row = connection.execute(
        "SELECT (SELECT coalesce(max(seq), 0) FROM records), (SELECT min(seq) FROM snapshots WHERE seq >= ?)",
        (horizons.raw,),
    ).fetchone()
    tip = int(row[0])
    if seq > tip:
        raise Beyond(f"seq {seq} is after the journal's last record (seq {tip})", tip=tip)
    first = 1 if horizons.raw == 0 else int(row[1]) if row[1] is not None else horizons.raw + 1
    if seq < first:
        raise Pruned(
            f"seq {seq} was pruned by retention (records up to seq {horizons.raw} are gone); "
            f"positions from seq {first} on can be answered",
            first=first,
        )
    observed = _last(connection, kind, namespace, name, _OBSERVED, seq)
    if observed is None or observed.body.get("event") == "DELETED":
        return Position(seq=seq, observed=observed)
    uid = observed.uid
    decision = _last(connection, kind, namespace, name, _DECISION, seq, uid=uid)
    window = cache.window(connection, seq, raw_horizon=horizons.raw)
    keys: set[Key] = set()
    if uid:
        if cache.indexed(connection):
            _extend_owner(connection, window, uid, seq)
        else:
            _extend(connection, window, seq)
        keys = window.candidates(uid, seq)
    children = _children(connection, keys, uid=uid, seq=seq, own=observed)
    return Position(seq=seq, observed=observed, children=children, decision=decision, snapshot=window.seq)


def _select(connection: sqlite3.Connection, sql: str, args: list[object]) -> list[Record]:
    return [rows.decode(reading.as_row(row)) for row in connection.execute(sql, args).fetchall()]


def _last(
    connection: sqlite3.Connection,
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
    found = _select(connection, sql + " ORDER BY seq DESC LIMIT 1", args)
    return found[0] if found else None


def _children(
    connection: sqlite3.Connection, keys: set[Key], *, uid: str, seq: int, own: Record
) -> list[Record]:
    """The last observation at or before ``seq`` of each of ``keys`` that then lived and named ``uid``."""
    keys.discard((own.kind, own.namespace, own.name))
    found: list[Record] = []
    ordered = sorted(keys)
    for start in range(0, len(ordered), CHUNK):
        found.extend(_last_of_each(connection, ordered[start : start + CHUNK], seq))
    return [
        record
        for record in found
        if record.body.get("event") != "DELETED" and uid in owner_uids(_object(record))
    ]


def _last_of_each(connection: sqlite3.Connection, keys: list[Key], seq: int) -> list[Record]:
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
    found = _select(connection, f"SELECT {rows.COLUMNS} FROM records WHERE seq IN ({picks})", args)
    return sorted(found, key=lambda r: (r.kind, r.namespace, r.name))


def _object(record: Record) -> Mapping[str, Any]:
    return section(record.body, "object")
