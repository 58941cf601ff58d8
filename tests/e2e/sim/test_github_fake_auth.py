"""The fake GitHub's auth flow (arc-controller-spec.md §6.2) over real HTTP: GitHub App JWT →
installation token, PAT or installation token → registration token → runner-registration → Actions
base URL and admin JWT with ``exp``; and how the Actions service enforces the admin token.

Inputs: a ``GitHubFake`` on loopback (short long poll), an httpx client. Nothing is mocked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import jwt
import pytest

from sim.github import GitHubFake, GitHubSettings
from tests.e2e.sim.github_flow import (
    PAT,
    Admin,
    register,
    registration_token,
    runner_registration,
)
from tests.keys import rsa_pair


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def fake() -> AsyncIterator[GitHubFake]:
    async with GitHubFake(settings=GitHubSettings(long_poll_seconds=0.2), seed=1) as f:
        yield f


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


def app_jwt(private: str, now: float, app_id: str = "123") -> str:
    """The JWT the upstream client builds: iat = now-60s, exp = iat+9min, iss = app id, RS256."""
    iat = int(now) - 60
    return jwt.encode({"iat": iat, "exp": iat + 540, "iss": app_id}, private, algorithm="RS256")


async def access_token(
    http: httpx.AsyncClient, fake: GitHubFake, installation: int, token: str
) -> httpx.Response:
    return await http.post(
        f"{fake.api_url}/app/installations/{installation}/access_tokens",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/vnd.github+json"},
    )


async def test_pat_flow_returns_the_actions_base_and_an_admin_jwt_with_exp(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    reg = await registration_token(http, fake, "orgs/acme", PAT)
    assert reg.status_code == 201
    assert set(reg.json()) == {"token", "expires_at"}
    assert reg.headers["X-GitHub-Request-Id"]
    admin = await runner_registration(http, fake, fake.config_url("acme"), reg.json()["token"])
    assert admin.status_code == 201
    assert admin.json()["url"] == f"{fake.url}/tenant/1/"
    claims = jwt.decode(admin.json()["token"], options={"verify_signature": False})
    assert claims["exp"] > fake.clock() + 60
    assert [(c.method, c.path, c.status) for c in fake.calls] == [
        ("POST", "/api/v3/orgs/acme/actions/runners/registration-token", 201),
        ("POST", "/api/v3/actions/runner-registration", 201),
    ]
    assert fake.calls[1].body == {"url": fake.config_url("acme"), "runner_event": "register"}


async def test_github_app_flow_with_a_registered_key(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    private, public = rsa_pair()
    fake.register_app("123", public_key=public, installation_ids=[42])
    issued = await access_token(http, fake, 42, app_jwt(private, fake.clock()))
    assert issued.status_code == 201
    installation_token = issued.json()["token"]
    assert installation_token.startswith("ghs_") and issued.json()["expires_at"]
    admin = await register(http, fake, "acme", credential=installation_token)
    resp = await admin.call("GET", "_apis/runtime/runnergroups/", groupName="Default")
    assert resp.status_code == 200


async def test_app_jwts_signed_by_another_key_or_for_another_installation_are_refused(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    private, public = rsa_pair()
    other_private, _ = rsa_pair()
    fake.register_app("123", public_key=public, installation_ids=[42])
    wrong_key = await access_token(http, fake, 42, app_jwt(other_private, fake.clock()))
    assert wrong_key.status_code == 401
    assert "JSON web token" in wrong_key.json()["message"]
    wrong_installation = await access_token(http, fake, 43, app_jwt(private, fake.clock()))
    assert wrong_installation.status_code == 404
    unknown_app = await access_token(http, fake, 42, app_jwt(private, fake.clock(), app_id="999"))
    assert unknown_app.status_code == 401


async def test_any_well_formed_app_jwt_passes_until_an_app_is_registered(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    private, _ = rsa_pair()
    assert (
        await access_token(http, fake, 7, app_jwt(private, fake.clock(), app_id="Iv1.abc"))
    ).status_code == 201
    assert (await access_token(http, fake, 7, "not-a-jwt")).status_code == 401
    expired = jwt.encode({"iat": 1, "exp": 541, "iss": "1"}, private, algorithm="RS256")
    assert (await access_token(http, fake, 7, expired)).status_code == 401


async def test_bad_github_credentials_answer_401_with_githubs_body(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    missing = await http.post(f"{fake.api_url}/orgs/acme/actions/runners/registration-token")
    assert missing.status_code == 401
    assert missing.json()["message"] == "Bad credentials"
    assert (await registration_token(http, fake, "orgs/acme", "ghs_not_issued")).status_code == 401
    fake.allow_pat("ghp_allowed")
    assert (await registration_token(http, fake, "orgs/acme", "ghp_other")).status_code == 401
    assert (await registration_token(http, fake, "orgs/acme", "ghp_allowed")).status_code == 201
    no_remote_auth = await http.post(
        f"{fake.api_url}/actions/runner-registration", json={"url": fake.url + "/acme"}
    )
    assert no_remote_auth.status_code == 401
    assert (await runner_registration(http, fake, fake.config_url("acme"), "BOGUS")).status_code == 401


async def test_an_expired_installation_or_registration_token_is_refused(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    private, _ = rsa_pair()
    installation_token = (await access_token(http, fake, 7, app_jwt(private, fake.clock()))).json()["token"]
    reg = (await registration_token(http, fake, "orgs/acme", installation_token)).json()["token"]
    fake.expire_installation_tokens()
    assert (await registration_token(http, fake, "orgs/acme", installation_token)).status_code == 401
    fake.expire_registration_tokens()
    assert (await runner_registration(http, fake, fake.config_url("acme"), reg)).status_code == 401


async def test_a_registration_token_registers_only_its_own_scope(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    reg = (await registration_token(http, fake, "orgs/acme", PAT)).json()["token"]
    other = await runner_registration(http, fake, fake.config_url("other-org"), reg)
    assert other.status_code == 403
    no_scope = await runner_registration(http, fake, fake.url + "/", reg)
    assert no_scope.status_code == 422


async def test_each_scope_gets_its_own_tenant(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    org = await register(http, fake, "acme")
    repo = await register(http, fake, "acme/app")
    reg = (await registration_token(http, fake, "enterprises/big", PAT)).json()["token"]
    enterprise = await runner_registration(http, fake, fake.config_url("enterprises/big"), reg)
    assert enterprise.status_code == 201
    assert [org.base, repo.base, enterprise.json()["url"]] == [
        f"{fake.url}/tenant/1/",
        f"{fake.url}/tenant/2/",
        f"{fake.url}/tenant/3/",
    ]
    again = await register(http, fake, "ACME")
    assert again.base == org.base


async def test_actions_requests_need_a_live_admin_token(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    admin = await register(http, fake)
    path = "_apis/runtime/runnerscalesets"
    assert (await admin.call("GET", path, runnerGroupId=1, name="x")).status_code == 200
    anonymous = await http.get(admin.base + path, params={"api-version": "6.0-preview"})
    assert anonymous.status_code == 401
    assert "VssUnauthorizedException" in anonymous.json()["typeName"]
    assert anonymous.headers["ActivityId"]
    forged = Admin(http, admin.base, "e30.e30.c2ln")
    assert (await forged.call("GET", path)).status_code == 401
    fake.expire_admin_tokens()
    assert (await admin.call("GET", path)).status_code == 401
    refreshed = await register(http, fake)
    assert (await refreshed.call("GET", path)).status_code == 200


async def test_admin_tokens_expire_after_their_configured_lifetime(http: httpx.AsyncClient) -> None:
    clock = Clock()
    settings = GitHubSettings(long_poll_seconds=0.2, admin_token_seconds=120)
    async with GitHubFake(settings=settings, clock=clock) as fake:
        admin = await register(http, fake)
        claims = jwt.decode(admin.token, options={"verify_signature": False})
        assert claims["exp"] == int(clock.now) + 120
        assert (await admin.call("GET", "_apis/runtime/runnergroups/")).status_code == 200
        clock.now += 121
        assert (await admin.call("GET", "_apis/runtime/runnergroups/")).status_code == 401
        assert (
            await (await register(http, fake)).call("GET", "_apis/runtime/runnergroups/")
        ).status_code == 200


async def test_another_tenants_admin_token_is_forbidden(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    await register(http, fake, "acme")
    other = await register(http, fake, "other-org")
    trespass = Admin(http, f"{fake.url}/tenant/1/", other.token)
    assert (await trespass.call("GET", "_apis/runtime/runnergroups/")).status_code == 403


async def test_admin_calls_need_an_api_version(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    admin = await register(http, fake)
    resp = await http.get(
        admin.base + "_apis/runtime/runnergroups/", headers={"Authorization": f"Bearer {admin.token}"}
    )
    assert resp.status_code == 400
    assert resp.json()["typeName"].startswith("GitHub.DistributedTask.WebApi.")
