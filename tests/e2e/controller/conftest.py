"""Fixtures of the controller e2e tests.

Inputs: none. Outputs: ``kube`` (a kubernetes_asyncio ApiClient on the test module's ``world`` with the
controller tests' config Secret created, see ``harness.create_secret``), and for the executor tests
``world`` (the emulated cluster with the fake GitHub, namespace ``arc-runners``, the
PAT allowed and the Secret ``github-config`` holding it), ``api`` (a kubernetes_asyncio ApiClient on the
world), ``clients`` (the executor's ``ActionsClients``; the client's retries are off so a refused call
answers at once, nothing sleeps), ``executor`` (answering the ``effect_result`` bodies the runtime would
journal, ``executorworld.JournaledBodies``) and ``config_url`` (``<fake>/org``). ``leases``, for
any test: every version of the controllers' Lease while the test runs (``replicas.LeaseVersions``).

Nothing is mocked: the executor talks HTTP to the emulated API server and to the fake GitHub.

Every test also gets ``recorded_journal_name`` (autouse): the name of its recorded journal
(``recording.claim``). With ``ARCSM_RECORD_JOURNALS=1`` the ``harness.Controller`` objects it creates
export their journal to ``tests/journals/<name>.jsonl.gz`` when they stop; without it, nowhere.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from kubernetes_asyncio import client

from actions.client import ClientSettings, RateLimit
from actions.retrying import RetryPolicy
from controller.executor.actionsclients import ActionsClients
from controller.executor.executing import Executor, ExecutorSettings
from sim.world import World
from tests import worlds
from tests.e2e.controller import harness, recording
from tests.e2e.controller.executorworld import (
    CONFIG_SECRET,
    PAT,
    JournaledBodies,
    create_namespace,
    create_secret,
)
from tests.e2e.controller.replicas import LeaseVersions


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with worlds.open_world(world_kind, github=True) as w:
        w.github.allow_pat(PAT)
        yield w


@pytest.fixture
async def api(world: World) -> AsyncIterator[client.ApiClient]:
    async with client.ApiClient(world.configuration()) as api:
        await create_namespace(api)
        await create_secret(api, CONFIG_SECRET, {"github_token": PAT})
        yield api


@pytest.fixture
def config_url(world: World) -> str:
    return world.github_url + "/org"


@pytest.fixture
async def clients() -> AsyncIterator[ActionsClients]:
    settings = ClientSettings(retry=RetryPolicy(retries=0), rate_limit=RateLimit(max_rate=1000))
    clients = ActionsClients(settings=settings)
    yield clients
    await clients.aclose()


@pytest.fixture
def executor(api: client.ApiClient, clients: ActionsClients) -> JournaledBodies:
    return JournaledBodies(Executor(api=api, clients=clients, settings=ExecutorSettings(qps=1000, burst=100)))


@pytest.fixture
async def kube(world: World) -> AsyncIterator[client.ApiClient]:
    async with client.ApiClient(world.configuration()) as api:
        await harness.create_secret(api)
        yield api


@pytest.fixture(autouse=True)
def recorded_journal_name(request: pytest.FixtureRequest) -> Iterator[str]:
    node = request.node
    name = recording.claim(node.name, node.nodeid, node.path.stem)
    target = recording.JOURNALS / f"{name}.jsonl.gz" if recording.enabled() else None
    with recording.recording_to(target):
        yield name


@pytest.fixture
async def leases(world: World) -> AsyncIterator[LeaseVersions]:
    """Every version of the controllers' Lease from now on, as the world's API server stores it."""
    async with LeaseVersions(world) as recorded:
        yield recorded
