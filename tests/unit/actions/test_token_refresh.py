"""The auth flow of §6.2 and the admin token's refresh, decided by an injected clock."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from actions import auth, errors
from actions.credentials import GitHubApp
from actions.redaction import SecretStr
from tests.unit.actions.servicestub import (
    CONFIG_URL,
    INSTALLATION_TOKEN,
    PAT,
    REGISTRATION_TOKEN,
    FakeClock,
    MakeClient,
    ServiceStub,
    json_body,
    reply,
    sequence,
)

NOW = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
DELETE_SET = r"/_apis/runtime/runnerscalesets/\d+$"


@pytest.mark.parametrize(
    ("seconds_left", "refresh"),
    [(3600, False), (61, False), (60.001, False), (60, True), (59, True), (0, True), (-10, True)],
)
def test_refresh_within_sixty_seconds_of_exp(seconds_left: float, refresh: bool) -> None:
    assert auth.needs_refresh(NOW + timedelta(seconds=seconds_left), NOW) is refresh


def test_app_jwt_claims_and_signature(app_credentials: GitHubApp, rsa_pem: str) -> None:
    token = auth.app_jwt(app_credentials, now=NOW)
    public = load_pem_private_key(rsa_pem.encode(), None).public_key()
    claims = jwt.decode(token.reveal(), public, algorithms=["RS256"], options={"verify_exp": False})  # type: ignore[arg-type]
    assert jwt.get_unverified_header(token.reveal())["alg"] == "RS256"
    assert claims["iss"] == "12345"
    assert claims["iat"] == int(NOW.timestamp()) - 60
    assert claims["exp"] == claims["iat"] + 540
    assert repr(token) == "SecretStr('***')"


def test_admin_token_expiry_is_read_without_verification() -> None:
    token = jwt.encode(
        {"exp": int(NOW.timestamp())}, "a-key-arcsm-cannot-know-of-32-bytes", algorithm="HS256"
    )
    assert auth.token_expiry(SecretStr(token)) == NOW


@pytest.mark.parametrize(
    "token",
    ["not-a-jwt", jwt.encode({"sub": "x"}, "k" * 32, algorithm="HS256")],
)
def test_admin_token_without_exp_is_a_protocol_error(token: str) -> None:
    with pytest.raises(errors.ProtocolError):
        auth.token_expiry(SecretStr(token))


async def test_app_flow_headers_and_bodies(
    stub: ServiceStub, make_client: MakeClient, app_credentials: GitHubApp
) -> None:
    stub.route("DELETE", DELETE_SET, reply(204))
    await make_client(credentials=app_credentials).delete_runner_scale_set(1)
    access, registration, admin, call = stub.requests
    assert access.url.path == "/api/v3/app/installations/678/access_tokens"
    assert access.headers["Content-Type"] == "application/vnd.github+json"
    scheme, app_jwt = access.headers["Authorization"].split(" ")
    assert scheme == "Bearer" and jwt.decode(app_jwt, options={"verify_signature": False})["iss"] == "12345"
    assert registration.url.path == "/api/v3/orgs/my-org/actions/runners/registration-token"
    assert registration.headers["Authorization"] == f"Bearer {INSTALLATION_TOKEN}"
    assert registration.headers["Content-Type"] == "application/vnd.github.v3+json"
    assert registration.content == b""
    assert admin.url.path == "/api/v3/actions/runner-registration"
    assert admin.headers["Authorization"] == f"RemoteAuth {REGISTRATION_TOKEN}"
    assert json_body(admin) == {"url": CONFIG_URL, "runner_event": "register"}
    assert call.url.path == "/tenant/1/_apis/runtime/runnerscalesets/1"
    assert call.url.params["api-version"] == "6.0-preview"
    assert call.headers["Authorization"] == f"Bearer {stub.admin_tokens[0]}"
    assert call.headers["Content-Type"] == "application/json"


async def test_pat_flow_skips_the_installation_token(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("DELETE", DELETE_SET, reply(204))
    await make_client().delete_runner_scale_set(1)
    registration = stub.requests[0]
    assert registration.headers["Authorization"] == f"Bearer {PAT}"
    assert [p for p in stub.paths() if "access_tokens" in p] == []


async def test_admin_connection_is_cached_until_sixty_seconds_before_exp(
    stub: ServiceStub, make_client: MakeClient, clock: FakeClock
) -> None:
    stub.route("DELETE", DELETE_SET, reply(204))
    client = make_client()
    await client.delete_runner_scale_set(1)
    clock.advance(3600 - 61)
    await client.delete_runner_scale_set(1)
    assert len(stub.admin_tokens) == 1
    clock.advance(1)  # now exactly 60 s before exp
    await client.delete_runner_scale_set(1)
    assert len(stub.admin_tokens) == 2
    last = stub.requests[-1]
    assert last.headers["Authorization"] == f"Bearer {stub.admin_tokens[1]}"
    assert len(stub.paths("registration-token")) == 2


async def test_concurrent_requests_share_one_registration(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("DELETE", DELETE_SET, reply(204))
    client = make_client()
    await asyncio.gather(*(client.delete_runner_scale_set(n) for n in range(5)))
    assert len(stub.admin_tokens) == 1
    assert len(stub.paths("runnerscalesets")) == 5


async def test_a_revoked_admin_token_registers_again_once(stub: ServiceStub, make_client: MakeClient) -> None:
    unauthorized = reply(401, {"typeName": "VssUnauthorizedException", "message": "expired"})
    stub.route("DELETE", DELETE_SET, sequence(unauthorized, reply(204)))
    await make_client().delete_runner_scale_set(1)
    assert len(stub.admin_tokens) == 2
    first, second = (r for r in stub.requests if "runnerscalesets" in r.url.path)
    assert first.headers["Authorization"] != second.headers["Authorization"]


async def test_an_admin_token_refused_twice_is_an_error(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("DELETE", DELETE_SET, reply(401, {"typeName": "VssUnauthorizedException", "message": "no"}))
    with pytest.raises(errors.AuthenticationFailed):
        await make_client().delete_runner_scale_set(1)
    assert len(stub.paths("runnerscalesets")) == 2


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"url": "https://svc/"}, "field 'token' is missing"),
        ({"token": "x.y.z"}, "field 'url' is missing"),
        ({"url": "https://svc/", "token": ""}, "field 'token' is empty"),
    ],
)
async def test_runner_registration_needs_both_fields(
    stub: ServiceStub, make_client: MakeClient, answer: dict[str, str], message: str
) -> None:
    stub.route("POST", r"/actions/runner-registration$", reply(201, answer))
    with pytest.raises(errors.ProtocolError, match=message):
        await make_client().delete_runner_scale_set(1)


async def test_installation_token_needs_201(
    stub: ServiceStub, make_client: MakeClient, app_credentials: GitHubApp
) -> None:
    stub.route("POST", r"/access_tokens$", reply(404, {"message": "Not Found"}))
    with pytest.raises(errors.NotFound, match="access_tokens answered 404: Not Found"):
        await make_client(credentials=app_credentials).delete_runner_scale_set(1)


def test_connection_is_a_value_whose_repr_hides_the_token() -> None:
    connection = auth.AdminConnection("https://svc/", SecretStr("eyJ.secret.token"), NOW)
    assert "secret" not in repr(connection)
    with pytest.raises(TypeError):
        json.dumps({"token": connection.token})


async def test_installation_token_request_is_a_plain_post(
    stub: ServiceStub, make_client: MakeClient, app_credentials: GitHubApp
) -> None:
    stub.route("DELETE", DELETE_SET, reply(204))
    await make_client(credentials=app_credentials).delete_runner_scale_set(1)
    access = stub.requests[0]
    assert isinstance(access, httpx.Request) and access.method == "POST" and access.content == b""


async def test_concurrent_refusals_register_again_only_once(
    stub: ServiceStub, make_client: MakeClient
) -> None:
    def refuse_the_first_token(request: httpx.Request) -> httpx.Response:
        if request.headers["Authorization"] == f"Bearer {stub.admin_tokens[0]}":
            return httpx.Response(401, json={"typeName": "VssUnauthorizedException", "message": "revoked"})
        return httpx.Response(204)

    stub.route("DELETE", DELETE_SET, refuse_the_first_token)
    client = make_client()
    await client.admin_connection()
    await asyncio.gather(*(client.delete_runner_scale_set(n) for n in range(3)))
    assert len(stub.admin_tokens) == 2
