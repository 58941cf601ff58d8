"""The time a record is given when it is appended: an injectable clock, and the journal's time format.

Times are RFC 3339 in UTC with microseconds (``2026-11-30T10:43:36.123456Z``): one fixed width, so they
sort as strings. Replay injects a clock that returns the recorded times.
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


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
