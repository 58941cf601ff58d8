"""The log subresource's answers for pods whose containers are simulated (no process, no output).

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Outputs: a running simulated container
has an empty log; the API's errors for a missing pod, an unbound pod, a pod of several containers asked
without ``container``, a container the pod does not have, a waiting container, and ``previous`` before
any restart.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client

from tests.e2e.sim.conformance import api_error, status_body
from tests.helpers import eventually

NS = "default"


def two_containers(name: str, **spec: Any) -> dict[str, Any]:
    containers = [{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]
    return {"metadata": {"name": name}, "spec": {"containers": containers, **spec}}


async def running(core: client.CoreV1Api, name: str) -> None:
    async def up() -> bool:
        return (await core.read_namespaced_pod(name, NS)).status.phase == "Running"

    await eventually(up, what=f"{name} running")


async def test_a_simulated_container_has_an_empty_log(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(
        NS, {"metadata": {"name": "quiet"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    )
    await running(core, "quiet")
    assert await core.read_namespaced_pod_log("quiet", NS) == ""


@pytest.mark.parametrize(
    ("pod", "kwargs", "code", "message"),
    [
        ("missing", {}, 404, 'pods "missing" not found'),
        ("pair", {}, 400, "a container name must be specified for pod pair, choose one of: [a b]"),
        ("pair", {"container": "z"}, 400, "container z is not valid for pod pair"),
        (
            "pair",
            {"container": "a", "previous": True},
            400,
            'previous terminated container "a" in pod "pair" not found',
        ),
        ("unbound", {"container": "a"}, 400, "pod unbound does not have a host assigned"),
    ],
    ids=["missing-pod", "no-container", "unknown-container", "no-previous", "unbound"],
)
async def test_log_request_errors(
    kube: client.ApiClient, pod: str, kwargs: dict[str, Any], code: int, message: str
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(NS, two_containers("pair"))
    await core.create_namespaced_pod(NS, two_containers("unbound", schedulerName="nobody"))
    await running(core, "pair")
    exc = await api_error(core.read_namespaced_pod_log(pod, NS, **kwargs))
    assert (exc.status, status_body(exc)["message"]) == (code, message)


async def test_a_waiting_container_has_no_log_yet(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    body = two_containers("pulling")
    body["metadata"]["annotations"] = {"sim.arcsm.io/fail": "ErrImagePull"}
    await core.create_namespaced_pod(NS, body)

    async def backing_off() -> bool:
        pod = await core.read_namespaced_pod("pulling", NS)
        statuses = pod.status.container_statuses or []
        return bool(statuses) and statuses[0].state.waiting.reason == "ImagePullBackOff"

    await eventually(backing_off, what="ImagePullBackOff")
    exc = await api_error(core.read_namespaced_pod_log("pulling", NS, container="a"))
    assert (
        status_body(exc)["message"] == 'container "a" in pod "pulling" is waiting to start: ImagePullBackOff'
    )
