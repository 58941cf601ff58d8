"""Log lines are stamped in RFC 3339, UTC, to the millisecond, in both formats: a JSON line's ``time`` and
the start of a text line, whatever the process's time zone."""

from __future__ import annotations

import io
import json
import logging
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from controller.commands import logformat

RFC3339_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
# 2026-12-01T23:25:38.125Z: a fraction a float holds exactly, so the milliseconds are 125, not 124.999…
CREATED = 1796167538.125


@pytest.fixture(autouse=True)
def far_from_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process runs 10 hours ahead of UTC, so a stamp in local time would show 09:25 the next day."""
    monkeypatch.setenv("TZ", "Etc/GMT-10")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def record_at(created: float) -> logging.LogRecord:
    record = logging.LogRecord("arcsm.controller", logging.INFO, __file__, 1, "started", None, None)
    record.created = created
    record.msecs = (created - int(created)) * 1000
    return record


def test_a_json_line_has_the_time_in_utc_with_milliseconds() -> None:
    line = json.loads(logformat.JsonLines().format(record_at(CREATED)))
    assert line["time"] == "2026-12-01T23:25:38.125Z"


def test_a_text_line_starts_with_the_same_stamp() -> None:
    text = logformat.formatter("text", io.StringIO()).format(record_at(CREATED))
    assert text == "2026-12-01T23:25:38.125Z INFO arcsm.controller: started"


def test_a_record_made_now_is_stamped_at_its_own_time() -> None:
    record = logging.LogRecord("arcsm", logging.WARNING, __file__, 1, "now", None, None)
    for formatter in (logformat.JsonLines(), logformat.formatter("text", io.StringIO())):
        written = formatter.format(record)
        [stamp] = RFC3339_MS.findall(written)
        at = datetime.fromisoformat(stamp)
        assert at.utcoffset() == timedelta(0)
        # The stamp truncates to the millisecond: the record's own time is in that millisecond (its end
        # included, where a float rounds up to it).
        assert timedelta(0) <= datetime.fromtimestamp(record.created, UTC) - at <= timedelta(milliseconds=1)
