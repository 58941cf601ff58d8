"""The command line's own errors, as a user meets them: the installed ``arcsm`` in a subprocess, real files.

A usage error of any command (an unknown option, an option or argument missing, a value of the wrong
type, an unknown command or an extra argument) is one line on stderr naming the command and its
``--help``, exit status 2; only ``arcsm`` alone shows its help, as a group given nothing does.

Each bad input a user reported is one line on stderr saying what is wrong and what to do, a non-zero exit
(1: the file cannot be used; 2 stays for a bad argument), and no traceback: a journal file given where an
export is expected, an export with a byte that is not UTF-8, a truncated ``.gz``, a truncated journal,
an empty file, a journal whose pages are damaged. ``arcsm run`` refusing a damaged (of any format,
the prototype's too) or newer-format journal leaves it byte for byte as it was; a failed
``arcsm journal import`` leaves nothing at a new path and an existing journal byte for byte as it was.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from store import records
from store.journal import Journal
from tests.helpers import ARCSM

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: c
"""


def arcsm(*args: str, stdin: bytes | None = None) -> tuple[int, str]:
    """Run ``arcsm``; return its exit status and stderr, after checking that stdout stayed empty."""
    done = subprocess.run(
        [ARCSM, *args], input=stdin, capture_output=True, timeout=60, env={**os.environ, "COLUMNS": "100"}
    )
    assert done.stdout == b"", done.stdout[:500]
    return done.returncode, done.stderr.decode()


def one_line(err: str, command: str, *wanted: str) -> None:
    assert len(err.splitlines()) == 1 and err.endswith("\n"), err
    assert err.startswith(f"arcsm {command}: "), err
    for text in wanted:
        assert text in err, err


# (command, arguments after it, what the line says): for each command, an unknown option, an option or
# argument missing, a value of the wrong type, and an unknown command or extra argument.
USAGE_ERRORS = [
    ("", ["--bogus"], "no such option: --bogus"),
    ("", ["--version=yes"], "option '--version' does not take a value"),
    ("", ["bogus"], "no such command 'bogus'"),
    ("", ["rn"], "no such command 'rn'. Did you mean 'run'?"),
    ("run", ["--bogus"], "no such option: --bogus"),
    ("run", [], "missing option '--journal'"),
    ("run", ["--journal"], "option '--journal' requires an argument"),
    (
        "run",
        ["--journal", "j.db", "--http-max-connections", "abc"],
        "invalid value for '--http-max-connections'",
    ),
    ("run", ["--journal", "j.db", "extra"], "got unexpected extra argument(s) (extra)"),
    ("replay", ["--bogus", "x.jsonl"], "no such option: --bogus"),
    ("replay", [], "missing argument 'file'"),
    ("replay", ["--json=yes", "x.jsonl"], "option '--json' does not take a value"),
    ("replay", ["x.jsonl", "extra"], "got unexpected extra argument(s) (extra)"),
    ("demo", ["--bogus"], "no such option: --bogus"),
    ("demo", ["--http"], "option '--http' requires an argument"),
    ("demo", ["--step-timeout", "soon"], "invalid value for '--step-timeout'"),
    ("demo", ["--pace", "soon"], "invalid value for '--pace'"),
    ("demo", ["--pace", "-1"], "invalid value for --pace: must be 0 or more seconds"),
    ("demo", ["--pace", "nan"], "invalid value for --pace: must be 0 or more seconds"),
    ("demo", ["extra"], "got unexpected extra argument(s) (extra)"),
    ("sim", ["--bogus"], "no such option: --bogus"),
    ("sim", ["--kubeconfig"], "option '--kubeconfig' requires an argument"),
    ("sim", ["--port", "abc"], "invalid value for '--port'"),
    ("sim", ["--watch-history", "0"], "invalid value for --watch-history: must be at least 1"),
    ("sim", ["extra"], "got unexpected extra argument(s) (extra)"),
    ("jobs", ["--bogus"], "no such option: --bogus"),
    ("jobs", ["--scale-set", "arc"], "missing option '--github'"),
    (
        "jobs",
        ["--github", "http://127.0.0.1:9", "--scale-set", "arc", "--count", "many"],
        "invalid value for '--count'",
    ),
    (
        "jobs",
        ["--github", "http://127.0.0.1:9", "--scale-set", "arc", "extra"],
        "got unexpected extra argument",
    ),
    ("journal export", ["--journal"], "option '--journal' requires an argument"),
    ("journal", ["bogus"], "no such command 'bogus'"),
]


