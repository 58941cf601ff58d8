"""The executor's Secret effects: the JIT Secret, the listener config Secret and the proxy Secret hold the
secret material; results and logs never do."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from kubernetes_asyncio import client

from actions import listenerconfig
from sim.faults import Fault
from sim.world import World
from statemachines import effects, kinds, naming
from statemachines.effects import ActionsCall, ActionsOp, ActionsScope, ObjectRef
from tests.e2e.controller.executorworld import (
    GROUP,
    NS,
    PAT,
    VERSION,
    JournaledBodies,
    b64,
    create_runner,
    create_secret,
    get,
    owner_of,
    replace_secret_data,
    scope,
    unb64,
)
from tests.helpers import eventually

CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBexampleOnlyNotParsedHere\n-----END CERTIFICATE-----\n"
PROXY_PASSWORD = "pr0xy-s3cret/with:odd@chars"
HOLD = "example.com/hold"


@pytest.fixture(scope="module")
def app_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


async def scale_set_id(executor: JournaledBodies, config_url: str) -> int:
    created = await executor.execute(
        ActionsCall(
            ObjectRef("AutoscalingRunnerSet", NS, "arc"),
            scope(config_url),
            ActionsOp.CREATE_RUNNER_SCALE_SET,
            {"name": "arc", "runnerGroupId": 1, "labels": ["arc"]},
        )
    )
    return int(created["scaleSet"]["id"])


async def jit_effect(
    api: client.ApiClient, config_url: str, set_id: int, name: str, *, secret_name: str = ""
) -> effects.CreateJitConfigSecret:
    runner = await create_runner(api, secret_name or name, config_url, set_id)
    return effects.CreateJitConfigSecret(
        target=ObjectRef("Secret", NS, secret_name or name),
        scope=scope(config_url),
        runner_name=name,
        scale_set_id=set_id,
        work_folder="/runner/_work",
        owner=owner_of(runner, "EphemeralRunner"),
        metadata={"labels": {"team": "ci"}, "annotations": {"note": "jit"}},
    )


def listener_effect(config_url: str, **scope_changes: Any) -> effects.CreateListenerConfigSecret:
    settings = {
        "configure_url": config_url,
        "vault_type": "",
        "ephemeral_runner_set_namespace": NS,
        "ephemeral_runner_set_name": "arc-ers",
        "max_runners": 5,
        "min_runners": 0,
        "runner_scale_set_id": 7,
        "runner_scale_set_name": "arc",
        "server_root_ca": "",
        "log_level": "debug",
        "log_format": "text",
        "metrics_addr": "",
        "metrics_endpoint": "",
        "metrics": None,
    }
    return effects.CreateListenerConfigSecret(
        target=ObjectRef("Secret", NS, "arc-listener-config"),
        scope=scope(config_url, **scope_changes),
        settings=settings,
        owner={},
        metadata={"labels": {"app": "listener"}, "annotations": {naming.ANNOTATION_INTEGRITY_HASH: "h1"}},
    )


def proxy_effect(labels: dict[str, str] | None = None) -> effects.WriteProxySecret:
    return effects.WriteProxySecret(
        target=ObjectRef("Secret", NS, "arc-runner-proxy"),
        proxy={
            "http": {"url": "http://proxy.internal:3128", "credentialSecretRef": "proxy-auth"},
            "https": {"url": "http://proxy.internal:3129"},
            "noProxy": ["example.com", ".internal"],
        },
        owner={},
        metadata={"labels": labels or {naming.LABEL_SCALE_SET_NAME: "arc"}},
    )


def decoded(secret: dict[str, Any]) -> dict[str, str]:
    return {k: unb64(v) for k, v in secret["data"].items()}


# -- the JIT Secret ----------------------------------------------------------------------------------------


async def test_the_jit_config_goes_into_the_secret_and_only_the_runner_into_the_result(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str
) -> None:
    set_id = await scale_set_id(executor, config_url)
    effect = await jit_effect(api, config_url, set_id, "runner-a")

    result = await executor.execute(effect)

    agent = world.github.runner("runner-a")
    assert agent is not None and agent.work_folder == "/runner/_work"
    assert result == {"ok": True, "runnerId": agent.id, "runnerName": "runner-a"}
    secret = await get(api, effect.target)
    assert secret is not None
    data = decoded(secret)
    assert sorted(data) == ["jitToken", "runnerId", "runnerName", "scaleSetId"]
    assert (data["runnerId"], data["runnerName"], data["scaleSetId"]) == (
        str(agent.id),
        "runner-a",
        str(set_id),
    )
    meta = secret["metadata"]
    assert meta["labels"] == {"team": "ci"}
    assert meta["annotations"] == {
        "note": "jit",
        naming.ANNOTATION_JIT_RUNNER_ID: str(agent.id),
        naming.ANNOTATION_JIT_RUNNER_NAME: "runner-a",
    }
    assert [o["uid"] for o in meta["ownerReferences"]] == [effect.owner["uid"]]
    # The config in the Secret is the one that registers this runner.
    registration = world.github.register_runner(data["jitToken"], "2.330.0")
    assert (registration.runner_id, registration.name) == (agent.id, "runner-a")


async def test_an_existing_jit_secret_generates_no_new_config(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str
) -> None:
    set_id = await scale_set_id(executor, config_url)
    effect = await jit_effect(api, config_url, set_id, "runner-a")
    first = await executor.execute(effect)

    second = await executor.execute(effect)

    assert second == {**first, "alreadyExisted": True}
    assert len(world.github.calls_to("POST", "generatejitconfig")) == 1
    assert len(world.github.state.agents) == 1


async def test_a_duplicate_runner_name_is_runner_exists(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str
) -> None:
    set_id = await scale_set_id(executor, config_url)
    await executor.execute(await jit_effect(api, config_url, set_id, "runner-a"))
    clash = await jit_effect(api, config_url, set_id, "runner-a", secret_name="runner-a-again")

    result = await executor.execute(clash)

    assert result["ok"] is False and result["error"] == "RunnerExists"
    assert await get(api, clash.target) is None
    assert len(world.github.state.agents) == 1


async def test_a_jit_secret_that_cannot_be_written_leaves_no_registration(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str
) -> None:
    set_id = await scale_set_id(executor, config_url)
    effect = await jit_effect(api, config_url, set_id, "runner-a")
    world.inject(Fault(verb="create", path="/secrets", code=500, message="etcd is sad"))

    result = await executor.execute(effect)

    assert result["ok"] is False and result["error"] == "InternalError"
    assert "etcd is sad" in result["message"]
    assert world.github.runner("runner-a") is None  # removed again: the next attempt meets no RunnerExists
    assert (await executor.execute(effect))["ok"] is True


async def release(api: client.ApiClient, name: str) -> None:
    """Delete the EphemeralRunner ``name`` while a finalizer holds its JIT Secret, as a predecessor of a
    reused runner name leaves it: the Secret lingers (terminating once the garbage collector gets to it)."""
    core = client.CoreV1Api(api)
    await core.patch_namespaced_secret(name, NS, {"metadata": {"finalizers": [HOLD]}})
    custom = client.CustomObjectsApi(api)
    await custom.delete_namespaced_custom_object(GROUP, VERSION, NS, kinds.EPHEMERAL_RUNNER.plural, name)

    async def gone() -> bool:
        return await get(api, ObjectRef("EphemeralRunner", NS, name)) is None

    await eventually(gone, timeout=10.0, what=f"the EphemeralRunner {name} deleted")


async def test_a_predecessors_jit_secret_is_not_adopted_by_a_runner_reusing_its_name(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str
) -> None:
    set_id = await scale_set_id(executor, config_url)
    old = await jit_effect(api, config_url, set_id, "runner-a")
    assert (await executor.execute(old))["ok"] is True
    await release(api, "runner-a")
    new = await jit_effect(api, config_url, set_id, "runner-a")  # the same name, a new uid
    assert new.owner["uid"] != old.owner["uid"]

    result = await executor.execute(new)

    assert result["ok"] is False and result["error"] == "AlreadyExists", result
    assert old.owner["uid"] in result["message"] and "another owner" in result["message"]
    assert "runnerId" not in result and "runnerName" not in result  # not the predecessor's runner
    assert len(world.github.calls_to("POST", "generatejitconfig")) == 1
    secret = await get(api, new.target)
    assert secret is not None
    assert [o["uid"] for o in secret["metadata"]["ownerReferences"]] == [old.owner["uid"]]


async def test_a_secret_of_another_owner_written_meanwhile_is_not_adopted_and_leaves_no_registration(
    executor: JournaledBodies, api: client.ApiClient, world: World, config_url: str
) -> None:
    set_id = await scale_set_id(executor, config_url)
    other = await create_runner(api, "someone-else", config_url, set_id)
    owner = owner_of(other, "EphemeralRunner")
    await client.CoreV1Api(api).create_namespaced_secret(
        NS, {"metadata": {"name": "runner-b", "namespace": NS, "ownerReferences": [owner]}}
    )
    effect = await jit_effect(api, config_url, set_id, "runner-b")
    # The executor's lookup misses it, as if it had been written between the lookup and the create.
    world.inject(Fault(verb="get", path="/secrets/runner-b$", code=404, message="not yet"))

    result = await executor.execute(effect)

    assert result["ok"] is False and result["error"] == "AlreadyExists", result
    assert owner["uid"] in result["message"]
    assert len(world.github.calls_to("POST", "generatejitconfig")) == 1
    assert world.github.runner("runner-b") is None  # the registration made meanwhile is removed again
    secret = await get(api, effect.target)
    assert secret is not None and "data" not in secret  # the other owner's Secret, untouched


# -- the listener config Secret ----------------------------------------------------------------------------


async def test_the_listener_config_secret_embeds_the_credentials_and_the_ca(
    executor: JournaledBodies, api: client.ApiClient, config_url: str
) -> None:
    config_map = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="github-ca"), data={"ca.crt": CA_PEM})
    await client.CoreV1Api(api).create_namespaced_config_map(NS, config_map)
    tls = {"certificateFrom": {"configMapKeyRef": {"name": "github-ca", "key": "ca.crt"}}}
    effect = listener_effect(config_url, tls=tls)

    result = await executor.execute(effect)

    assert result == {"ok": True}
    secret = await get(api, effect.target)
    assert secret is not None
    config = json.loads(decoded(secret)["config.json"])
    assert config == {**effect.settings, "github_token": PAT, "server_root_ca": CA_PEM}
    assert secret["metadata"]["labels"] == {"app": "listener"}
    assert secret["metadata"]["annotations"] == {naming.ANNOTATION_INTEGRITY_HASH: "h1"}
    parsed = listenerconfig.parse(decoded(secret)["config.json"])  # the listener accepts it
    assert parsed.runner_scale_set_id == 7 and parsed.server_root_ca == CA_PEM.strip()

    assert await executor.execute(effect) == {"ok": True, "alreadyExisted": True}


async def test_the_listener_config_secret_with_github_app_credentials(
    executor: JournaledBodies, api: client.ApiClient, config_url: str, app_key: str
) -> None:
    app = {"github_app_id": "12345", "github_app_installation_id": "678", "github_app_private_key": app_key}
    await create_secret(api, "github-app", app)
    pat_effect = listener_effect(config_url)
    effect = effects.CreateListenerConfigSecret(
        pat_effect.target, ActionsScope(config_url, NS, "github-app"), pat_effect.settings, pat_effect.owner
    )

    result = await executor.execute(effect)

    assert result == {"ok": True}
    secret = await get(api, effect.target)
    assert secret is not None
    config = json.loads(decoded(secret)["config.json"])
    assert (config["github_app_id"], config["github_app_installation_id"]) == ("12345", 678)
    assert config["github_app_private_key"] == app_key
    assert "github_token" not in config


async def test_a_vault_listener_config_embeds_no_credentials(
    executor: JournaledBodies, api: client.ApiClient, config_url: str
) -> None:
    effect = listener_effect(config_url, vault={"type": "azure_key_vault"})

    assert await executor.execute(effect) == {"ok": True}

    secret = await get(api, effect.target)
    assert secret is not None
    config = json.loads(decoded(secret)["config.json"])
    assert not {"github_token", "github_app_private_key"} & set(config)


# -- the proxy Secret --------------------------------------------------------------------------------------


async def test_the_proxy_secret_is_written_only_when_it_differs(
    executor: JournaledBodies, api: client.ApiClient, world: World
) -> None:
    await create_secret(api, "proxy-auth", {"username": "svc", "password": PROXY_PASSWORD})
    effect = proxy_effect()

    created = await executor.execute(effect)

    assert created == {"ok": True, "created": True}
    secret = await get(api, effect.target)
    assert secret is not None
    data = decoded(secret)
    assert data == {
        "http_proxy": "http://svc:pr0xy-s3cret%2Fwith%3Aodd%40chars@proxy.internal:3128",
        "https_proxy": "http://proxy.internal:3129",
        "no_proxy": "example.com,.internal",
    }
    assert secret["metadata"]["labels"] == {naming.LABEL_SCALE_SET_NAME: "arc"}
    first_hash = secret["metadata"]["annotations"][naming.ANNOTATION_INTEGRITY_HASH]
    assert first_hash == naming.stable_hash(data)

    writes_before = len([r for r in world.requests if r.verb in ("create", "patch", "update")])
    assert await executor.execute(effect) == {"ok": True, "unchanged": True}
    assert len([r for r in world.requests if r.verb in ("create", "patch", "update")]) == writes_before

    await replace_secret_data(api, "proxy-auth", {"password": "rotated"})
    assert await executor.execute(effect) == {"ok": True, "updated": True}
    secret = await get(api, effect.target)
    assert secret is not None
    assert decoded(secret)["http_proxy"] == "http://svc:rotated@proxy.internal:3128"
    assert secret["metadata"]["annotations"][naming.ANNOTATION_INTEGRITY_HASH] != first_hash

    drifted = proxy_effect({naming.LABEL_SCALE_SET_NAME: "arc", naming.LABEL_SCALE_SET_NAMESPACE: NS})
    assert await executor.execute(drifted) == {"ok": True, "updated": True}
    secret = await get(api, effect.target)
    assert secret is not None and secret["metadata"]["labels"][naming.LABEL_SCALE_SET_NAMESPACE] == NS


async def test_a_missing_proxy_credentials_secret_is_reported(executor: JournaledBodies) -> None:
    result = await executor.execute(proxy_effect())
    assert result["ok"] is False and result["error"] == "ProxySecretMissing"
    assert f"{NS}/proxy-auth" in result["message"]


# -- no secret in a result or a log line -------------------------------------------------------------------


async def test_no_result_and_no_log_line_holds_a_secret(
    executor: JournaledBodies,
    api: client.ApiClient,
    world: World,
    config_url: str,
    app_key: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    await create_secret(api, "proxy-auth", {"username": "svc", "password": PROXY_PASSWORD})
    app = {"github_app_id": "12345", "github_app_installation_id": "678", "github_app_private_key": app_key}
    await create_secret(api, "github-app", app)
    set_id = await scale_set_id(executor, config_url)
    bodies: list[dict[str, Any]] = []
    jit = await jit_effect(api, config_url, set_id, "runner-a")
    bodies.append(await executor.execute(jit))
    bodies.append(await executor.execute(jit))
    bodies.append(
        await executor.execute(await jit_effect(api, config_url, set_id, "runner-a", secret_name="dup"))
    )
    world.inject(Fault(verb="create", path="/secrets", code=422, message="rejected"))
    bodies.append(await executor.execute(await jit_effect(api, config_url, set_id, "runner-b")))
    bodies.append(await executor.execute(listener_effect(config_url)))
    app_listener = listener_effect(config_url)
    bodies.append(
        await executor.execute(
            effects.CreateListenerConfigSecret(
                ObjectRef("Secret", NS, "app-config"),
                ActionsScope(config_url, NS, "github-app"),
                app_listener.settings,
                app_listener.owner,
            )
        )
    )
    bodies.append(await executor.execute(proxy_effect()))
    bodies.append(await executor.execute(proxy_effect({"other": "label"})))
    jit_secret = await get(api, jit.target)
    assert jit_secret is not None
    jit_config = unb64(jit_secret["data"]["jitToken"])

    secrets = [
        PAT,
        jit_config,
        PROXY_PASSWORD,
        *[line for line in app_key.splitlines() if "PRIVATE" not in line],
    ]
    forms = [form for s in secrets for form in (s, b64(s))]
    results_text = json.dumps(bodies)
    log_text = "\n".join(f"{r.name} {r.getMessage()} {r.__dict__}" for r in caplog.records)
    assert caplog.records  # the executor and the clients did log
    for form in forms:
        assert form not in results_text
        assert form not in log_text
    assert all(set(body) <= {"ok", "error", "message", "runnerId", "runnerName", "alreadyExisted",
                             "created", "updated", "unchanged", "retryAfter"} for body in bodies)  # fmt: skip
