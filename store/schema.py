"""The journal's SQLite schema, its format version (``PRAGMA user_version``), and upgrades of older files.

Tables:

* ``records`` — one row per record; ``seq`` is the rowid (strictly increasing, never reused), ``body`` the
  JSON text, ``checksum`` a CRC-32 over every column (``rows.checksum``). Indexed by object
  (kind, namespace, name, seq) and by type (type, seq).
* ``snapshots`` — projection snapshots (zlib-compressed JSON, with their own checksum), keyed by the seq
  of the ``snapshot`` record written with them.
* ``horizons`` — one row: every raw record at or below ``raw`` and every record at or below ``history``
  was pruned by retention. Above ``raw`` the sequence has no gaps.
* ``owners`` — derived: one row per owner uid an observed record's object names in its
  ``ownerReferences`` (uid, seq, the record's kind, namespace and name, and whether it is a DELETED
  event; keyed by uid and seq, so an owner's rows are read without a record), so the objects an owner had
  at a position are found by index (``store.positions``) instead of by reading every body. Filled in the
  transaction that inserts the records (``rows.insert``, ``rows.insert_now``: append, import, upgrade)
  and from the records themselves on an upgrade from format 2; a trigger empties it with the records
  retention deletes.

A connection is opened in WAL mode (readers never block the writer) with ``synchronous=FULL`` for durable
commits, and incremental auto-vacuum so pruned pages can be given back to the disk.
"""

from __future__ import annotations

import json
import pathlib
import sqlite3

import aiosqlite

from store import rows, upcasting
from store.errors import InvalidRecord, JournalCorrupt, JournalError, JournalFormatError, translate
from store.records import Record

# 1: the tables below. 2: the same tables; records of type ``settings`` may appear, which an arcsm that
# reads format 1 would take for damage, so it is told to upgrade instead. 3: the ``owners`` table and its
# trigger (an arcsm that reads format 2 would not keep it as it appends), filled from the records on upgrade.
FORMAT = 3
# The oldest format a read-only connection may read as it is: format 2 lacks only the owners index, which
# ``store.positions`` does without (reading the owners from the records' bodies instead).
READABLE = 2

DDL = """
CREATE TABLE records (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    type TEXT NOT NULL,
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    uid TEXT NOT NULL,
    resource_version TEXT NOT NULL,
    body TEXT NOT NULL,
    checksum INTEGER NOT NULL
);
CREATE INDEX records_by_object ON records (kind, namespace, name, seq);
CREATE INDEX records_by_type ON records (type, seq);
CREATE TABLE snapshots (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    objects INTEGER NOT NULL,
    body BLOB NOT NULL,
    checksum INTEGER NOT NULL
);
CREATE TABLE horizons (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    raw INTEGER NOT NULL,
    history INTEGER NOT NULL
);
INSERT INTO horizons (id, raw, history) VALUES (0, 0, 0);
"""

_REFS = "'$.object.metadata.ownerReferences'"


# A statement of its own: a trigger's body holds a semicolon, so these are not split like ``DDL``.
OWNERS_DDL = (
    "CREATE TABLE owners (uid TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, "
    "namespace TEXT NOT NULL, name TEXT NOT NULL, gone INTEGER NOT NULL, "
    "PRIMARY KEY (uid, seq)) WITHOUT ROWID",
    "CREATE INDEX owners_by_seq ON owners (seq)",
    # Whatever deletes records (retention, a rebuild) takes their rows with them. Deletes are rare and in
    # the background; inserts fill the table from Python (``rows.owner_rows``), a trigger costing each one.
    "CREATE TRIGGER owners_of_pruned AFTER DELETE ON records WHEN OLD.type = 'observed' BEGIN "
    "DELETE FROM owners WHERE seq = OLD.seq; END",
)
# The rows ``rows.owner_rows`` gives, read from a format-2 journal's records by SQLite on its upgrade. A
# body that is not JSON (a damaged record, which ``arcsm journal verify`` names) names no owner here
# either, rather than failing the upgrade: SQLite's JSON functions raise on it, so each sees it only
# through ``json_valid``.
_BODY = "CASE WHEN json_valid(r.body) THEN r.body END"
OWNERS_BACKFILL = (
    "INSERT OR IGNORE INTO owners SELECT json_extract(ref.value, '$.uid'), r.seq, r.kind, r.namespace, "
    f"r.name, coalesce(json_extract({_BODY}, '$.event') = 'DELETED', 0) "
    f"FROM records AS r, json_each({_BODY}, {_REFS}) AS ref "
    f"WHERE r.type = 'observed' AND json_type({_BODY}, {_REFS}) = 'array' "
    "AND ref.type = 'object' AND json_type(ref.value, '$.uid') = 'text'"
)

