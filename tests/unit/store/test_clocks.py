"""The journal's time format (``store.clocks.format_time``), which keeps the texts of recent times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from store import clocks


def test_format_time_gives_each_time_its_own_text_while_remembering_recent_ones() -> None:
    at = datetime(2026, 11, 30, 10, 43, 36, 123_456, tzinfo=UTC)
    assert clocks.format_time(at) == "2026-11-30T10:43:36.123456Z"
    assert clocks.format_time(at.astimezone(timezone(timedelta(hours=-3)))) == "2026-11-30T10:43:36.123456Z"
    assert clocks.format_time(at + timedelta(microseconds=1)) == "2026-11-30T10:43:36.123457Z"
    naive = datetime(2026, 11, 30, 10, 43, 36, 123_456)  # taken as UTC, and never equal to an aware time
    assert clocks.format_time(naive) == "2026-11-30T10:43:36.123456Z"
    assert clocks.format_time(naive.replace(hour=11)) == "2026-11-30T11:43:36.123456Z"
    assert clocks.format_time(at) == "2026-11-30T10:43:36.123456Z"
    assert clocks.parse_time(clocks.format_time(at)) == at
