"""The simulated runner and listener containers (``sim.containers``) run by the kubelet of a world with a fake
GitHub: an outdated runner exits 7, a current one takes a job and exits 0, a listener pod runs arcsm's
listener from its config Secret and serves its metrics on the pod's address, and together they run a job
with no secret in any log line.

Inputs: ``World(github=GitHubFake(...))`` with 0.2 s long polls, 0.05 s jobs and minimum runner version
2.330.0; a PAT the fake allows; a scale set made through the Actions client. Pods are created through
kubernetes_asyncio as the controller would build them (§1.7 for the listener; for runners the
``ACTIONS_RUNNER_INPUT_JITCONFIG`` env from the runner's Secret key ``jitToken``). Nothing is mocked.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from kubernetes_asyncio import client
from prometheus_client.parser import text_string_to_metric_families

from actions.client import ActionsClient, ClientSettings, RateLimit
from actions.credentials import PersonalAccessToken
from actions.models import RunnerScaleSet
from actions.redaction import SecretStr
from actions.sessions import MessageQueue
from sim.containers import image_version
from sim.github import GitHubFake, GitHubSettings
from sim.github.records import JobState
from sim.world import World
from tests.helpers import eventually

PAT = "ghp_simContainersToken000000000000001"
NS = "default"
CONTROLLER_NS = "arc-systems"
RUNNER_IMAGE = "ghcr.io/actions/actions-runner"
GROUP, VERSION = "actions.github.com", "v1alpha1"


@pytest.fixture
async def world() -> AsyncIterator[World]:
    settings = GitHubSettings(long_poll_seconds=0.2, job_seconds=0.05, min_runner_version="2.330.0")
    async with World(seed=1, github=GitHubFake(settings=settings, seed=1)) as w:
        w.github.allow_pat(PAT)
        yield w


@pytest.fixture
async def actions(world: World) -> AsyncIterator[ActionsClient]:
    async with ActionsClient(
        config_url=world.github.config_url("my-org"),
        credentials=PersonalAccessToken(token=SecretStr(PAT)),
        settings=ClientSettings(rate_limit=RateLimit(max_rate=1000)),
    ) as c:
        yield c


@pytest.fixture
async def scale_set_id(actions: ActionsClient) -> int:
    return (await actions.create_runner_scale_set(RunnerScaleSet(name="arc", runner_group_id=1))).id


async def runner_pod(
    kube: client.ApiClient, actions: ActionsClient, scale_set_id: int, name: str, tag: str
) -> str:
    """A runner's Secret (``jitToken``) and pod, as the EphemeralRunner controller makes them; returns
    the JIT config (for the log scan)."""
    jit = await actions.generate_jit_runner_config(scale_set_id, name)
    core = client.CoreV1Api(kube)
    await core.create_namespaced_secret(
        NS, {"metadata": {"name": name}, "stringData": {"jitToken": jit.encoded_jit_config.reveal()}}
    )
    env = [
        {
            "name": "ACTIONS_RUNNER_INPUT_JITCONFIG",
            "valueFrom": {"secretKeyRef": {"name": name, "key": "jitToken"}},
        },
        {"name": "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT", "value": "actions-runner-controller/arcsm"},
    ]
    await core.create_namespaced_pod(
        NS,
        {
            "metadata": {"name": name},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "runner", "image": f"{RUNNER_IMAGE}:{tag}", "env": env}],
            },
        },
    )
    return jit.encoded_jit_config.reveal()


async def terminated(kube: client.ApiClient, name: str, namespace: str = NS) -> Any:
    """The pod once it is terminal, with its container's terminated state."""

    async def done() -> Any:
        pod = await client.CoreV1Api(kube).read_namespaced_pod(name, namespace)
        return pod if pod.status.phase in ("Succeeded", "Failed") else None

    pod = await eventually(done, what=f"pod {name} terminal", timeout=10)
    return pod, pod.status.container_statuses[0].state.terminated


def test_image_versions() -> None:
    assert image_version(f"{RUNNER_IMAGE}:2.329.0", minimum="2.330.0") == "2.329.0"
    assert image_version(f"{RUNNER_IMAGE}:v2.331.1@sha256:abc", minimum="0.0.0") == "v2.331.1"
    assert image_version(f"{RUNNER_IMAGE}:latest", minimum="0.0.0") == "2.330.0"
    assert image_version("localhost:5000/runner", minimum="2.400.0") == "2.400.0"  # no tag: current


async def test_an_outdated_runner_exits_7(
    world: World, kube: client.ApiClient, actions: ActionsClient, scale_set_id: int
) -> None:
    await runner_pod(kube, actions, scale_set_id, "runner-old", "2.329.0")
    pod, state = await terminated(kube, "runner-old")
    assert (pod.status.phase, state.exit_code, state.reason) == ("Failed", 7, "Error")
    agent = world.github.runner("runner-old")
    assert agent is not None and not agent.online and agent.version == "2.329.0"


