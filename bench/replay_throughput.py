"""Benchmark: how fast ``arcsm replay --check`` replays a long journal, and whether its memory stays flat.

The journal is built from the recorded journals of ``tests/journals/`` (real controller runs): each one in
turn, again and again until N records, with fresh seqs (the seqs a record names — a decision's ``seq``, an
``effect_result``'s ``effectSeq``, a ``timer``'s ``effects`` — moved with them), and after each one an
``observed`` DELETED record for every object it left, so the next one starts from an empty world. Every
decision of it replays equal, so the replay does all its work (nothing stops at a mismatch). It is written
as an export (``.jsonl``, as ``arcsm journal export`` writes it) and imported into a journal file.

Each figure is measured in a fresh subprocess (its peak RSS is ``ru_maxrss``), over the same files:

* ``json.loads`` — every line of the export parsed, nothing else (the floor for reading an export);
* ``sqlite3 scan`` — every row of the journal table fetched with the standard library (the floor for
  reading a journal file);
* ``replay export`` / ``replay file`` — ``arcsm replay --check`` over the export, and over the journal
  file with ``--journal-file``.

Records/s and the ratio of each replay to its floor are printed at N and at 2N; peak RSS at both shows
whether memory depends on the journal's length.

Run: ``.venv/bin/python bench/replay_throughput.py [--records N]`` (N defaults to 100,000).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JOURNALS = sorted((ROOT / "tests" / "journals").glob("*.jsonl.gz"))
AT = "2026-01-01T00:00:00.000000Z"


def _moved(record: dict[str, Any], seqs: dict[int, int]) -> dict[str, Any]:
    """``record`` with its seq, and the seqs its body names, as ``seqs`` maps them."""
    record = {**record, "seq": seqs[record["seq"]]}
    body = record.get("body")
    if not isinstance(body, dict):
        return record
    if record["type"] == "decision" and isinstance(body.get("seq"), int):
        record["body"] = {**body, "seq": seqs.get(body["seq"], 0)}
    elif record["type"] == "effect_result" and isinstance(body.get("effectSeq"), int):
        record["body"] = {**body, "effectSeq": seqs[body["effectSeq"]]}
    elif record["type"] == "timer" and isinstance(body.get("effects"), list):
        record["body"] = {**body, "effects": [seqs[seq] for seq in body["effects"]]}
    return record


def _recorded() -> list[list[dict[str, Any]]]:
    found = []
    for path in JOURNALS:
        with gzip.open(path, "rb") as lines:
            found.append([json.loads(line) for line in lines if line.strip()])
    return found


def _effects_after(journal: list[dict[str, Any]], i: int) -> int:
    """How many ``effect`` records follow the record at ``i`` (appended with it, when it is a decision)."""
    n = 0
    while journal[i]["type"] == "decision" and i + n + 1 < len(journal):
        if journal[i + n + 1]["type"] != "effect":
            break
        n += 1
    return n


def story(count: int, pod_updates: int = 0) -> Iterator[dict[str, Any]]:
    """Up to ``count`` records: the recorded journals one after another, each cleared away after it; with
    ``pod_updates``, each observed Pod is observed that many times more (a status or resync churn that no
    decision reads)."""
    recorded = _recorded()
    seq = 0
    while True:
        for journal in recorded:
            seqs, alive = {0: 0}, {}
            for i, record in enumerate(journal):
                seq += 1
                seqs[record["seq"]] = seq
                moved = _moved(record, seqs)
                if seq + _effects_after(journal, i) > count:
                    return  # not a decision without the effects appended with it
                yield moved
                if moved["type"] != "observed":
                    continue
                key = (moved["kind"], moved["namespace"], moved["name"])
                if moved["body"].get("event") == "DELETED":
                    alive.pop(key, None)
                    continue
                alive[key] = moved
                for _ in range(pod_updates if moved["kind"] == "Pod" else 0):
                    seq += 1
                    if seq > count:
                        return
                    yield {**moved, "seq": seq, "body": {**moved["body"], "event": "MODIFIED"}}
            for kind, namespace, name in list(alive):
                seq += 1
                if seq > count:
                    return
                last = alive[kind, namespace, name]
                yield {
                    "seq": seq,
                    "at": last["at"],
                    "type": "observed",
                    "kind": kind,
                    "namespace": namespace,
                    "name": name,
                    "uid": last["uid"],
                    "resourceVersion": last["resourceVersion"],
                    "body": {"event": "DELETED", "object": last["body"]["object"]},
                }


def build(directory: Path, count: int, pod_updates: int = 0) -> tuple[Path, Path]:
    """The export and the journal file of ``count`` records."""
    from store import exporting
    from store.records import Record

    export = directory / f"replay-{count}-{pod_updates}.jsonl"
    with export.open("w", encoding="utf-8") as out:
        for data in story(count, pod_updates):
            out.write(exporting.to_line(Record.from_json(data)) + "\n")
    database = directory / f"replay-{count}-{pod_updates}.db"
    database.unlink(missing_ok=True)
    with export.open("rb") as lines:
        asyncio.run(exporting.import_lines(database, lines))
    return export, database


# -- the measured modes, each run in a subprocess of its own -------------------------------------------------


def _lines(export: Path) -> int:
    with export.open("rb") as lines:
        return sum(1 for _ in lines)


def _json_loads(export: Path, database: Path) -> int:
    count = 0
    with export.open("rb") as lines:
        for line in lines:
            json.loads(line)
            count += 1
    return count


def _sqlite_scan(export: Path, database: Path) -> int:
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    count = 0
    cursor = db.execute(
        "SELECT seq, at, type, kind, namespace, name, uid, resource_version, body, checksum FROM records "
        "ORDER BY seq"
    )
    while page := cursor.fetchmany(2_000):
        count += len(page)
    db.close()
    return count


def _replay(args: list[str]) -> None:
    from typer.testing import CliRunner

    from controller.commands.cli import app

    result = CliRunner().invoke(app, ["replay", "--check", *args])
    if result.exit_code != 0 or not result.output.endswith("all equal\n"):
        raise SystemExit(f"arcsm replay failed: {result.output}")


def _replay_export(export: Path, database: Path) -> int:
    _replay([str(export)])
    return _lines(export)


def _replay_file(export: Path, database: Path) -> int:
    _replay(["--journal-file", str(database)])
    return _lines(export)


MODES = {
    "json.loads": _json_loads,
    "sqlite3 scan": _sqlite_scan,
    "replay export": _replay_export,
    "replay file": _replay_file,
}
FLOORS = {"replay export": "json.loads", "replay file": "sqlite3 scan"}


def child(mode: str, export: Path, database: Path) -> None:
    import controller.commands.replay_command  # noqa: F401  (importing is not what is measured)

    wall, cpu = time.perf_counter(), time.process_time()
    count = MODES[mode](export, database)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # ru_maxrss is KiB on Linux
    print(json.dumps({"records": count, "wall": wall, "cpu": cpu, "rss_mb": rss}))


def measure(mode: str, export: Path, database: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(export), str(database)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument(
        "--pod-updates",
        type=int,
        nargs="+",
        default=[0, 8],
        help="extra observations of each observed Pod, one journal per value (default: 0 8)",
    )
    parser.add_argument("--child", nargs=3, metavar=("MODE", "EXPORT", "DATABASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, export, database = args.child
        child(mode, Path(export), Path(database))
        return
    print("records/s by CPU time (wall-clock records/s in brackets); × floor is the CPU-time ratio")
    header = (
        f"{'pod upd.':>8} {'records':>8} {'decisions':>9}  {'mode':<14} {'records/s':>19}  {'× floor':>7}"
    )
    print(f"{header}  {'peak RSS':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for pod_updates in args.pod_updates:
            for count in (args.records, 2 * args.records):
                export, database = build(Path(tmp), count, pod_updates)
                with export.open("rb") as lines:
                    decisions = sum(b'"type":"decision"' in line for line in lines)
                figures = {mode: measure(mode, export, database) for mode in MODES}
                for mode, figure in figures.items():
                    rate, wall = figure["records"] / figure["cpu"], figure["records"] / figure["wall"]
                    floor = figures.get(FLOORS.get(mode, ""))
                    ratio = f"{rate / (floor['records'] / floor['cpu']):.3f}" if floor else ""
                    print(
                        f"{pod_updates:>8} {count:>8} {decisions:>9}  {mode:<14} "
                        f"{rate:>9,.0f} ({wall:>7,.0f})  {ratio:>7}  {figure['rss_mb']:>5.0f} MB",
                        flush=True,
                    )
                export.unlink()
                database.unlink()


if __name__ == "__main__":
    main()
