"""``api.summarising``: a log line repeated within a window is logged once, its repeats once as a count."""

from __future__ import annotations

import logging
import re

import pytest

from api.summarising import Summarising

LOGGER = "arcsm.test.summarising"


def test_repeats_of_a_kind_are_one_line_then_one_count(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger(LOGGER)
    summary = Summarising(window=60.0)
    summary.attach(logger)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        for n in range(500):
            try:
                raise OSError(24, "Too many open files")
            except OSError:
                logger.exception("accept failed (%d)", n)  # one kind, whatever its arguments
        logger.warning("another kind")
        logger.warning("another kind")
        summary.close()
        logger.error("accept failed (%d)", 501)  # detached: passes
    # The seconds are those since the first of a kind (under a minute, the window).
    lines = [(r.levelname, re.sub(r"last \d+ s", "last N s", r.getMessage())) for r in caplog.records]
    assert lines == [
        ("ERROR", "accept failed (0)"),
        ("WARNING", "another kind"),
        ("ERROR", "499 more like this in the last N s: accept failed (0)"),
        ("WARNING", "1 more like this in the last N s: another kind"),
        ("ERROR", "accept failed (501)"),
    ]
    assert caplog.records[0].exc_info is not None  # the first keeps its traceback
    assert all(r.exc_info is None for r in caplog.records[2:4])