async def test_a_current_runner_takes_a_job_and_exits_0(
    world: World, kube: client.ApiClient, actions: ActionsClient, scale_set_id: int
) -> None:
    fake = world.github
    await runner_pod(kube, actions, scale_set_id, "runner-new", "2.330.0")
    await eventually(lambda: (a := fake.runner("runner-new")) is not None and a.online, what="runner online")
    (job,) = fake.queue_jobs(scale_set_id, 1)
    async with await MessageQueue.open(actions, scale_set_id=scale_set_id, owner_name="test") as queue:
        assert await queue.acquire_jobs([job.runner_request_id]) == (job.runner_request_id,)
    pod, state = await terminated(kube, "runner-new")
    assert (pod.status.phase, state.exit_code) == ("Succeeded", 0)
    assert (job.state, job.result, job.runner_name) == (JobState.COMPLETED, "succeeded", "runner-new")
    assert fake.runner("runner-new") is None  # an ephemeral runner is removed after its job


async def test_a_runner_without_a_jit_config_exits_1(world: World, kube: client.ApiClient) -> None:
    await client.CoreV1Api(kube).create_namespaced_pod(
        NS,
        {
            "metadata": {"name": "runner-bare"},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "runner", "image": f"{RUNNER_IMAGE}:2.330.0"}],
            },
        },
    )
    pod, state = await terminated(kube, "runner-bare")
    assert (pod.status.phase, state.exit_code) == ("Failed", 1)


async def test_deleting_an_idle_runner_takes_it_offline(
    world: World, kube: client.ApiClient, actions: ActionsClient, scale_set_id: int
) -> None:
    await runner_pod(kube, actions, scale_set_id, "runner-idle", "latest")
    await eventually(lambda: (a := world.github.runner("runner-idle")) is not None and a.online)
    await client.CoreV1Api(kube).delete_namespaced_pod("runner-idle", NS)
    await eventually(lambda: not world.kubelet.serving(NS, "runner-idle"), what="pod gone")
    agent = world.github.runner("runner-idle")
    assert agent is not None and not agent.online


def listener_config(world: World, scale_set_id: int, **overrides: Any) -> dict[str, Any]:
    return {
        "configure_url": world.github.config_url("my-org"),
        "github_token": PAT,
        "ephemeral_runner_set_namespace": NS,
        "ephemeral_runner_set_name": "arc-ers",
        "max_runners": 2,
        "min_runners": 1,
        "runner_scale_set_id": scale_set_id,
        "runner_scale_set_name": "arc",
        "log_level": "debug",
        "log_format": "text",
        "metrics_addr": ":8080",
        "metrics_endpoint": "/metrics",
        **overrides,
    }


async def listener_pod(kube: client.ApiClient, name: str, config: dict[str, Any]) -> None:
    """The listener's config Secret, ServiceAccount and pod, as §1.7 builds them."""
    core = client.CoreV1Api(kube)
    await core.create_namespaced_secret(
        CONTROLLER_NS,
        {"metadata": {"name": f"{name}-config"}, "stringData": {"config.json": json.dumps(config)}},
    )
    await core.create_namespaced_service_account(CONTROLLER_NS, {"metadata": {"name": name}})
    container = {
        "name": "listener",
        "image": "ghcr.io/actions/gha-runner-scale-set-controller:0.13.0",
        "command": ["/ghalistener"],
        "env": [{"name": "LISTENER_CONFIG_PATH", "value": "/etc/gha-listener/config.json"}],
        "volumeMounts": [{"name": "listener-config", "mountPath": "/etc/gha-listener", "readOnly": True}],
        "ports": [{"name": "metrics", "containerPort": 8080, "protocol": "TCP"}],
    }
    await core.create_namespaced_pod(
        CONTROLLER_NS,
        {
            "metadata": {"name": name},
            "spec": {
                "serviceAccountName": name,
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 60,
                "nodeSelector": {"kubernetes.io/os": "linux"},
                "containers": [container],
                "volumes": [{"name": "listener-config", "secret": {"secretName": f"{name}-config"}}],
            },
        },
    )


async def create_runner_set(kube: client.ApiClient) -> None:
    await client.CustomObjectsApi(kube).create_namespaced_custom_object(
        GROUP,
        VERSION,
        NS,
        "ephemeralrunnersets",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "EphemeralRunnerSet",
            "metadata": {"name": "arc-ers"},
            "spec": {"replicas": 0, "patchID": 0},
        },
    )


async def runner_set_spec(kube: client.ApiClient) -> dict[str, Any]:
    ers = await client.CustomObjectsApi(kube).get_namespaced_custom_object(
        GROUP, VERSION, NS, "ephemeralrunnersets", "arc-ers"
    )
    spec: dict[str, Any] = ers["spec"]
    return spec


