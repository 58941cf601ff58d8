"""Fixtures shared by every test.

Inputs: none. Outputs: ``world`` (a started emulated cluster on loopback with the project's CRDs) and
``kube`` (a kubernetes_asyncio ApiClient pointed at it over real HTTP). Nothing is mocked: requests go
through aiohttp to the emulator's HTTP server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests import worlds


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with World(seed=1) as w:
        yield w


@pytest.fixture
async def kube(world: World) -> AsyncIterator[client.ApiClient]:
    async with client.ApiClient(world.configuration()) as api:
        yield api


@pytest.fixture(params=worlds.KINDS)
def world_kind(request: pytest.FixtureRequest) -> str:
    """Which world the test runs on (``tests/worlds.py``): once on the emulator, once on the real control
    plane (skipped, or failed where CI requires it, when that is not built)."""
    kind = str(request.param)
    if kind == worlds.REAL:
        worlds.require_real()
    return kind
