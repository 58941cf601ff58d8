"""Helpers of the e2e Actions tests: the clock the fake and the client share, and the PAT the fake allows."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from actions.client import ActionsClient

PAT = "ghp_e2eTestPersonalAccessToken000001"
START = 1_750_000_000.0


class SharedClock:
    """A clock both sides read: the fake as a float (``clock()``), the client as a datetime (``now()``)."""

    def __init__(self, start: float = START) -> None:
        self.current = start

    def __call__(self) -> float:
        return self.current

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.current, UTC)

    def advance(self, seconds: float) -> None:
        self.current += seconds


MakeClient = Callable[..., ActionsClient]  # the ``make_client`` fixture
