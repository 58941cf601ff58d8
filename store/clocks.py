"""The time a record is given when it is appended: an injectable clock, the journal's time format, and the
one way a time is shown to a person.

The journal's times are RFC 3339 in UTC with microseconds (``2026-11-30T10:43:36.123456Z``): one fixed
width, so they sort as strings. Replay injects a clock that returns the recorded times.

A person reads a time (a log line's stamp, a transition's time in ``arcsm history`` or ``arcsm replay``)
as ``shown_time`` writes it: RFC 3339 in UTC to the millisecond (``2026-11-30T10:43:36.123Z``), truncated,
so one record's time reads the same wherever it is printed, never later than it was journaled. What a
program reads (a JSON answer, an export) keeps the journal's own text.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time; a naive datetime is taken as UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


@functools.lru_cache(maxsize=256)
def format_time(moment: datetime) -> str:
    # Kept for the last few times: replay formats each decision's clock twice and many decisions share
    # one journal time. A pure function of the value (aware datetimes of one instant are equal keys and
    # give the same text; a naive one is taken as UTC, whatever the time zone).
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="microseconds") + "Z"


class TimeFormatter:
    """``format_time`` for a stream of times, reusing the part up to the second while it is unchanged
    (appends come many to a second; formatting a whole time each costs more than the rest of a stamp)."""

    def __init__(self) -> None:
        self._second: tuple[int, ...] = ()
        self._prefix = ""

    def __call__(self, moment: datetime) -> str:
        if moment.tzinfo is not None and moment.tzinfo is not UTC:
            moment = moment.astimezone(UTC)
        second = (moment.second, moment.minute, moment.hour, moment.day, moment.month, moment.year)
        if second != self._second:
            self._second = second
            self._prefix = moment.replace(microsecond=0, tzinfo=None).isoformat()
        return f"{self._prefix}.{moment.microsecond:06d}Z"


def shown_time(moment: datetime | str) -> str:
    """``moment`` (a datetime, or a time as the journal holds it) as a person reads it: RFC 3339 in UTC to
    the millisecond. A naive datetime is taken as UTC; a text that is no RFC 3339 time is shown as it is
    (a journal imported from elsewhere may hold one), rather than failing the command that prints it."""
    if isinstance(moment, str):
        try:
            parsed = datetime.fromisoformat(moment)
        except ValueError:
            return moment
    else:
        parsed = moment
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed.isoformat(timespec="milliseconds") + "Z"


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