V0_COLUMNS = ("seq", "at", "type", "kind", "namespace", "name", "uid", "resource_version", "body")
WAL_LIMIT = 64 << 20  # bytes the write-ahead log is truncated to after a checkpoint
AUTOCHECKPOINT_PAGES = 1000  # SQLite's default: a checkpoint once the log holds this many pages


def existing_uri(path: pathlib.Path) -> str:
    if not path.is_file():
        raise JournalError(f"no journal at {path}")
    # Read-write, not ro: after a crash the first connection must be able to recover the WAL index.
    return f"{path.absolute().as_uri()}?mode=rw"


async def connect(
    path: pathlib.Path, *, read_only: bool = False, durable: bool = True, wal_limit: int = WAL_LIMIT
) -> aiosqlite.Connection:
    """A connection to the journal at ``path``; a read-only one never creates the file and refuses to
    write (``query_only``). A writer's write-ahead log is checkpointed once it holds half of
    ``wal_limit`` and truncated to ``wal_limit`` after a checkpoint."""
    try:
        if read_only:
            db = await aiosqlite.connect(existing_uri(path), uri=True, isolation_level=None)
            pragmas = ["query_only = 1"]
        else:
            db = await aiosqlite.connect(path, isolation_level=None)
            pragmas = [
                "auto_vacuum = INCREMENTAL",  # only on a new file (below)
                "journal_mode = WAL",
                f"synchronous = {'FULL' if durable else 'NORMAL'}",
                f"journal_size_limit = {wal_limit}",
                f"wal_autocheckpoint = {max(16, min(AUTOCHECKPOINT_PAGES, wal_limit // 2 // 4096))}",
            ]
    except sqlite3.Error as exc:
        raise translate(exc, doing=f"open {path}") from exc
    try:
        for pragma in [*pragmas, "busy_timeout = 10000"]:
            # auto_vacuum takes effect on a new file only, yet rewrites an existing one's header.
            if pragma.startswith("auto_vacuum") and await scalar(db, "PRAGMA page_count"):
                continue
            await db.execute(f"PRAGMA {pragma}")
    except BaseException as exc:
        await db.close()
        if isinstance(exc, sqlite3.Error):
            raise translate(exc, doing=f"open {path}") from exc
        raise
    return db


async def scalar(db: aiosqlite.Connection, sql: str, *args: object) -> int:
    async with db.execute(sql, args) as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


async def tables(db: aiosqlite.Connection) -> set[str]:
    async with db.execute("SELECT name FROM sqlite_master WHERE type = 'table'") as cursor:
        return {str(row[0]) for row in await cursor.fetchall()}


async def check(db: aiosqlite.Connection, path: pathlib.Path, *, empty_ok: bool = True) -> int:
    """The format of the journal at ``path``, refusing files that are not journals or are too new, and
    unless ``empty_ok`` (a file about to become a journal) one that holds no tables at all."""
    try:
        version = await scalar(db, "PRAGMA user_version")
        found = await tables(db)
    except sqlite3.Error as exc:
        raise translate(exc, doing=f"open {path}") from exc
    if not found and not empty_ok:
        raise JournalFormatError(
            f"{path} is empty, not an arcsm journal: check the path (`arcsm run --journal` names the file)"
        )
    if version > FORMAT:
        raise JournalFormatError(
            f"{path} is a journal of format {version}, newer than this arcsm reads ({FORMAT}); upgrade arcsm"
        )
    if found and "records" not in found:
        raise JournalFormatError(
            f"{path} is not an arcsm journal (it holds tables {', '.join(sorted(found))})"
        )
    needed = {"records", "snapshots", "horizons"} | ({"owners"} if version >= 3 else set())
    if version >= 1 and not needed <= found:
        raise JournalFormatError(
            f"{path} is a damaged journal: tables are missing (it holds {sorted(found)})"
        )
    return version if found else FORMAT


