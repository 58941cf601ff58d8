"""The executor's Actions effects against the fake GitHub: what the service holds afterwards and the
result body, including the verdicts the machines branch on."""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client

from controller.executor.actionsclients import ActionsClients
from controller.executor.kubewriting import Kube
from sim.github.faults import GitHubFault
from sim.world import World
from statemachines import effects
from statemachines.effects import ActionsOp, ActionsScope, ObjectRef
from tests.e2e.controller.executorworld import (
    CONFIG_SECRET,
    NS,
    JournaledBodies,
    create_runner,
    create_secret,
    get,
    replace_secret_data,
    scope,
    start_job,
    unb64,
)

ARS = ObjectRef("AutoscalingRunnerSet", NS, "arc")


def call(
    config_url: str, op: ActionsOp, *, at: ActionsScope | None = None, **args: Any
) -> effects.ActionsCall:
    return effects.ActionsCall(ARS, at or scope(config_url), op, args, epoch="uid-1/1")


async def create_scale_set(executor: JournaledBodies, config_url: str, name: str = "arc") -> dict[str, Any]:
    result = await executor.execute(
        call(
            config_url, ActionsOp.CREATE_RUNNER_SCALE_SET, name=name, runnerGroupId=1, labels=[name, "linux"]
        )
    )
    assert result["ok"] is True, result
    scale_set: dict[str, Any] = result["scaleSet"]
    return scale_set


async def jit_secret(
    executor: JournaledBodies, api: client.ApiClient, config_url: str, scale_set_id: int, name: str
) -> tuple[dict[str, Any], str]:
    """An EphemeralRunner ``name`` with its JIT Secret; its result and the JIT config."""
    runner = await create_runner(api, name, config_url, scale_set_id)
    effect = effects.CreateJitConfigSecret(
        target=ObjectRef("Secret", NS, name),
        scope=scope(config_url),
        runner_name=name,
        scale_set_id=scale_set_id,
        work_folder="",
        owner={"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunner", "name": name,
               "uid": runner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True},
    )  # fmt: skip
    result = await executor.execute(effect)
    secret = await get(api, effect.target)
    assert secret is not None
    return result, unb64(secret["data"]["jitToken"])


# -- runner groups and scale sets --------------------------------------------------------------------------


async def test_get_runner_group_by_name(executor: JournaledBodies, world: World, config_url: str) -> None:
    blue = world.github.add_runner_group("org", "blue")

    default = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_GROUP_BY_NAME, name="Default"))
    found = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_GROUP_BY_NAME, name="blue"))
    missing = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_GROUP_BY_NAME, name="red"))

    assert default == {"ok": True, "runnerGroup": {"id": 1, "name": "Default"}}
    assert found == {"ok": True, "runnerGroup": {"id": blue.id, "name": "blue"}}
    assert missing["ok"] is False and missing["error"] == "RunnerGroupNotFound"
    assert "red" in missing["message"]


async def test_a_scale_set_created_twice_answers_the_existing_one(
    executor: JournaledBodies, world: World, config_url: str, clients: ActionsClients, api: client.ApiClient
) -> None:
    none_yet = await executor.execute(
        call(config_url, ActionsOp.GET_RUNNER_SCALE_SET, runnerGroupId=1, name="arc")
    )
    assert none_yet == {"ok": True, "scaleSet": None}

    created = await create_scale_set(executor, config_url)
    again = await executor.execute(
        call(config_url, ActionsOp.CREATE_RUNNER_SCALE_SET, name="arc", runnerGroupId=1, labels=["arc"])
    )

    held = world.github.scale_set("arc", "org")
    assert held is not None
    assert created == {
        "id": held.id,
        "name": "arc",
        "runnerGroupId": 1,
        "runnerGroupName": "Default",
        "labels": [{"name": "arc", "type": "System"}, {"name": "linux", "type": "System"}],
        "runnerSetting": {"disableUpdate": False},
    }
    assert again == {"ok": True, "scaleSet": created, "alreadyExisted": True}
    assert len(world.github.state.scale_sets) == 1
    found = await executor.execute(
        call(config_url, ActionsOp.GET_RUNNER_SCALE_SET, runnerGroupId=1, name="arc")
    )
    assert found == {"ok": True, "scaleSet": created}
    # The client names the scale set in its User-Agent once it is known (§2.1 step 6.6).
    async with clients.lease(scope(config_url), Kube(api, qps=100, burst=10, timeout=5)) as leased:
        assert leased.system_info.scale_set_id == held.id


