"""Repeated log lines summarised: the first of a kind is logged, the repeats are counted, and one line
says how many there were once ``window`` seconds have passed.

A hostile or broken client can make the HTTP server fail the same way thousands of times a second
(descriptors exhausted, bad requests, clients gone mid-answer); one line with its traceback, then one
line a window with the count, tells the operator as much and keeps the log readable.

    summary = Summarising(window=60.0)
    summary.attach(logging.getLogger("uvicorn.error"))
    ...
    summary.close()   # the counts still pending are logged, the filter detached

A kind is the logger and the message's format string, so ``"accept failed: %s"`` is one kind whatever
its arguments. The clock is the event loop's; the summary line is logged by a timer of the running loop
(or by the next record of a kind whose window ended, outside one).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

WINDOW = 60.0
SUMMARY = "arcsm_summary"  # set on the records this filter logs itself, so they pass it


@dataclass
class _Tally:
    logger: logging.Logger
    level: int
    text: str
    since: float
    until: float
    repeats: int = 0


class Summarising(logging.Filter):
    def __init__(self, window: float = WINDOW) -> None:
        super().__init__()
        self._window = window
        self._tallies: dict[tuple[str, str], _Tally] = {}
        self._loggers: list[logging.Logger] = []
        self._timer: asyncio.TimerHandle | None = None

    def attach(self, logger: logging.Logger) -> None:
        logger.addFilter(self)
        self._loggers.append(logger)

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, SUMMARY, False):
            return True
        key = (record.name, str(record.msg))
        now = time.monotonic()
        tally = self._tallies.get(key)
        if tally is not None and now < tally.until:
            tally.repeats += 1
            self._schedule(tally.until - now)
            return False
        if tally is not None:
            self._summarise(tally)
        text = record.getMessage().splitlines()[0] if record.getMessage() else str(record.msg)
        self._tallies[key] = _Tally(
            logging.getLogger(record.name), record.levelno, text, since=now, until=now + self._window
        )
        return True

    def flush(self) -> None:
        """Log the counts of the windows that have ended."""
        self._timer = None
        now = time.monotonic()
        for key, tally in list(self._tallies.items()):
            if now >= tally.until:
                self._summarise(tally)
                del self._tallies[key]
        if any(t.repeats for t in self._tallies.values()):
            self._schedule(min(t.until for t in self._tallies.values() if t.repeats) - now)

    def close(self) -> None:
        """Log every count still pending and detach from the loggers."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for tally in self._tallies.values():
            self._summarise(tally)
        self._tallies.clear()
        for logger in self._loggers:
            logger.removeFilter(self)
        self._loggers.clear()

    def _summarise(self, tally: _Tally) -> None:
        if tally.repeats:
            tally.logger.log(
                tally.level,
                "%d more like this in the last %.0f s: %s",
                tally.repeats,
                min(time.monotonic(), tally.until) - tally.since,
                tally.text,
                extra={SUMMARY: True},
            )
            tally.repeats = 0

    def _schedule(self, delay: float) -> None:
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: the next record of this kind after its window logs the count
        self._timer = loop.call_later(max(delay, 0.0), self.flush)
