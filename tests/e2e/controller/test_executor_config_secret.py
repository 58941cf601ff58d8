"""The executor's answers about a scope's config Secret: the two errors a user must fix have their own
classes (ConfigSecretMissing, ConfigSecretIncomplete), a missing proxy Secret its own,
a Secret that goes missing or bad drops the cached Actions client with its credentials, and the clients
of many Secrets share one trust store and one connection pool."""

from __future__ import annotations

import ssl
from typing import Any

from kubernetes_asyncio import client

from actions.client import ActionsClient
from controller.executor.actionsclients import ActionsClients
from controller.executor.kubewriting import Kube
from sim.world import World
from statemachines import effects
from statemachines.effects import ActionsOp, ActionsScope, ObjectRef
from tests.e2e.controller.executorworld import (
    CONFIG_SECRET,
    NS,
    PAT,
    JournaledBodies,
    create_secret,
    replace_secret_data,
)

ARS = ObjectRef("AutoscalingRunnerSet", NS, "arc")


def lookup(config_url: str, secret: str = CONFIG_SECRET, **scope: Any) -> effects.ActionsCall:
    at = ActionsScope(config_url=config_url, namespace=NS, secret_name=secret, **scope)
    return effects.ActionsCall(ARS, at, ActionsOp.GET_RUNNER_BY_NAME, {"name": "r"}, epoch="uid-1/1")


async def test_a_missing_or_unnamed_config_secret_is_config_secret_missing(
    executor: JournaledBodies, world: World, config_url: str
) -> None:
    missing = await executor.execute(lookup(config_url, "no-such-secret"))
    unnamed = await executor.execute(lookup(config_url, ""))

    assert (missing["ok"], missing["error"]) == (False, "ConfigSecretMissing")
    assert f"{NS}/no-such-secret" in missing["message"]
    assert (unnamed["ok"], unnamed["error"]) == (False, "ConfigSecretMissing")
    assert world.github.calls == []


async def test_a_config_secret_without_usable_credentials_is_config_secret_incomplete(
    executor: JournaledBodies, api: client.ApiClient, config_url: str
) -> None:
    await create_secret(api, "app-half", {"github_app_id": "123", "github_app_private_key": "not shown"})

    result = await executor.execute(lookup(config_url, "app-half"))

    assert (result["ok"], result["error"]) == (False, "ConfigSecretIncomplete")
    assert "github_app_installation_id" in result["message"] and "not shown" not in result["message"]


async def test_a_missing_proxy_credentials_secret_has_its_own_class_not_the_config_secrets(
    executor: JournaledBodies, config_url: str
) -> None:
    proxy = {"http": {"url": "http://proxy.internal:3128", "credentialSecretRef": "no-proxy-auth"}}
    result = await executor.execute(lookup(config_url, proxy=proxy))
    assert (result["ok"], result["error"]) == (False, "ProxySecretMissing")


async def test_a_config_secret_gone_bad_drops_the_cached_client(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str, clients: ActionsClients
) -> None:
    assert (await executor.execute(lookup(config_url)))["ok"] is True
    assert clients.cached == 1

    await replace_secret_data(api, CONFIG_SECRET, {"github_token": ""})
    assert (await executor.execute(lookup(config_url)))["error"] == "ConfigSecretIncomplete"
    assert clients.cached == 0
    assert clients.pools == 0  # its pool closed with its last client

    await replace_secret_data(api, CONFIG_SECRET, {"github_token": PAT})
    assert (await executor.execute(lookup(config_url)))["ok"] is True
    assert clients.cached == 1 and clients.pools == 1
    assert len(world.github.calls_to("POST", "runner-registration")) == 2  # a client built anew


def verifying_context(actions_client: ActionsClient) -> ssl.SSLContext:
    """The context the client's connections verify the service with (held by the shared pool's client)."""
    pool = actions_client._http._transport._client  # type: ignore[attr-defined]
    context: ssl.SSLContext = pool._transport._pool._ssl_context
    return context


async def test_the_clients_of_many_config_secrets_share_one_trust_store_and_pool(
    executor: JournaledBodies, api: client.ApiClient, config_url: str, clients: ActionsClients
) -> None:
    # A scale set per Secret (as Helm releases install them), each with a client of its own: they must not
    # each load a trust store (about 0.8 MB of native memory apiece, so a fleet's memory grew per set).
    names = [f"set-{i}-github" for i in range(3)]
    for name in names:
        await create_secret(api, name, {"github_token": PAT})
        assert (await executor.execute(lookup(config_url, name)))["ok"] is True
    assert clients.cached == len(names)
    # ...nor each keep a connection pool (and an idle connection) of its own: one CA, no proxy, one pool.
    assert clients.pools == 1

    reader = Kube(api, qps=1000, burst=100, timeout=30)
    contexts = []
    for name in names:
        scope = ActionsScope(config_url=config_url, namespace=NS, secret_name=name)
        async with clients.lease(scope, reader) as leased:
            contexts.append(verifying_context(leased))
    assert len({id(context) for context in contexts}) == 1
