"""The watchers' e2e fixtures: a journal on disk and a writer that changes the emulated world."""

from __future__ import annotations

import pathlib
from collections.abc import AsyncIterator

import aiohttp
import pytest

from sim.world import World
from store.journal import Journal
from tests.e2e.watchers import support
from tests.e2e.watchers.support import Writer


@pytest.fixture
async def journal(tmp_path: pathlib.Path) -> AsyncIterator[Journal]:
    j = await support.open_journal(tmp_path / "journal.db")
    yield j
    await j.close()


@pytest.fixture
async def writer(world: World) -> AsyncIterator[Writer]:
    async with aiohttp.ClientSession() as session:
        yield Writer(world, session)