async def test_update_runner_scale_set_renames_and_moves_it(
    executor: JournaledBodies, world: World, config_url: str
) -> None:
    created = await create_scale_set(executor, config_url)
    blue = world.github.add_runner_group("org", "blue")

    renamed = await executor.execute(
        call(config_url, ActionsOp.UPDATE_RUNNER_SCALE_SET, scaleSetId=created["id"], name="arc-2")
    )
    moved = await executor.execute(
        call(config_url, ActionsOp.UPDATE_RUNNER_SCALE_SET, scaleSetId=created["id"], runnerGroupId=blue.id)
    )

    assert renamed["ok"] is True and renamed["scaleSet"]["name"] == "arc-2"
    assert moved["ok"] is True
    assert (moved["scaleSet"]["runnerGroupId"], moved["scaleSet"]["runnerGroupName"]) == (blue.id, "blue")
    held = world.github.scale_set("arc-2", "org")
    assert held is not None and held.runner_group_id == blue.id


async def test_delete_runner_scale_set_and_not_found_counts_as_done(
    executor: JournaledBodies, world: World, config_url: str
) -> None:
    created = await create_scale_set(executor, config_url)

    deleted = await executor.execute(
        call(config_url, ActionsOp.DELETE_RUNNER_SCALE_SET, scaleSetId=created["id"])
    )
    assert deleted == {"ok": True}
    assert world.github.scale_set("arc", "org") is None

    world.github.inject(GitHubFault(method="DELETE", path="runnerscalesets/", status=404, message="gone"))
    again = await executor.execute(
        call(config_url, ActionsOp.DELETE_RUNNER_SCALE_SET, scaleSetId=created["id"])
    )
    assert again == {"ok": True, "alreadyGone": True}


async def test_arguments_a_machine_got_wrong_are_reported(executor: JournaledBodies, config_url: str) -> None:
    result = await executor.execute(call(config_url, ActionsOp.DELETE_RUNNER_SCALE_SET, scaleSetId="7"))
    assert result["ok"] is False and result["error"] == "InvalidArguments"


# -- runners -----------------------------------------------------------------------------------------------


async def test_get_runner_by_name(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str
) -> None:
    scale_set = await create_scale_set(executor, config_url)
    none_yet = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_BY_NAME, name="runner-a"))
    jit, _ = await jit_secret(executor, api, config_url, scale_set["id"], "runner-a")

    found = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_BY_NAME, name="runner-a"))

    assert none_yet == {"ok": True, "runner": None}
    assert found == {
        "ok": True,
        "runner": {"id": jit["runnerId"], "name": "runner-a", "runnerScaleSetId": scale_set["id"]},
    }


async def test_remove_runner_of_a_busy_runner_is_job_still_running(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str, clients: ActionsClients
) -> None:
    scale_set = await create_scale_set(executor, config_url)
    jit, config = await jit_secret(executor, api, config_url, scale_set["id"], "runner-a")
    async with clients.lease(scope(config_url), Kube(api, qps=100, burst=10, timeout=5)) as leased:
        job = await start_job(world, leased, scale_set["id"], config)
    remove = call(config_url, ActionsOp.REMOVE_RUNNER, runnerId=jit["runnerId"])

    busy = await executor.execute(remove)

    assert busy["ok"] is False and busy["error"] == "JobStillRunning"
    assert world.github.runner("runner-a") is not None

    world.github.complete_job(job)  # an ephemeral runner's agent goes with its job
    assert world.github.runner("runner-a") is None
    idle_jit, _ = await jit_secret(executor, api, config_url, scale_set["id"], "runner-b")
    assert await executor.execute(
        call(config_url, ActionsOp.REMOVE_RUNNER, runnerId=idle_jit["runnerId"])
    ) == {"ok": True}
    assert world.github.runner("runner-b") is None