@pytest.mark.parametrize(
    ("command", "args", "wanted"),
    USAGE_ERRORS,
    ids=[f"{c or 'arcsm'}:{' '.join(a)}" for c, a, _ in USAGE_ERRORS],
)
def test_a_usage_error_is_one_line_naming_the_command_and_its_help(
    command: str, args: list[str], wanted: str
) -> None:
    path = f"arcsm {command}".strip()
    code, err = arcsm(*command.split(), *args)
    assert code == 2
    assert len(err.splitlines()) == 1 and err.endswith(f" (see {path} --help)\n"), err
    assert err.startswith(f"{path}: {wanted}"), err


def test_arcsm_alone_shows_its_help() -> None:
    code, err = arcsm()
    assert code == 2
    assert err.startswith("Usage: arcsm [OPTIONS] COMMAND [ARGS]...\n"), err
    assert "\n  run " in err and "\n  journal " in err


async def write_journal(path: Path, count: int = 300) -> None:
    async with await Journal.open(path) as journal:
        for i in range(count):
            obj = {
                "metadata": {
                    "name": f"r-{i}",
                    "namespace": "arc",
                    "uid": f"u-{i}",
                    "resourceVersion": str(i),
                },
                "spec": {"pad": "y" * 500},
            }
            await journal.append([records.observed("ADDED", "EphemeralRunner", obj)])


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.db"
    asyncio.run(write_journal(path))
    return path


@pytest.fixture
def export(journal: Path, tmp_path: Path) -> Path:
    path = tmp_path / "export.jsonl"
    with path.open("wb") as out:
        subprocess.run([ARCSM, "journal", "export", "--journal", str(journal)], stdout=out, check=True)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def zero_pages(path: Path, *, at: int, size: int = 16384) -> None:
    with path.open("r+b") as file:
        file.seek(at)
        file.write(b"\0" * size)


def test_replay_of_a_journal_file_says_to_add_journal_file(journal: Path) -> None:
    code, err = arcsm("replay", str(journal))
    assert code == 1
    one_line(err, "replay", "is a journal file (SQLite), not JSONL: add --journal-file")
    code, err = arcsm("journal", "import", "--journal", str(journal.with_name("new.db")), str(journal))
    assert code == 1
    one_line(err, "journal import", "is a journal file (SQLite), not a JSONL export")


def test_an_export_with_a_byte_that_is_not_utf8_is_named_by_its_line(export: Path, tmp_path: Path) -> None:
    lines = export.read_bytes().splitlines(keepends=True)
    assert len(lines) == 300
    lines[41] = lines[41].replace(b"r-41", b"r-\xff41")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines))
    code, err = arcsm("replay", str(bad))
    assert code == 1
    one_line(err, "replay", "line 42: not UTF-8 text (byte 0xff")
    target = tmp_path / "imported.db"
    for source, stdin in ((str(bad), None), ("-", bad.read_bytes())):
        code, err = arcsm("journal", "import", "--journal", str(target), source, stdin=stdin)
        assert code == 1
        one_line(err, "journal import", "line 42: not UTF-8 text")
    assert not target.exists()  # nothing of the refused imports


