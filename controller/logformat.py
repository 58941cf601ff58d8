"""The controller's log lines on stderr: text for a person at a terminal, one JSON object per line for a
cluster's log collector.

``--log-format auto`` picks JSON when stderr is not a terminal (a pod's is not). A JSON line carries
``time``, ``level``, ``logger`` and ``msg``, the object keys of ``logkeys.FIELDS`` where the line is about
an object (kind, namespace, name, seq, from_phase, to_phase, trigger), and ``error`` with the traceback
when there is one. A text line is the message, which names its object and phases itself.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any, TextIO

from controller import logkeys

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
FORMATS = ("auto", "json", "text")
# A text line names its object in the message itself (a transition: "Kind/ns/name: From → To (trigger)").
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# Libraries that log every request or state change at INFO; the controller logs what matters
# (transitions with their keys, failed effects) itself.
NOISY = ("httpcore", "httpx", "hpack", "aiohttp.access", "aiosqlite", "transitions")


def object_keys(record: logging.LogRecord) -> dict[str, Any]:
    """The object keys a log record carries, as a formatter writes them."""
    return {key: getattr(record, attr) for key, attr in logkeys.FIELDS if hasattr(record, attr)}


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
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
    return logging.Formatter(TEXT)


def configure_logging(level: str, fmt: str = "auto") -> None:
    """Send every log line at ``level`` (a key of ``LEVELS``) or above to stderr in ``fmt``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt, sys.stderr))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(LEVELS[level])
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(max(root.level, logging.WARNING))
