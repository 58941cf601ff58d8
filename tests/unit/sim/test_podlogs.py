"""Container log files in the CRI format and what a log request renders of them (sim.podlogs)."""

from __future__ import annotations

from pathlib import Path

from sim import podlogs


def test_lines_are_written_as_cri_records_with_partial_ones_marked(tmp_path: Path) -> None:
    log = tmp_path / "0.log"
    out, err = podlogs.LogWriter(log, "stdout"), podlogs.LogWriter(log, "stderr")
    out.write(b"one\ntw")
    err.write(b"oops\n")
    out.write(b"o\nno newline")
    out.close()
    err.close()
    records = [line.split(b" ", 3) for line in log.read_bytes().splitlines()]
    assert [(r[1], r[2], r[3]) for r in records] == [
        (b"stdout", b"F", b"one"),
        (b"stderr", b"F", b"oops"),
        (b"stdout", b"F", b"two"),
        (b"stdout", b"P", b"no newline"),
    ]
    assert all(r[0].endswith(b"Z") and b"T" in r[0] for r in records)
    assert podlogs.render(log.read_bytes(), tail=None, timestamps=False, since_seconds=None) == (
        b"one\noops\ntwo\nno newline"
    )


def test_long_lines_are_cut_and_tail_counts_whole_lines(tmp_path: Path) -> None:
    log = tmp_path / "0.log"
    writer = podlogs.LogWriter(log, "stdout")
    writer.write(b"x" * (podlogs.MAX_LINE + 10) + b"\nlast\n")
    data = log.read_bytes()
    assert [line.split(b" ", 3)[2] for line in data.splitlines()] == [b"P", b"F", b"F"]
    assert podlogs.render(data, tail=1, timestamps=False, since_seconds=None) == b"last\n"
    assert podlogs.render(data, tail=2, timestamps=False, since_seconds=None).startswith(b"xxx")
    assert podlogs.render(data, tail=0, timestamps=False, since_seconds=None) == b""


def test_timestamps_prefix_each_line_and_since_filters(tmp_path: Path) -> None:
    old = f"{podlogs.timestamp(0)} stdout F ancient\n".encode()
    new = f"{podlogs.timestamp()} stdout F recent\n".encode()
    assert podlogs.render(old + new, tail=None, timestamps=False, since_seconds=60) == b"recent\n"
    stamped = podlogs.render(new, tail=None, timestamps=True, since_seconds=None)
    assert stamped.endswith(b"Z recent\n") and stamped[:4].isdigit()


def test_timestamps_are_rfc3339_nano_with_trailing_zeros_trimmed() -> None:
    assert podlogs.timestamp(1_700_000_000_000_000_000) == "2023-11-14T22:13:20Z"
    assert podlogs.timestamp(1_700_000_000_120_000_000) == "2023-11-14T22:13:20.12Z"
    assert podlogs.timestamp(1_700_000_000_000_000_001) == "2023-11-14T22:13:20.000000001Z"