def test_a_failed_import_leaves_nothing_at_a_new_path(export: Path, tmp_path: Path) -> None:
    lines = export.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join([*lines[:250], b"{oops\n", *lines[250:]]))
    before = set(tmp_path.iterdir())
    target = tmp_path / "new.db"
    for source, stdin in ((str(bad), None), ("-", bad.read_bytes())):
        code, err = arcsm("journal", "import", "--journal", str(target), source, stdin=stdin)
        assert code == 1
        one_line(err, "journal import", "line 251: not JSON")
        assert set(tmp_path.iterdir()) == before  # no journal, -wal, -shm, lock or half-written file
    done = subprocess.run(
        [ARCSM, "journal", "import", "--journal", str(target), str(export)], capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert set(tmp_path.iterdir()) - before == {target, target.with_name("new.db.lock")}
    verified = subprocess.run(
        [ARCSM, "journal", "verify", "--journal", str(target)], capture_output=True, text=True, timeout=60
    )
    assert verified.stdout.startswith("journal ok: 300 records (seq 1–300)"), verified


def test_a_failed_import_leaves_an_existing_journal_as_it_was(journal: Path, tmp_path: Path) -> None:
    more = tmp_path / "more.jsonl"
    record = {"seq": 301, "at": "2025-06-01T00:00:00.000000Z", "type": "timer", "kind": "Pod"}
    more.write_text(json.dumps(record) + "\n{oops\n")
    assert not journal.with_name("journal.db-wal").exists()  # closed: the file is the whole journal
    before = digest(journal)
    code, err = arcsm("journal", "import", "--journal", str(journal), str(more))
    assert code == 1
    one_line(err, "journal import", "line 2: not JSON")
    assert digest(journal) == before


def test_a_truncated_gz_says_it_is_truncated(export: Path, tmp_path: Path) -> None:
    whole = gzip.compress(export.read_bytes())
    truncated = tmp_path / "export.jsonl.gz"
    truncated.write_bytes(whole[: len(whole) // 2])
    code, err = arcsm("replay", str(truncated))
    assert code == 1
    one_line(err, "replay", "the gzip file ends early (it is truncated)")
    code, err = arcsm("journal", "import", "--journal", str(tmp_path / "imported.db"), str(truncated))
    assert code == 1
    one_line(err, "journal import", "the gzip file ends early (it is truncated)")


def test_a_truncated_journal_is_one_line_for_export_and_history(journal: Path) -> None:
    truncated = journal.with_name("truncated.db")
    truncated.write_bytes(journal.read_bytes()[: journal.stat().st_size // 2])
    code, err = arcsm("journal", "export", "--journal", str(truncated))
    assert code == 1
    one_line(err, "journal export", "damaged")
    code, err = arcsm("history", "arc/r-1", "--kind", "EphemeralRunner", "--journal", str(truncated))
    assert code == 1
    one_line(err, "history", "damaged", "arcsm journal verify")


def test_an_empty_file_is_not_a_journal(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    for command, args in (
        ("history", ("history", "default/arc", "--journal", str(empty))),
        ("journal export", ("journal", "export", "--journal", str(empty))),
        ("journal verify", ("journal", "verify", "--journal", str(empty))),
        ("replay", ("replay", "--journal-file", str(empty))),
    ):
        code, err = arcsm(*args)
        assert code == 1
        one_line(err, command, "is empty, not an arcsm journal")


def test_history_on_a_journal_with_damaged_pages_fails(journal: Path) -> None:
    code, err = arcsm("history", "arc/r-250", "--kind", "EphemeralRunner", "--journal", str(journal))
    assert (code, err) == (0, "")  # known, no transitions
    zero_pages(journal, at=journal.stat().st_size // 3)
    code, err = arcsm("history", "arc/r-250", "--kind", "EphemeralRunner", "--journal", str(journal))
    assert code == 1
    one_line(err, "history", "the journal is damaged", "arcsm journal verify")


def write_format_0(path: Path, count: int = 300) -> None:
    """A journal as the prototype wrote it (format 0): no checksums, watch-shaped observed bodies."""
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE records (seq INTEGER PRIMARY KEY, at TEXT, type TEXT, kind TEXT, namespace TEXT, "
            "name TEXT, uid TEXT, resource_version TEXT, body TEXT)"
        )
        db.execute("CREATE INDEX records_by_object ON records (kind, namespace, name, seq)")
        for i in range(count):
            obj = {
                "metadata": {"name": f"r-{i}", "namespace": "arc", "uid": f"u-{i}"},
                "spec": {"pad": "y" * 500},
            }
            body = json.dumps({"type": "ADDED", "object": obj})
            db.execute(
                "INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    i + 1,
                    f"2025-06-01T00:00:{i % 60:02d}.000000Z",
                    "observed",
                    "EphemeralRunner",
                    "arc",
                    f"r-{i}",
                    f"u-{i}",
                    str(i),
                    body,
                ),
            )
    db.close()


@pytest.mark.parametrize(
    "damage",
    [
        "newer-format",
        "checksum",
        "pages",
        "format-0-pages",
        "format-0-record",
        "format-2-checksum",
        "format-2-pages",
    ],
)
def test_run_leaves_a_journal_it_refuses_as_it_was(journal: Path, tmp_path: Path, damage: str) -> None:
    if damage.startswith("format-0"):
        journal.unlink()
        write_format_0(journal)
    with sqlite3.connect(journal) as db:
        db.execute("PRAGMA journal_mode = DELETE")  # one file, so its hash is the whole journal
        if damage.startswith("format-2"):  # as an older arcsm wrote it: refused before its upgrade
            db.execute("DROP TRIGGER owners_of_pruned")
            db.execute("DROP TABLE owners")
            db.execute("PRAGMA user_version = 2")
        if damage == "newer-format":
            db.execute("PRAGMA user_version = 9")
        elif damage.endswith("checksum"):
            db.execute("UPDATE records SET body = replace(body, 'r-3', 'r-8') WHERE seq = 4")
        elif damage == "format-0-record":
            db.execute("UPDATE records SET body = substr(body, 1, 40) WHERE seq = 250")
    db.close()
    if damage.endswith("pages"):
        zero_pages(journal, at=journal.stat().st_size // 3)
    before = digest(journal)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    code, err = arcsm("run", "--journal", str(journal), "--kubeconfig", str(kubeconfig), "--no-leader-elect")
    assert code == 1
    wanted = {
        "newer-format": "newer than this arcsm reads",
        "format-0-record": "cannot upgrade record seq 250 of format 0",
    }.get(damage, "is damaged")
    one_line(err, "run", wanted, "was left as it was")
    assert digest(journal) == before
    assert not journal.with_name("journal.db-wal").exists()


def flip_bit(path: Path, at: int) -> None:
    with path.open("r+b") as file:
        file.seek(at)
        byte = file.read(1)[0]
        file.seek(at)
        file.write(bytes([byte ^ 0x10]))


def index_page(path: Path) -> int:
    """The file offset of a leaf page of the journal's index by record type."""
    with sqlite3.connect(path) as db:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        [pageno] = db.execute(
            "SELECT pageno FROM dbstat WHERE name = 'records_by_type' AND pagetype = 'leaf' LIMIT 1"
        ).fetchone()
    db.close()
    return int((pageno - 1) * size)


async def write_journal_with_a_snapshot(path: Path) -> None:
    async with await Journal.open(path) as journal:
        for i in range(300):
            obj = {
                "metadata": {"name": f"r-{i}", "namespace": "arc", "uid": f"u-{i}", "resourceVersion": str(i)}
            }
            await journal.append([records.observed("ADDED", "EphemeralRunner", obj)])
            if i == 200:
                await journal.snapshot()


RAW_SQLITE = ("malformed", "***", "sqlite3", "Traceback")


@pytest.mark.parametrize(
    "damage",
    [
        "missing-seq",  # a record deleted from the middle
        "edited-row-below-the-snapshot",  # a record the start does not replay from
        "bit-flip-in-the-header",  # SQLite cannot even read its schema
        "bit-flip-in-an-index",  # only SQLite's integrity check sees it
    ],
)
def test_run_refuses_what_verify_calls_damaged_in_one_clear_line(tmp_path: Path, damage: str) -> None:
    """``arcsm run`` starts on a journal only when ``arcsm journal verify`` passes it; either command says
    what is damaged in one line, in words rather than SQLite's, and leaves the file as it was."""
    journal = tmp_path / "journal.db"
    asyncio.run(write_journal_with_a_snapshot(journal))
    with sqlite3.connect(journal) as db:
        db.execute("PRAGMA journal_mode = DELETE")  # one file, so its hash is the whole journal
        if damage == "missing-seq":
            db.execute("DELETE FROM records WHERE seq = 250")
        elif damage == "edited-row-below-the-snapshot":
            db.execute("UPDATE records SET body = replace(body, 'r-3', 'r-8') WHERE seq = 4")
    db.close()
    if damage == "bit-flip-in-the-header":
        flip_bit(journal, 100)
    elif damage == "bit-flip-in-an-index":
        flip_bit(journal, index_page(journal) + 9)  # the first cell's offset
    before = digest(journal)
    code, err = arcsm("journal", "verify", "--journal", str(journal))
    assert code == 1
    one_line(err, "journal verify", "damaged")
    assert not [raw for raw in RAW_SQLITE if raw in err], err
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    code, err = arcsm("run", "--journal", str(journal), "--kubeconfig", str(kubeconfig), "--no-leader-elect")
    assert code == 1
    one_line(err, "run", "is damaged", "was left as it was", "arcsm journal verify")
    assert not [raw for raw in RAW_SQLITE if raw in err], err
    assert digest(journal) == before
