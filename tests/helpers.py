"""Shared test helpers: waiting on conditions with a deadline (never on sleeps), and where the ``arcsm``
command the tests run is."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller import waiting

# The installed command; beside the interpreter when the virtualenv's bin is not on PATH.
ARCSM = shutil.which("arcsm") or str(Path(sys.executable).parent / "arcsm")


async def eventually(
    predicate: Callable[[], Any],
    *,
    timeout: float = 5.0,
    interval: float = 0.01,
    what: str = "condition",
) -> Any:
    """Poll ``predicate`` (plain or async) until it returns something truthy; fail with ``what`` after
    ``timeout`` seconds.

    An ``AssertionError`` raised by the predicate counts as "not yet" until the deadline, then is re-raised.
    """
    try:
        return await waiting.until(
            predicate, what=what, timeout=timeout, interval=interval, retry_on=(AssertionError,)
        )
    except waiting.TimedOut:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}") from None
