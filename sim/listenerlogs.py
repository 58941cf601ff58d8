"""The in-process listener's log lines in its pod's log, where ``kubectl logs`` finds them.

A real listener pod runs ``arcsm listener``, which logs to stderr at its config's ``log_level``, as text
(``TIME LEVEL LOGGER: MESSAGE``) or JSON lines (``time``, ``level``, ``logger``, ``msg``, ``error`` with a
traceback) as its ``log_format`` says, times in RFC 3339 UTC to the millisecond. The simulated listener
(``sim.containers``) runs the same code in the emulator's process, where several listeners log through
the same ``actions`` loggers. ``capture(write, level=..., json_lines=...)`` sends the records of the code
running in the current context (the listener's task and the tasks it starts, which inherit it) to
``write`` as such lines, until the block ends.

So that the records exist at all,
while any capture is under way the ``actions`` logger is open to every level (when nobody set its level),
does not propagate, and hands the root logger's handlers only the records that would have reached them
otherwise (at the level the logger chain has without this change, read at each record), so the
emulator's own log output and tests' log capture see what they would have seen; the last capture to end
puts the logger back. (pytest attaches its handlers to loggers that do not propagate when a test phase
starts: a capture that spans phases hands those every record.)
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

LOGGER = "actions"


@dataclass(frozen=True)
class _Sink:
    write: Callable[[str], None]
    level: int
    formatter: logging.Formatter


_sink: contextvars.ContextVar[_Sink | None] = contextvars.ContextVar("sim_listener_log", default=None)


class _Rfc3339(logging.Formatter):
    converter = staticmethod(time.gmtime)
    default_time_format = "%Y-%m-%dT%H:%M:%S"
    default_msec_format = "%s.%03dZ"


class _JsonLines(_Rfc3339):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The config's ``log_level`` names.
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


class _PodLogs(logging.Handler):
    def __init__(self, ours: int, propagated: bool) -> None:
        super().__init__()
        self.ours = ours  # the level this module gave the ``actions`` logger (0: it did not)
        self.propagated = propagated  # whether the logger propagated before

    def level_before(self, name: str) -> int:
        """The effective level of logger ``name`` as it was without this module's level."""
        logger: logging.Logger | None = logging.getLogger(name)
        while logger is not None:
            if logger.level and not (logger.name == LOGGER and logger.level == self.ours):
                return logger.level
            logger = logger.parent
        return logging.WARNING

    def emit(self, record: logging.LogRecord) -> None:
        sink = _sink.get()
        if sink is not None and record.levelno >= sink.level:
            sink.write(sink.formatter.format(record))

    def handle(self, record: logging.LogRecord) -> bool:
        handled = super().handle(record)
        if record.levelno >= self.level_before(record.name):
            root = logging.getLogger()
            direct = logging.getLogger(LOGGER).handlers  # some (pytest's) attach to unpropagating loggers
            for handler in root.handlers:
                if record.levelno >= handler.level and handler not in direct:
                    handler.handle(record)
            if not root.handlers and logging.lastResort and record.levelno >= logging.lastResort.level:
                logging.lastResort.handle(record)
        return bool(handled)


_installed: list[_PodLogs] = []
_active = 0  # captures under way


def _install() -> None:
    logger = logging.getLogger(LOGGER)
    ours = 0
    if not logger.level:
        ours = logging.DEBUG
        logger.setLevel(ours)
    handler = _PodLogs(ours, logger.propagate)
    logger.addHandler(handler)
    logger.propagate = False
    _installed.append(handler)


def _uninstall() -> None:
    logger = logging.getLogger(LOGGER)
    for handler in _installed:
        logger.removeHandler(handler)
        logger.propagate = handler.propagated
        if handler.ours and logger.level == handler.ours:
            logger.setLevel(logging.NOTSET)
    _installed.clear()


@contextlib.contextmanager
def capture(write: Callable[[str], None], *, level: str, json_lines: bool) -> Iterator[None]:
    """Within the block (and the tasks started in it), ``actions`` log records at ``level`` (a name of
    ``LEVELS``) or above are lines for ``write``: JSON objects, or text."""
    global _active
    if not _active:
        _install()
    _active += 1
    formatter = _JsonLines() if json_lines else _Rfc3339(TEXT)
    token = _sink.set(_Sink(write, LEVELS.get(level, logging.INFO), formatter))
    try:
        yield
    finally:
        _sink.reset(token)
        _active -= 1
        if not _active:
            _uninstall()