async def test_remove_runner_reports_agent_not_found(
    executor: JournaledBodies, world: World, config_url: str
) -> None:
    world.github.inject(
        GitHubFault(method="DELETE", path="agents/", status=404, type_key="AgentNotFoundException")
    )
    result = await executor.execute(call(config_url, ActionsOp.REMOVE_RUNNER, runnerId=42))
    assert result["ok"] is False and result["error"] == "RunnerNotFound"


# -- ReleaseRunner -----------------------------------------------------------------------------------------


def release(config_url: str, runner: dict[str, Any], runner_id: int) -> effects.ReleaseRunner:
    meta = runner["metadata"]
    return effects.ReleaseRunner(
        subject=ObjectRef("EphemeralRunnerSet", NS, "arc"),
        target=ObjectRef("EphemeralRunner", NS, meta["name"]),
        uid=meta["uid"],
        scope=scope(config_url),
        runner_id=runner_id,
    )


async def test_release_runner_unregisters_then_deletes_the_runner(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str
) -> None:
    scale_set = await create_scale_set(executor, config_url)
    jit, _ = await jit_secret(executor, api, config_url, scale_set["id"], "runner-a")
    runner = await get(api, ObjectRef("EphemeralRunner", NS, "runner-a"))
    assert runner is not None

    result = await executor.execute(release(config_url, runner, jit["runnerId"]))

    assert result == {"ok": True}
    assert world.github.runner("runner-a") is None
    assert await get(api, ObjectRef("EphemeralRunner", NS, "runner-a")) is None


async def test_release_runner_of_a_busy_runner_deletes_nothing(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str, clients: ActionsClients
) -> None:
    scale_set = await create_scale_set(executor, config_url)
    jit, config = await jit_secret(executor, api, config_url, scale_set["id"], "runner-a")
    async with clients.lease(scope(config_url), Kube(api, qps=100, burst=10, timeout=5)) as leased:
        await start_job(world, leased, scale_set["id"], config)
    runner = await get(api, ObjectRef("EphemeralRunner", NS, "runner-a"))
    assert runner is not None

    result = await executor.execute(release(config_url, runner, jit["runnerId"]))

    assert result["ok"] is False and result["error"] == "JobStillRunning"
    assert world.github.runner("runner-a") is not None
    assert await get(api, ObjectRef("EphemeralRunner", NS, "runner-a")) is not None


async def test_release_runner_counts_agent_not_found_as_removed(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str
) -> None:
    runner = await create_runner(api, "runner-gone", config_url, 1)
    agent_gone = world.github.inject(
        GitHubFault(method="DELETE", path="agents/", status=404, type_key="AgentNotFoundException")
    )

    result = await executor.execute(release(config_url, runner, 99))

    assert agent_gone.hits == 1
    assert result == {"ok": True}
    assert await get(api, ObjectRef("EphemeralRunner", NS, "runner-gone")) is None


# -- the scope: credentials, client cache, proxy, TLS ------------------------------------------------------


async def test_a_missing_credentials_secret_is_not_read_as_not_found(
    executor: JournaledBodies, config_url: str, world: World
) -> None:
    # DeleteRunnerScaleSet counts NotFound as done: a missing Secret must never say NotFound.
    other = ActionsScope(config_url=config_url, namespace=NS, secret_name="no-such-secret")
    result = await executor.execute(
        call(config_url, ActionsOp.DELETE_RUNNER_SCALE_SET, at=other, scaleSetId=1)
    )

    assert result["ok"] is False and result["error"] == "ConfigSecretMissing"
    assert f"{NS}/no-such-secret" in result["message"] and "does not exist" in result["message"]
    assert world.github.calls == []


