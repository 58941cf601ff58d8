"""Fixtures for the Actions client's unit tests.

Inputs: none. Outputs: ``rsa_pem`` (a fresh RSA key, PEM), ``clock`` (a ``FakeClock`` tests move by
hand), ``stub`` (a ``ServiceStub``: an in-process GitHub + Actions service behind ``httpx.MockTransport``
that answers the auth flow and lets each test route the endpoints it exercises), ``sleeps`` (the waits
the retry policy asked for; nothing really sleeps) and ``make_client`` (an ``ActionsClient`` wired to the
stub, the clock and the sleep recorder).

What is not mocked: everything in ``actions`` runs for real, httpx included, down to the transport. For
the real fake service over HTTP see ``tests/e2e/actions``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from actions.client import ActionsClient, ClientSettings, RateLimit
from actions.credentials import Credentials, GitHubApp, PersonalAccessToken
from actions.redaction import SecretStr
from actions.retrying import RetryPolicy
from actions.useragent import SystemInfo
from tests.unit.actions.servicestub import CONFIG_URL, PAT, FakeClock, MakeClient, ServiceStub


@pytest.fixture(scope="session")
def rsa_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def stub(clock: FakeClock) -> ServiceStub:
    return ServiceStub(clock=clock)


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def app_credentials(rsa_pem: str) -> GitHubApp:
    return GitHubApp(app_id="12345", installation_id=678, private_key=SecretStr(rsa_pem))


@pytest.fixture
def pat_credentials() -> PersonalAccessToken:
    return PersonalAccessToken(token=SecretStr(PAT))


@pytest.fixture
async def make_client(
    stub: ServiceStub, clock: FakeClock, sleeps: list[float], pat_credentials: PersonalAccessToken
) -> AsyncIterator[MakeClient]:
    clients: list[ActionsClient] = []

    async def record_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    def make(
        *,
        credentials: Credentials | None = None,
        config_url: str = CONFIG_URL,
        settings: ClientSettings | None = None,
        system_info: SystemInfo | None = None,
    ) -> ActionsClient:
        client = ActionsClient(
            config_url=config_url,
            credentials=credentials or pat_credentials,
            system_info=system_info or SystemInfo(subsystem="unit-test"),
            settings=settings or ClientSettings(retry=RetryPolicy(), rate_limit=RateLimit(max_rate=1000)),
            clock=clock,
            sleep=record_sleep,
            transport=stub.transport(),
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
