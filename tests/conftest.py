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


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with World(seed=1) as w:
        yield w


@pytest.fixture
async def kube(world: World) -> AsyncIterator[client.ApiClient]:
    async with client.ApiClient(world.configuration()) as api:
        yield api