async def prepare(db: aiosqlite.Connection, path: pathlib.Path) -> None:
    """Create the schema in a new file, or upgrade an older journal to ``FORMAT`` in one transaction."""
    try:
        await db.execute("BEGIN IMMEDIATE")
        try:
            if not await tables(db):
                await _create(db)
            else:
                version = await check(db, path)
                if version == 0:
                    await _upgrade_from_0(db, path)
                elif version < FORMAT:
                    await _upgrade_from_2(db)
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise translate(exc, doing=f"prepare {path}") from exc


async def check_upgradable(db: aiosqlite.Connection, path: pathlib.Path) -> None:
    """Refuse a format-0 journal that cannot be upgraded: one whose pages SQLite finds damaged
    (``JournalCorrupt``), or whose columns or records are not the prototype's (``JournalFormatError``).

    Reads only, so it runs on a read-only connection before anything writes to the file: format 0 has no
    checksums, and a journal refused only halfway through its upgrade would be left changed."""
    try:
        async with db.execute("PRAGMA quick_check(1)") as cursor:
            found = [str(row[0]) for row in await cursor.fetchall()]
        if found != ["ok"]:
            raise JournalCorrupt(f"SQLite finds the file damaged: {' '.join(found[0].split())}")
        await _v0_columns(db, path)
        async with db.execute(f"SELECT {', '.join(V0_COLUMNS)} FROM records ORDER BY seq") as cursor:
            while batch := await cursor.fetchmany(1000):
                for row in batch:
                    _upcast_row(tuple(row))
    except sqlite3.Error as exc:
        raise translate(exc, doing=f"open {path}") from exc


async def _v0_columns(db: aiosqlite.Connection, path: pathlib.Path) -> None:
    async with db.execute("PRAGMA table_info(records)") as cursor:
        columns = tuple(str(row[1]) for row in await cursor.fetchall())
    if columns != V0_COLUMNS:
        raise JournalFormatError(f"{path} is not an arcsm journal (records has columns {', '.join(columns)})")


async def _upgrade_from_0(db: aiosqlite.Connection, path: pathlib.Path) -> None:
    await _v0_columns(db, path)
    await db.execute("ALTER TABLE records RENAME TO records_v0")
    async with db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records_v0' AND sql IS NOT NULL"
    ) as cursor:
        old_indexes = [str(row[0]) for row in await cursor.fetchall()]
    for index in old_indexes:
        await db.execute(f'DROP INDEX "{index}"')
    await _create(db)
    async with db.execute(f"SELECT {', '.join(V0_COLUMNS)} FROM records_v0 ORDER BY seq") as cursor:
        while batch := await cursor.fetchmany(1000):
            await rows.insert(db, [_upcast_row(tuple(row)) for row in batch])
    await db.execute("DROP TABLE records_v0")


async def _upgrade_from_2(db: aiosqlite.Connection) -> None:
    """Format 1 or 2 → 3: the owners table, filled from the observed records already there."""
    if "owners" not in await tables(db):
        for statement in OWNERS_DDL:
            await db.execute(statement)
        await db.execute(OWNERS_BACKFILL)
    await db.execute(f"PRAGMA user_version = {FORMAT}")


async def _create(db: aiosqlite.Connection) -> None:
    # Statement by statement: executescript would commit the open transaction first.
    for statement in [*DDL.split(";"), *OWNERS_DDL]:
        if statement.strip():
            await db.execute(statement)
    await db.execute(f"PRAGMA user_version = {FORMAT}")


def _upcast_row(row: tuple[object, ...]) -> rows.Row:
    seq = int(str(row[0]))
    names = ("seq", "at", "type", "kind", "namespace", "name", "uid", "resourceVersion")
    data = {key: value for key, value in zip(names, row, strict=False)}
    try:
        data["body"] = json.loads(str(row[8]))
        record = Record.from_json(upcasting.upcast(data, since=0))
        return rows.encode(record, seq, str(row[1]))[0]
    except (ValueError, TypeError, KeyError, InvalidRecord) as exc:
        raise JournalFormatError(f"cannot upgrade record seq {seq} of format 0: {exc}") from exc
