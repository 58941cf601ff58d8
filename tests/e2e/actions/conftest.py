"""Fixtures for driving the Actions client against the fake GitHub/Actions service (``sim.github``).

Inputs: none. Outputs: ``clock`` (one ``SharedClock`` both the fake and the client read, so a test moves
time for token expiry on both sides at once), ``fake`` (a started ``GitHubFake`` on loopback with
200 ms long polls), ``sleeps`` (the waits the client's retry policy asked for; nothing really sleeps),
``rsa_pem`` and ``make_client`` (an ``ActionsClient`` for a scope of the fake, with a PAT or an App).

Nothing is mocked: the client talks real HTTP (httpx → httpcore → TCP) to the fake's aiohttp server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from actions.client import ActionsClient, ClientSettings, RateLimit
from actions.credentials import Credentials, PersonalAccessToken
from actions.redaction import SecretStr
from actions.useragent import SystemInfo
from sim.github import GitHubFake, GitHubSettings
from tests.e2e.actions.sharedclock import PAT, MakeClient, SharedClock


@pytest.fixture
def clock() -> SharedClock:
    return SharedClock()


@pytest.fixture
async def fake(clock: SharedClock) -> AsyncIterator[GitHubFake]:
    async with GitHubFake(settings=GitHubSettings(long_poll_seconds=0.2), clock=clock, seed=1) as running:
        running.allow_pat(PAT)
        yield running


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture(scope="session")
def rsa_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@pytest.fixture
async def make_client(fake: GitHubFake, clock: SharedClock, sleeps: list[float]) -> AsyncIterator[MakeClient]:
    clients: list[ActionsClient] = []

    async def record_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    def make(scope: str = "my-org", *, credentials: Credentials | None = None) -> ActionsClient:
        client = ActionsClient(
            config_url=fake.config_url(scope),
            credentials=credentials or PersonalAccessToken(token=SecretStr(PAT)),
            system_info=SystemInfo(subsystem="e2e"),
            settings=ClientSettings(rate_limit=RateLimit(max_rate=1000)),
            clock=clock,
            sleep=record_sleep,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
