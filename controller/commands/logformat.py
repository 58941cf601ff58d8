"""The controller's log lines on stderr: text for a person at a terminal, one JSON object per line for a
cluster's log collector.

``--log-format auto`` picks JSON when stderr is not a terminal (a pod's is not). A JSON line carries
``time``, ``level``, ``logger`` and ``msg``, the object keys of ``logkeys.FIELDS`` where the line is about
an object (kind, namespace, name, seq, from_phase, to_phase, trigger), and ``error`` with the traceback
when there is one. A text line is the message, which names its object and phases itself.

Both formats stamp a line with its time in RFC 3339, in UTC, to the millisecond
(``2026-12-01T23:25:38.123Z``, ``store.clocks.shown_time``, as every command prints a time): what log
collectors parse without a format of their own, and one order for the lines of several pods. A local
offset would have two replicas, or a pod and the person reading its logs, write the same moment
differently; UTC is also what Kubernetes stamps its own times in.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

from controller.loop import logkeys
from store import clocks

# Upstream ARC's names, and Python's "warning" for "warn".
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
FORMATS = ("auto", "json", "text")
# A text line names its object in the message itself (a transition: "Kind/ns/name: From → To (trigger)").
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# Libraries that log every request or state change at INFO; the controller logs what matters
# (transitions with their keys, failed effects) itself.
NOISY = ("httpcore", "httpx", "hpack", "aiohttp.access", "aiosqlite", "transitions", "asyncio")
# Loggers that write whole response bodies at DEBUG, Secrets' data among them (kubernetes_asyncio's REST
# client): never below INFO, whatever the level asked for.
SECRET_BEARING = ("kubernetes_asyncio.client.rest",)
# Azure's SDK warns of every failed token request with what it sent through, a proxy URL's password
# among it: only its errors are let through (arcsm says what failed in its own line, scrubbed).
SDK_ERRORS_ONLY = ("azure",)


def object_keys(record: logging.LogRecord) -> dict[str, Any]:
    """The object keys a log record carries, as a formatter writes them."""
    return {key: getattr(record, attr) for key, attr in logkeys.FIELDS if hasattr(record, attr)}


class Rfc3339(logging.Formatter):
    """A formatter whose times (``%(asctime)s``, ``formatTime``) are RFC 3339 in UTC with milliseconds."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        # The record's whole seconds and logging's own milliseconds (``record.msecs``), so the stamp is
        # never rounded up past the moment the record was made.
        second = datetime.fromtimestamp(int(record.created), UTC)
        return clocks.shown_time(second.replace(microsecond=int(record.msecs) * 1000))


class JsonLines(Rfc3339):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(object_keys(record))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def formatter(fmt: str, stream: TextIO) -> logging.Formatter:
    """The formatter of ``fmt`` (one of ``FORMATS``) for lines written to ``stream``."""
    if fmt == "json" or (fmt == "auto" and not stream.isatty()):
        return JsonLines()
    return Rfc3339(TEXT)


def configure_logging(level: str, fmt: str = "auto", *, noisy_floor: int = logging.WARNING) -> None:
    """Send every log line at ``level`` (a key of ``LEVELS``) or above to stderr in ``fmt``, the noisy
    libraries' at ``noisy_floor`` or above."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt, sys.stderr))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(LEVELS[level])
    quiet_libraries(root.level, noisy_floor=noisy_floor)


def quiet_libraries(level: int, *, noisy_floor: int = logging.WARNING) -> None:
    """Hold the noisy libraries at ``noisy_floor`` (or ``level`` if higher), the loggers that would
    write Secrets at INFO at least, and Azure's SDK at ERROR."""
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(max(level, noisy_floor))
    for bearing in SECRET_BEARING:
        logging.getLogger(bearing).setLevel(max(level, logging.INFO))
    for sdk in SDK_ERRORS_ONLY:
        logging.getLogger(sdk).setLevel(max(level, logging.ERROR))