async def test_malformed_or_refused_credentials(
    executor: JournaledBodies, api: client.ApiClient, config_url: str
) -> None:
    await create_secret(api, "empty", {"unrelated": "x"})
    await create_secret(api, "wrong-pat", {"github_token": "ghp_notTheAllowedToken000000000000000"})
    empty = ActionsScope(config_url=config_url, namespace=NS, secret_name="empty")
    wrong = ActionsScope(config_url=config_url, namespace=NS, secret_name="wrong-pat")
    vault = ActionsScope(
        config_url=config_url, namespace=NS, secret_name="key", vault={"type": "azure_key_vault"}
    )

    malformed = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_BY_NAME, at=empty, name="r"))
    refused = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_BY_NAME, at=wrong, name="r"))
    vaulted = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_BY_NAME, at=vault, name="r"))

    assert (malformed["ok"], malformed["error"]) == (False, "ConfigSecretIncomplete")
    assert (refused["ok"], refused["error"]) == (False, "AuthenticationFailed")
    # A vault without its azureKeyVault block: named before anything is asked of Azure.
    assert (vaulted["ok"], vaulted["error"]) == (False, "VaultConfigInvalid")
    assert "spec.vaultConfig.azureKeyVault.url is not set" in vaulted["message"]
    assert "ghp_notTheAllowed" not in refused["message"]


async def test_a_bad_config_url_is_reported(executor: JournaledBodies) -> None:
    result = await executor.execute(call("not a url", ActionsOp.GET_RUNNER_BY_NAME, name="r"))
    assert result["ok"] is False and result["error"] == "InvalidConfigUrl"


async def test_one_client_per_scope_until_its_secret_changes(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str, clients: ActionsClients
) -> None:
    lookup = call(config_url, ActionsOp.GET_RUNNER_BY_NAME, name="r")
    await executor.execute(lookup)
    await executor.execute(lookup)
    assert clients.cached == 1
    assert len(world.github.calls_to("POST", "runner-registration")) == 1  # one admin connection

    await replace_secret_data(api, CONFIG_SECRET, {"github_token": "ghp_rotatedToken0000000000000000000"})
    world.github.allow_pat("ghp_rotatedToken0000000000000000000")
    assert (await executor.execute(lookup))["ok"] is True

    assert clients.cached == 1
    assert len(world.github.calls_to("POST", "runner-registration")) == 2  # a new client, a new connection


async def test_the_scope_proxy_is_used_unless_no_proxy_lists_the_host(
    executor: JournaledBodies, config_url: str
) -> None:
    dead_proxy = {"http": {"url": "http://127.0.0.1:1"}}
    through = scope(config_url, proxy=dead_proxy)
    around = scope(config_url, proxy={**dead_proxy, "noProxy": ["127.0.0.1"]})

    failed = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_BY_NAME, at=through, name="r"))
    direct = await executor.execute(call(config_url, ActionsOp.GET_RUNNER_BY_NAME, at=around, name="r"))

    assert failed["ok"] is False and failed["error"] == "ServiceUnreachable"  # nothing answers there
    assert direct == {"ok": True, "runner": None}


async def test_a_missing_tls_config_map_is_reported(executor: JournaledBodies, config_url: str) -> None:
    tls = {"certificateFrom": {"configMapKeyRef": {"name": "ca", "key": "ca.crt"}}}
    result = await executor.execute(
        call(config_url, ActionsOp.GET_RUNNER_BY_NAME, at=scope(config_url, tls=tls), name="r")
    )
    assert result["ok"] is False and result["error"] == "RootCAMissing"
    assert "spec.githubServerTLS" in result["message"]


async def test_a_tls_config_map_without_a_certificate_is_reported(
    executor: JournaledBodies, api: client.ApiClient, config_url: str
) -> None:
    config_map = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="ca"), data={"ca.crt": "not a PEM"})
    await client.CoreV1Api(api).create_namespaced_config_map(NS, config_map)
    tls = {"certificateFrom": {"configMapKeyRef": {"name": "ca", "key": "ca.crt"}}}
    result = await executor.execute(
        call(config_url, ActionsOp.GET_RUNNER_BY_NAME, at=scope(config_url, tls=tls), name="r")
    )
    assert result["ok"] is False and result["error"] == "RootCAInvalid"
    assert "not a PEM certificate" in result["message"]
