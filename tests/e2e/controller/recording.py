"""Recorded journals from the controller e2e tests: where each test's journal goes, and exporting it.

With ``ARCSM_RECORD_JOURNALS=1`` in the environment, the autouse fixture of this folder's ``conftest``
names a target for each test, ``tests/journals/<name>.jsonl.gz`` (``journal_name``), and every
``harness.Controller`` that stops cleanly exports its journal there (``arcsm journal export``'s format),
so the controller that ran last on a journal file leaves the file with all of its records. Without the
variable nothing is written.

A journal is not recorded when it holds no decision (nothing to replay), or when something other than
the controllers of the test wrote to it (``foreign``): a test that appends records of its own between two
runs builds a journal no controller recorded, which would not replay, so its recording (one an earlier run
of the test left included) is removed.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from store import exporting
from store.records import RecordType

ENV = "ARCSM_RECORD_JOURNALS"
JOURNALS = Path(__file__).parents[2] / "journals"

_target: Path | None = None
_claimed: dict[str, str] = {}  # journal name -> the node id of the test that has it (this session)
_last_seq: dict[Path, int] = {}  # journal file -> its last seq when a controller of this test ended on it
_foreign: set[Path] = set()  # journal files something else wrote to during this test


def enabled() -> bool:
    return os.environ.get(ENV) == "1"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def journal_name(node_name: str) -> str:
    """The recorded journal's name for a test: its name without ``test_``, ``-`` for ``_``, and its
    parameters slugified (``test_x_y[a.b-1]`` → ``x-y-a-b-1``)."""
    function, _, parameters = node_name.partition("[")
    name = _slug(function.removeprefix("test_"))
    if parameters:
        name += "-" + _slug(parameters.removesuffix("]"))
    return name


def claim(node_name: str, node_id: str, module: str) -> str:
    """``journal_name`` for this test, prefixed with its module (without ``test_controller_``) when
    another test of the session has that name already."""
    name = journal_name(node_name)
    if _claimed.setdefault(name, node_id) != node_id:
        prefix = _slug(module.removeprefix("test_controller_").removeprefix("test_"))
        name = f"{prefix}-{name}"
        _claimed.setdefault(name, node_id)
    return name


@contextlib.contextmanager
def recording_to(target: Path | None) -> Iterator[None]:
    """Controllers created inside export to ``target`` (None: they do not export)."""
    global _target
    _target, before = target, _target
    _last_seq.clear()
    _foreign.clear()
    try:
        yield
    finally:
        _target = before
        _last_seq.clear()
        _foreign.clear()


def target() -> Path | None:
    return _target


def last_seq(journal: Path) -> int:
    """The journal file's last seq (0 when there is none), read with a plain read-only connection."""
    if not journal.is_file():
        return 0
    db = sqlite3.connect(f"{journal.absolute().as_uri()}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT MAX(seq) FROM records").fetchone()
    except sqlite3.OperationalError:  # no records table yet
        return 0
    finally:
        db.close()
    return int(row[0] or 0)


def starting(journal: Path) -> None:
    """A controller starts on ``journal``: it is foreign if it changed since a controller last ended."""
    if last_seq(journal) != _last_seq.get(journal.resolve(), 0):
        _foreign.add(journal.resolve())


def ended(journal: Path) -> None:
    """A controller's run on ``journal`` ended (stopped, failed or cancelled)."""
    _last_seq[journal.resolve()] = last_seq(journal)


def foreign(journal: Path) -> bool:
    return journal.resolve() in _foreign


async def record(journal: Path, target: Path) -> bool:
    """After a controller stopped cleanly on ``journal``: export it to ``target``, or remove ``target``
    when the journal is foreign; whether it was written."""
    if foreign(journal):
        _remove(target)
        return False
    return await export(journal, target)


async def export(journal: Path, target: Path) -> bool:
    """Export ``journal`` to ``target`` (replaced whole); False, writing nothing, when it holds no
    decision."""
    out = io.StringIO()
    await exporting.export(journal, out)
    text = out.getvalue()
    if not any(r.type is RecordType.DECISION for r in exporting.parse_lines(text.splitlines())):
        return False
    _write(target, text)
    return True


def _write(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    data = text.encode("utf-8")
    # Recorded journals are kept gzipped (a tenth of the size); mtime 0 keeps a re-recording byte-stable.
    partial.write_bytes(gzip.compress(data, mtime=0) if target.name.endswith(".gz") else data)
    partial.replace(target)


def _remove(target: Path) -> None:
    target.unlink(missing_ok=True)
