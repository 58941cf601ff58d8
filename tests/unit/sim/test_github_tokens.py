"""Credentials of the fake GitHub (sim.github.tokens, sim.github.jitconfigs): App JWTs, PATs, the admin
JWT and its ``exp``, message-queue tokens, and JIT configs — all judged by an injected clock."""

from __future__ import annotations

import jwt
import pytest

from sim.github import errors, jitconfigs
from sim.github.records import Agent
from sim.github.tokens import AdminGrant, Tokens
from tests.keys import rsa_pair


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def keys() -> tuple[str, str]:
    return rsa_pair()


def app_jwt(private: str, now: float, *, iss: str = "123", lifetime: int = 540) -> str:
    iat = int(now) - 60
    return jwt.encode({"iat": iat, "exp": iat + lifetime, "iss": iss}, private, algorithm="RS256")


def test_any_well_formed_app_jwt_passes_until_an_app_is_registered(keys: tuple[str, str]) -> None:
    clock = Clock()
    tokens = Tokens(clock=clock)
    private, _ = keys
    assert tokens.verify_app_jwt(app_jwt(private, clock.now), 42) == "123"
    with pytest.raises(errors.GitHubError) as raised:
        tokens.verify_app_jwt("not-a-jwt", 42)
    assert raised.value.status == 401


def test_app_jwts_must_be_rs256_and_live_at_most_ten_minutes(keys: tuple[str, str]) -> None:
    clock = Clock()
    tokens = Tokens(clock=clock)
    private, _ = keys
    hs = jwt.encode(
        {"iat": int(clock.now), "exp": int(clock.now) + 60, "iss": "1"}, "k" * 32, algorithm="HS256"
    )
    for bad in (hs, app_jwt(private, clock.now, lifetime=900), app_jwt(private, clock.now - 1000)):
        with pytest.raises(errors.GitHubError):
            tokens.verify_app_jwt(bad, 1)
    token = app_jwt(private, clock.now)
    clock.now += 600
    with pytest.raises(errors.GitHubError):
        tokens.verify_app_jwt(token, 1)  # expired by the fake's clock


def test_a_registered_app_needs_its_key_and_installation(keys: tuple[str, str]) -> None:
    clock = Clock()
    tokens = Tokens(clock=clock)
    private, public = keys
    other_private, _ = rsa_pair()
    tokens.register_app("123", public_key=public, installation_ids=[7])
    assert tokens.verify_app_jwt(app_jwt(private, clock.now), 7) == "123"
    with pytest.raises(errors.GitHubError) as raised:
        tokens.verify_app_jwt(app_jwt(other_private, clock.now), 7)
    assert raised.value.status == 401
    with pytest.raises(errors.GitHubError) as raised:
        tokens.verify_app_jwt(app_jwt(private, clock.now), 8)
    assert raised.value.status == 404
    with pytest.raises(errors.GitHubError):
        tokens.verify_app_jwt(app_jwt(private, clock.now, iss="999"), 7)


def test_installation_tokens_and_pats() -> None:
    clock = Clock()
    tokens = Tokens(clock=clock)
    issued, expires_at = tokens.issue_installation_token(7, 3600)
    assert issued.startswith("ghs_") and expires_at == clock.now + 3600
    tokens.check_github_credential(issued)
    tokens.check_github_credential("ghp_anything")  # no PAT listed: any is accepted
    with pytest.raises(errors.GitHubError):
        tokens.check_github_credential("ghs_forged")
    tokens.allow_pat("ghp_good")
    tokens.check_github_credential("ghp_good")
    with pytest.raises(errors.GitHubError):
        tokens.check_github_credential("ghp_anything")
    clock.now += 3600
    with pytest.raises(errors.GitHubError):
        tokens.check_github_credential(issued)


def test_the_admin_token_is_a_jwt_with_exp_and_can_be_revoked() -> None:
    clock = Clock()
    tokens = Tokens(clock=clock)
    token = tokens.issue_admin_token(AdminGrant(3, "orgs/acme"), 600)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["exp"] == int(clock.now) + 600
    assert tokens.check_admin_token(token) == AdminGrant(3, "orgs/acme")
    clock.now += 600
    with pytest.raises(errors.ServiceError) as raised:
        tokens.check_admin_token(token)
    assert raised.value.status == 401
    fresh = tokens.issue_admin_token(AdminGrant(3, "orgs/acme"), 600)
    tokens.expire_admin_tokens()
    with pytest.raises(errors.ServiceError):
        tokens.check_admin_token(fresh)
    assert tokens.check_admin_token(tokens.issue_admin_token(AdminGrant(3, "orgs/acme"), 600)).tenant_id == 3


def test_a_forged_admin_token_is_refused() -> None:
    tokens = Tokens(clock=Clock())
    forged = jwt.encode({"exp": 9_999_999_999, "tid": 1, "gen": 1, "sub": "x"}, "k" * 32, algorithm="HS256")
    with pytest.raises(errors.ServiceError):
        tokens.check_admin_token(forged)


def test_message_queue_tokens_expire_per_session() -> None:
    tokens = Tokens(clock=Clock())
    a, b = tokens.issue_message_token("s1", 3600), tokens.issue_message_token("s2", 3600)
    assert tokens.expire_message_tokens(["s1"]) == 1
    with pytest.raises(errors.ServiceError):
        tokens.check_message_token(a)
    assert tokens.check_message_token(b) == "s2"


def test_jit_configs_round_trip_and_reject_garbage() -> None:
    agent = Agent(5, 1, "runner-a", 2, "_work", "secret-value")
    encoded = jitconfigs.encode(agent, server_url="http://h/tenant/1/", github_url="http://h/acme")
    identity = jitconfigs.decode(encoded)
    assert (identity.agent_id, identity.agent_name, identity.secret) == (5, "runner-a", "secret-value")
    for garbage in ("", "not base64!", "e30="):
        with pytest.raises(ValueError):
            jitconfigs.decode(garbage)