async def test_a_listener_pod_runs_the_listener(
    world: World, kube: client.ApiClient, scale_set_id: int
) -> None:
    fake = world.github
    await create_runner_set(kube)
    await listener_pod(kube, "arc-754b578d-listener", listener_config(world, scale_set_id))
    session = await eventually(
        lambda: fake.state.session_of(scale_set_id), what="a message session", timeout=10
    )
    assert session.owner == "arc-754b578d-listener"  # the pod's hostname
    await eventually(
        lambda: _spec_is(runner_set_spec(kube), {"patchID": 0, "replicas": 1}), what="scaled to minRunners"
    )

    await client.CoreV1Api(kube).delete_namespaced_pod("arc-754b578d-listener", CONTROLLER_NS)
    await eventually(
        lambda: fake.state.session_of(scale_set_id) is None, what="the session deleted", timeout=10
    )
    await eventually(lambda: not world.kubelet.serving(CONTROLLER_NS, "arc-754b578d-listener"), timeout=10)


async def _spec_is(spec: Any, expected: dict[str, Any]) -> bool:
    found = await spec
    return all(found.get(k) == v for k, v in expected.items())


async def test_a_listener_pod_with_a_bad_config_exits_1(
    world: World, kube: client.ApiClient, scale_set_id: int
) -> None:
    await listener_pod(kube, "bad-listener", listener_config(world, scale_set_id, min_runners=5))
    pod, state = await terminated(kube, "bad-listener", CONTROLLER_NS)
    assert (pod.status.phase, state.exit_code) == ("Failed", 1)
    assert world.github.state.session_of(scale_set_id) is None


async def test_listener_and_runner_pods_run_a_job_without_leaking_secrets(
    world: World,
    kube: client.ApiClient,
    actions: ActionsClient,
    scale_set_id: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    fake = world.github
    await create_runner_set(kube)
    await listener_pod(kube, "arc-listener", listener_config(world, scale_set_id))
    await eventually(lambda: fake.state.session_of(scale_set_id), what="a message session", timeout=10)
    jit = await runner_pod(kube, actions, scale_set_id, "arc-runner-1", "2.330.0")
    (job,) = fake.queue_jobs(scale_set_id, 1)
    pod, state = await terminated(kube, "arc-runner-1")
    assert (pod.status.phase, state.exit_code) == ("Succeeded", 0)
    assert job.state == JobState.COMPLETED and job.runner_name == "arc-runner-1"
    await eventually(
        lambda: _spec_is(runner_set_spec(kube), {"patchID": 0, "replicas": 1}),
        what="back to idle",
        timeout=10,
    )
    await client.CoreV1Api(kube).delete_namespaced_pod("arc-listener", CONTROLLER_NS)
    await eventually(lambda: fake.state.session_of(scale_set_id) is None, timeout=10)

    admin = await actions.admin_connection()
    secrets = {PAT, jit, admin.token.reveal()}
    leaks = [secret[:6] for secret in secrets if secret in caplog.text]
    assert not leaks
    assert "arc-runner-1" in caplog.text  # the scan did see the runner's and the listener's logs


async def test_a_listener_pod_serves_its_metrics_on_its_pod_address_until_it_is_deleted(
    world: World, kube: client.ApiClient, scale_set_id: int
) -> None:
    await create_runner_set(kube)
    await listener_pod(kube, "arc-served-listener", listener_config(world, scale_set_id))
    core = client.CoreV1Api(kube)

    async def running_ip() -> str | None:
        pod = await core.read_namespaced_pod("arc-served-listener", CONTROLLER_NS)
        return pod.status.pod_ip if pod.status.phase == "Running" else None

    pod_ip = await eventually(running_ip, what="the listener pod running", timeout=10)
    assert ipaddress.ip_address(pod_ip) in ipaddress.ip_network("127.244.0.0/16")
    url = f"http://{pod_ip}:8080/metrics"  # the config's ":8080" and "/metrics"
    async with httpx.AsyncClient(trust_env=False, timeout=5) as http:

        async def scaled() -> dict[str, float] | None:
            try:
                answer = await http.get(url)
            except httpx.ConnectError:
                return None
            samples = {
                sample.name: sample.value
                for family in text_string_to_metric_families(answer.text)
                for sample in family.samples
                if sample.labels.get("name") == "arc"
            }
            return samples if samples.get("gha_desired_runners") == 1 else None

        samples = await eventually(scaled, what="the listener's metrics on its pod's address", timeout=10)
        assert (samples["gha_min_runners"], samples["gha_max_runners"]) == (1, 2)
        assert (await http.get(f"http://{pod_ip}:8080/other")).status_code == 404

        await core.delete_namespaced_pod("arc-served-listener", CONTROLLER_NS)
        await eventually(lambda: not world.kubelet.serving(CONTROLLER_NS, "arc-served-listener"), timeout=10)
        with pytest.raises(httpx.ConnectError):
            await http.get(url)
