"""The in-process listener's log lines for its pod's log (sim.listenerlogs): what is written, in which
format, and that the process's own log handlers see what they saw before. No server."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

from sim import listenerlogs

log = logging.getLogger("actions.listener")


async def test_records_of_the_capturing_context_become_lines_in_the_configs_format() -> None:
    text: list[str] = []
    lines: list[str] = []

    async def listener(write: list[str], level: str, json_lines: bool) -> None:
        with listenerlogs.capture(write.append, level=level, json_lines=json_lines):
            log.debug("debug detail")
            await asyncio.create_task(asyncio.sleep(0))
            log.info("session %s opened", "s-1")

    await asyncio.gather(listener(text, "info", False), listener(lines, "debug", True))
    log.info("outside any listener")
    assert len(text) == 1
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO actions.listener: session s-1 opened", text[0]
    )
    entries = [json.loads(line) for line in lines]
    assert [(e["level"], e["logger"], e["msg"]) for e in entries] == [
        ("debug", "actions.listener", "debug detail"),
        ("info", "actions.listener", "session s-1 opened"),
    ]


def test_the_process_handlers_see_what_the_logger_levels_let_through(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with listenerlogs.capture(lambda line: None, level="debug", json_lines=False):
        caplog.set_level(logging.WARNING)
        log.info("quiet")
        log.warning("loud")
        caplog.set_level(logging.DEBUG, logger="actions.listener")
        log.debug("asked for")
    assert [r.getMessage() for r in caplog.records] == ["loud", "asked for"]


def test_the_logger_is_put_back_when_the_last_capture_ends() -> None:
    logger = logging.getLogger(listenerlogs.LOGGER)
    before = (logger.level, logger.propagate, list(logger.handlers))
    with listenerlogs.capture(lambda line: None, level="info", json_lines=True):
        with listenerlogs.capture(lambda line: None, level="info", json_lines=True):
            assert logger.propagate is False
        assert logger.propagate is False
    assert (logger.level, logger.propagate, list(logger.handlers)) == before
