"""The journal's time format (``store.clocks.format_time``), which keeps the texts of recent times, and the
one a person reads (``store.clocks.shown_time``)."""

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


def test_a_time_is_shown_in_utc_to_the_millisecond_truncated() -> None:
    at = datetime(2026, 11, 30, 10, 43, 36, 123_999, tzinfo=UTC)
    assert clocks.shown_time(at) == "2026-11-30T10:43:36.123Z", "never later than the time itself"
    assert clocks.shown_time(at.astimezone(timezone(timedelta(hours=5)))) == "2026-11-30T10:43:36.123Z"
    assert clocks.shown_time(at.replace(tzinfo=None)) == "2026-11-30T10:43:36.123Z", "naive: taken as UTC"
    assert clocks.shown_time(at.replace(microsecond=0)) == "2026-11-30T10:43:36.000Z", "always 3 digits"


def test_a_journal_time_is_shown_as_its_datetime_is() -> None:
    text = clocks.format_time(datetime(2026, 11, 30, 10, 43, 36, 123_456, tzinfo=UTC))
    assert clocks.shown_time(text) == clocks.shown_time(clocks.parse_time(text)) == "2026-11-30T10:43:36.123Z"
    assert clocks.shown_time("2026-11-30T10:43:36Z") == "2026-11-30T10:43:36.000Z"
    assert clocks.shown_time("2026-11-30T13:43:36.5+03:00") == "2026-11-30T10:43:36.500Z"
    assert clocks.shown_time("not a time") == "not a time", "shown as held rather than failing the command"
