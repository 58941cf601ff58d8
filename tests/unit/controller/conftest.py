"""Fixtures of the controller's unit tests: ``journal``, a real journal on disk (not durable: no fsync),
open for the test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from store.journal import Journal
from store.settings import JournalSettings


@pytest.fixture
async def journal(tmp_path: Path) -> AsyncIterator[Journal]:
    async with await Journal.open(tmp_path / "journal.db", settings=JournalSettings(durable=False)) as opened:
        yield opened
