"""The executor's answers about a scope's config Secret: the two errors a user must fix have their own
classes (ConfigSecretMissing, ConfigSecretIncomplete), an unreadable proxy Secret keeps the general one,
and a Secret that goes missing or bad drops the cached Actions client with its credentials."""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client

from controller.actionsclients import ActionsClients
from controller.executing import Executor
from sim.world import World
from statemachines import effects
from statemachines.effects import ActionsOp, ActionsScope, ObjectRef
from tests.e2e.controller.executorworld import CONFIG_SECRET, NS, PAT, create_secret, replace_secret_data

ARS = ObjectRef("AutoscalingRunnerSet", NS, "arc")


def lookup(config_url: str, secret: str = CONFIG_SECRET, **scope: Any) -> effects.ActionsCall:
    at = ActionsScope(config_url=config_url, namespace=NS, secret_name=secret, **scope)
    return effects.ActionsCall(ARS, at, ActionsOp.GET_RUNNER_BY_NAME, {"name": "r"}, epoch="uid-1/1")


async def test_a_missing_or_unnamed_config_secret_is_config_secret_missing(
    executor: Executor, world: World, config_url: str
) -> None:
    missing = await executor.execute(lookup(config_url, "no-such-secret"))
    unnamed = await executor.execute(lookup(config_url, ""))

    assert (missing["ok"], missing["error"]) == (False, "ConfigSecretMissing")
    assert f"{NS}/no-such-secret" in missing["message"]
    assert (unnamed["ok"], unnamed["error"]) == (False, "ConfigSecretMissing")
    assert world.github.calls == []


async def test_a_config_secret_without_usable_credentials_is_config_secret_incomplete(
    executor: Executor, api: client.ApiClient, config_url: str
) -> None:
    await create_secret(api, "app-half", {"github_app_id": "123", "github_app_private_key": "not shown"})

    result = await executor.execute(lookup(config_url, "app-half"))

    assert (result["ok"], result["error"]) == (False, "ConfigSecretIncomplete")
    assert "github_app_installation_id" in result["message"] and "not shown" not in result["message"]


async def test_a_missing_proxy_credentials_secret_keeps_the_general_class(
    executor: Executor, config_url: str
) -> None:
    proxy = {"http": {"url": "http://proxy.internal:3128", "credentialSecretRef": "no-proxy-auth"}}
    result = await executor.execute(lookup(config_url, proxy=proxy))
    assert (result["ok"], result["error"]) == (False, "CredentialsUnavailable")


async def test_a_config_secret_gone_bad_drops_the_cached_client(
    executor: Executor, api: client.ApiClient, world: World, config_url: str, clients: ActionsClients
) -> None:
    assert (await executor.execute(lookup(config_url)))["ok"] is True
    assert clients.cached == 1

    await replace_secret_data(api, CONFIG_SECRET, {"github_token": ""})
    assert (await executor.execute(lookup(config_url)))["error"] == "ConfigSecretIncomplete"
    assert clients.cached == 0

    await replace_secret_data(api, CONFIG_SECRET, {"github_token": PAT})
    assert (await executor.execute(lookup(config_url)))["ok"] is True
    assert clients.cached == 1
    assert len(world.github.calls_to("POST", "runner-registration")) == 2  # a client built anew
