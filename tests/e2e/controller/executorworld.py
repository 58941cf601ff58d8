"""What the executor e2e tests share: the namespace, the credentials, objects to own Secrets, reads of
the emulated world through the same kubernetes_asyncio client the executor uses, and the executor seen as
the runtime journals its results (``JournaledBodies``)."""

from __future__ import annotations

import base64
from typing import Any

from kubernetes_asyncio import client

from actions.client import ActionsClient
from controller.executor.executing import Executor
from controller.executor.kubewriting import object_path
from sim.world import World
from statemachines import kinds
from statemachines.effects import ActionsScope, Effect, ObjectRef

NS = "arc-runners"
CONFIG_SECRET = "github-config"
PAT = "ghp_executorE2eToken000000000000000001"
GROUP, VERSION = kinds.GROUP, kinds.VERSION
RUNNER_VERSION = "2.330.0"


class JournaledBodies:
    """An executor whose results are read as the ``effect_result`` bodies the runtime journals for them
    (``EffectResult.to_body``), so the tests pin the journal's bytes as well as the results."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    async def execute(self, effect: Effect) -> dict[str, Any]:
        return (await self.executor.execute(effect)).to_body()


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def scope(config_url: str, **changes: Any) -> ActionsScope:
    return ActionsScope(
        config_url=config_url, namespace=changes.pop("namespace", NS), secret_name=CONFIG_SECRET, **changes
    )


async def create_namespace(api: client.ApiClient, name: str = NS) -> None:
    await client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))


async def create_secret(
    api: client.ApiClient, name: str, data: dict[str, str], namespace: str = NS
) -> dict[str, Any]:
    body = client.V1Secret(
        metadata=client.V1ObjectMeta(name=name, namespace=namespace),
        data={k: b64(v) for k, v in data.items()},
    )
    created = await client.CoreV1Api(api).create_namespaced_secret(namespace, body)
    return dict(api.sanitize_for_serialization(created))


async def replace_secret_data(api: client.ApiClient, name: str, data: dict[str, str]) -> None:
    patch = {"data": {k: b64(v) for k, v in data.items()}}
    await api.call_api(
        f"/api/v1/namespaces/{NS}/secrets/{name}",
        "PATCH",
        header_params={"Content-Type": "application/merge-patch+json", "Accept": "application/json"},
        body=patch,
        response_types_map={200: "object"},
        auth_settings=["BearerToken"],
        _return_http_data_only=True,
    )


async def get(api: client.ApiClient, ref: ObjectRef) -> dict[str, Any] | None:
    """The object as JSON, or None when it does not exist."""
    try:
        found: dict[str, Any] = await api.call_api(
            object_path(ref),
            "GET",
            header_params={"Accept": "application/json"},
            response_types_map={200: "object"},
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
        )
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return found


async def create_runner(
    api: client.ApiClient, name: str, config_url: str, scale_set_id: int
) -> dict[str, Any]:
    """An EphemeralRunner to own a JIT Secret (the garbage collector deletes Secrets whose owner is gone)."""
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "EphemeralRunner",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "githubConfigUrl": config_url,
            "githubConfigSecret": CONFIG_SECRET,
            "runnerScaleSetId": scale_set_id,
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:latest"}],
            },
        },
    }
    created: dict[str, Any] = await client.CustomObjectsApi(api).create_namespaced_custom_object(
        GROUP, VERSION, NS, kinds.EPHEMERAL_RUNNER.plural, body
    )
    return created


def owner_of(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    meta = obj["metadata"]
    return {
        "apiVersion": kinds.API_VERSION,
        "kind": kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_body(name: str, **spec: Any) -> dict[str, Any]:
    pod_spec = {"restartPolicy": "Never", "containers": [{"name": "runner", "image": "busybox"}], **spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": pod_spec}


async def start_job(world: World, client: ActionsClient, scale_set_id: int, jit_config: str) -> int:
    """Connect the runner of ``jit_config`` and have it take a job (as a listener and a runner would);
    returns the job's runnerRequestId. The runner is busy until the job completes."""
    runner = world.github.register_runner(jit_config, RUNNER_VERSION)
    session = await client.create_message_session(scale_set_id, "listener")
    (job,) = world.github.queue_jobs(scale_set_id, 1)
    token = session.message_queue_access_token
    await client.get_message(session.message_queue_url, token, last_message_id=0, max_capacity=1)
    await client.acquire_jobs(scale_set_id, token, [job.runner_request_id])
    started = await world.github.next_job_for(runner.runner_id, timeout=5)
    assert started is not None
    return job.runner_request_id
