"""Fixtures shared by every test.

Inputs: none. Outputs: ``world`` (a started emulated cluster on loopback with the project's CRDs) and
``kube`` (a kubernetes_asyncio ApiClient pointed at it over real HTTP). Nothing is mocked: requests go
through aiohttp to the emulator's HTTP server. The session starts real control planes ahead of the tests
that run on one (``worlds.expect_real``) and stops the spare left at its end.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests import worlds


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with worlds.open_world(world_kind) as w:
        yield w


@pytest.fixture
async def kube(world: World) -> AsyncIterator[client.ApiClient]:
    async with client.ApiClient(world.configuration()) as api:
        yield api


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A case marked ``diverges_on_real(reason)`` is a known difference of the emulator from kube-apiserver,
    written down in sim/README.md: its real run is expected to fail (strictly: once the emulator is
    fixed and the case passes there, the run says so)."""
    for item in items:
        marker = item.get_closest_marker("diverges_on_real")
        callspec = getattr(item, "callspec", None)
        if marker is not None and callspec is not None and callspec.params.get("world_kind") == worlds.REAL:
            item.add_marker(pytest.mark.xfail(reason=marker.args[0], strict=True))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the first real control plane while the tests before the first real one run (``worlds``)."""
    worlds.expect_real(sum(worlds.opens_real(item) for item in session.items))


def pytest_sessionfinish(session: pytest.Session) -> None:
    worlds.close_spares()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked ``both_worlds`` runs once per world (``tests/worlds.py``), ids ``[emulated]`` and
    ``[real]``; its world fixture reads which from ``world_kind``. One marked ``both_worlds(on_demand=True)``
    (the emulator's conformance cases, some 250 clusters' worth) runs on the real control plane only with
    ``ARCSM_REAL_ON_DEMAND=1``. One also marked ``emulator_only`` drives what only the emulator has
    (its injected faults, compaction, dropped watches, request log): it runs on the emulator alone."""
    marker = metafunc.definition.get_closest_marker("both_worlds")
    if marker is None or "world_kind" not in metafunc.fixturenames:
        return
    kinds = worlds.KINDS
    on_demand = marker.kwargs.get("on_demand") and os.environ.get("ARCSM_REAL_ON_DEMAND") != "1"
    if on_demand or metafunc.definition.get_closest_marker("emulator_only") is not None:
        kinds = (worlds.EMULATED,)
    metafunc.parametrize("world_kind", kinds, indirect=True)


@pytest.fixture
def world_kind(request: pytest.FixtureRequest) -> str:
    """Which world the test runs on: the emulator, unless the test is marked ``both_worlds``; the real
    control plane's runs are skipped (or failed, where CI requires them) when it is not built."""
    kind = str(getattr(request, "param", worlds.EMULATED))
    if kind == worlds.REAL:
        worlds.require_real()
    return kind
