"""Work run whole on an aiosqlite connection's own thread: ``call``.

Every aiosqlite call is a hand-off to the connection's thread and back (a queue put, a wake of the
thread, a wake of the event loop), and a busy controller paid about as much for those as for SQLite's
own work. ``call`` runs a plain function with the connection's ``sqlite3.Connection`` in one hand-off,
so a whole transaction (BEGIN, every insert, COMMIT) costs one. The function runs on that thread: it
must not touch the event loop, and it shares the GIL with it (keep its Python work small).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar, cast

import aiosqlite

T = TypeVar("T")


async def call(db: aiosqlite.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work(connection)`` on ``db``'s thread, in order with the calls queued before it."""
    # aiosqlite queues functions for its thread through ``_execute``, the call behind each of its own
    # methods; it has no public name for one.
    result = await db._execute(work, db._conn)  # type: ignore[no-untyped-call]
    return cast(T, result)
