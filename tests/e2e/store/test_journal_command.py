"""``arcsm journal export|import|verify`` as a user runs them: the installed console script, real files.

A journal is written through the store, then exported, imported (from a file and from stdin) and
verified by the command; damage makes ``verify`` exit non-zero with one line naming the seq.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import sqlite3

from store import records
from store.journal import Journal
from store.records import Record, RecordType
from tests.helpers import ARCSM

FIELDS = ["seq", "at", "type", "kind", "namespace", "name", "uid", "resourceVersion", "body"]


async def arcsm(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        ARCSM,
        "journal",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def write_journal(path: pathlib.Path) -> None:
    async with await Journal.open(path) as journal:
        for i in range(5):
            obj = {
                "metadata": {
                    "name": f"runner-{i}",
                    "namespace": "arc",
                    "uid": f"u-{i}",
                    "resourceVersion": str(i),
                }
            }
            await journal.append([records.observed("ADDED", "EphemeralRunner", obj)])
        await journal.append(
            [
                Record(
                    type=RecordType.DECISION, kind="AutoscalingRunnerSet", name="ars", body={"to": "Running"}
                ),
                Record(type=RecordType.EFFECT, kind="AutoscalingRunnerSet", name="ars", body={"patch": {}}),
            ]
        )


async def test_export_prints_one_json_record_per_line(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "journal.sqlite"
    await write_journal(path)
    code, out, err = await arcsm("export", "--journal", str(path))
    assert (code, err) == (0, "")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["seq"] for line in lines] == [1, 2, 3, 4, 5, 6, 7]
    assert all(list(line) == FIELDS for line in lines)
    assert lines[0]["kind"] == "EphemeralRunner" and lines[0]["resourceVersion"] == "0"
    code, out, _ = await arcsm("export", "--journal", str(path), "--since", "5")
    assert [json.loads(line)["seq"] for line in out.splitlines()] == [6, 7]


async def test_import_from_a_file_and_from_stdin_round_trips(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "journal.sqlite"
    await write_journal(path)
    _, exported, _ = await arcsm("export", "--journal", str(path))
    (tmp_path / "recorded.jsonl").write_text(exported)

    code, out, err = await arcsm(
        "import", "--journal", str(tmp_path / "a.sqlite"), str(tmp_path / "recorded.jsonl")
    )
    assert (code, err) == (0, "")
    assert out.strip() == f"imported 7 records (seq 1–7) into {tmp_path / 'a.sqlite'}"
    code, out, err = await arcsm(
        "import", "--journal", str(tmp_path / "b.sqlite"), "-", stdin=exported.encode()
    )
    assert code == 0, err
    for copy in ("a.sqlite", "b.sqlite"):
        assert (await arcsm("export", "--journal", str(tmp_path / copy)))[1] == exported


async def test_verify_passes_an_intact_journal(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "journal.sqlite"
    await write_journal(path)
    code, out, err = await arcsm("verify", "--journal", str(path))
    assert (code, err) == (0, "")
    assert out.strip() == "journal ok: 7 records (seq 1–7), 0 snapshots"


async def test_verify_names_the_damaged_record_in_one_line(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "journal.sqlite"
    await write_journal(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE records SET body = replace(body, 'runner-3', 'runner-8') WHERE seq = 4")
    code, out, err = await arcsm("verify", "--journal", str(path))
    assert code == 1
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith("arcsm journal verify: journal damaged at seq 4: record checksum mismatch")


async def test_errors_are_one_line(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "missing.sqlite"
    for command in ("export", "verify"):
        code, out, err = await arcsm(command, "--journal", str(missing))
        assert (code, out) == (1, "")
        assert err == f"arcsm journal {command}: no journal at {missing}\n"
    assert not missing.exists()
    code, _, err = await arcsm(
        "import", "--journal", str(tmp_path / "j.sqlite"), "-", stdin=b'{"seq": 1}\n{oops\n'
    )
    assert code == 1
    assert err.startswith("arcsm journal import: line 1: not a journal record")
    assert len(err.splitlines()) == 1
    code, _, err = await arcsm(
        "import", "--journal", str(tmp_path / "j.sqlite"), str(tmp_path / "nope.jsonl")
    )
    assert code == 1
    assert err.startswith("arcsm journal import: cannot read")
