"""Server-side Tables: what ``kubectl get`` prints comes from the emulated API server (sim.tables).

Inputs: the ``world`` fixture (the project's CRDs installed, the simulated scheduler and kubelet), a
kubeconfig for it, Debian's ``kubectl``, and raw HTTP with kubectl's Table ``Accept`` header. Outputs: the
CRDs' printer columns with their values, the built-ins' columns (pods, also ``-o wide``; events;
namespaces), the Table JSON of a list, a get and a watch, ``includeObject``, and 406 for a type nothing
serves. Nothing is mocked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.conformance import ARS, GROUP, MERGE, NS, SLEEP, VERSION, ars
from tests.helpers import eventually
from tests.kubectl import ok, requires_kubectl

TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
    "application/json"
)


def rows(out: str) -> list[list[str]]:
    """kubectl's columns split on runs of two or more spaces."""
    return [re.split(r"\s{2,}", line.strip()) for line in out.strip().splitlines()]


async def get(world: World, path: str, accept: str = TABLE, **params: str) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(world.url + path, headers={"Accept": accept}, params=params or None) as resp,
    ):
        return resp.status, await resp.json()


async def running_ars(kube: client.ApiClient, name: str) -> None:
    custom = client.CustomObjectsApi(kube)
    spec = {"githubConfigUrl": "https://github.com/example", "githubConfigSecret": "gh", "minRunners": 1}
    await custom.create_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, ars(name, spec=spec | {"maxRunners": 5})
    )
    status = {
        "currentRunners": 3,
        "phase": "Running",
        "conditions": [
            {
                "type": "Other",
                "status": "False",
                "reason": "R",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            },
            {
                "type": "Ready",
                "status": "True",
                "reason": "R",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            },
        ],
    }
    await custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, NS, ARS, name, {"status": status}, _content_type=MERGE
    )


@requires_kubectl
async def test_kubectl_shows_the_printer_columns_of_a_crd(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    await running_ars(kube, "fleet")
    table = rows(await ok(kubeconfig, "get", "autoscalingrunnersets", "-n", NS))
    assert table[0] == [
        "NAME",
        "MINIMUM RUNNERS",
        "MAXIMUM RUNNERS",
        "CURRENT RUNNERS",
        "PHASE",
        "READY",
        "PENDING RUNNERS",
        "RUNNING RUNNERS",
    ]
    # Missing fields are empty cells, which kubectl leaves blank: the last two columns have no value.
    assert table[1] == ["fleet", "1", "5", "3", "Running", "True"]


@requires_kubectl
async def test_kubectl_shows_pod_columns_and_wide_columns(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core = client.CoreV1Api(kube)
    body = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "command": SLEEP}]},
    }
    await core.create_namespaced_pod(NS, body)

    async def running() -> list[list[str]]:
        table = rows(await ok(kubeconfig, "get", "pods", "-n", NS))
        assert table[1][:4] == ["p", "1/1", "Running", "0"], table
        return table

    table = await eventually(running, timeout=30, what="pod p running in kubectl get pods")
    assert table[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    wide = rows(await ok(kubeconfig, "get", "pods", "-n", NS, "-o", "wide"))
    assert wide[0] == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    pod = await core.read_namespaced_pod("p", NS)
    assert wide[1][5:] == [pod.status.pod_ip, "sim-node-1", "<none>", "<none>"]


@requires_kubectl
async def test_kubectl_shows_events_and_namespaces(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_event(
        NS,
        {
            "metadata": {"name": "e1"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": NS},
            "reason": "Tested",
            "message": "a message ",
            "type": "Warning",
            "firstTimestamp": "2026-01-01T00:00:00Z",
            "lastTimestamp": "2026-01-01T00:00:00Z",
            "count": 2,
            "source": {"component": "tester"},
        },
    )
    events = rows(await ok(kubeconfig, "get", "events", "-n", NS, "--field-selector", "reason=Tested"))
    assert events[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert events[1][1:] == ["Warning", "Tested", "pod/p", "a message"]
    namespaces = rows(await ok(kubeconfig, "get", "ns", "default"))
    assert namespaces[0] == ["NAME", "STATUS", "AGE"]
    assert namespaces[1][:2] == ["default", "Active"]


async def test_table_json_of_a_list_a_get_and_the_default_columns(
    world: World, kube: client.ApiClient
) -> None:
    await running_ars(kube, "fleet")
    path = f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{ARS}"
    status, listed = await get(world, path)
    assert status == 200
    assert (listed["kind"], listed["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert int(listed["metadata"]["resourceVersion"]) > 0
    names = [c["name"] for c in listed["columnDefinitions"]]
    assert names[:2] == ["Name", "Minimum Runners"] and "Ready" in names
    first = listed["columnDefinitions"][0]
    assert (first["type"], first["format"]) == ("string", "name")
    (row,) = listed["rows"]
    assert row["cells"] == ["fleet", 1, 5, 3, "Running", "True", None, None]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["name"] == "fleet"
    assert "spec" not in row["object"]

    status, one = await get(world, path + "/fleet", includeObject="Object")
    assert status == 200 and one["rows"][0]["object"]["spec"]["minRunners"] == 1
    status, bare = await get(world, path + "/fleet", includeObject="None")
    assert bare["rows"][0]["object"] is None

    # Without a printer: the default convertor's Name and Created At (a timestamp, not an age).
    status, roles = await get(world, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles")
    assert [c["name"] for c in roles["columnDefinitions"]] == ["Name", "Created At"]
    # Plain JSON when the client asks it first, and 406 when nothing asked for is served.
    status, plain = await get(world, path, accept="application/json, " + TABLE)
    assert plain["kind"] == "AutoscalingRunnerSetList"
    status, err = await get(world, path, accept="text/html")
    assert status == 406 and (err["kind"], err["reason"], err["code"]) == ("Status", "NotAcceptable", 406)


async def test_watch_events_carry_one_row_tables(world: World, kube: client.ApiClient) -> None:
    path = f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{ARS}"
    async with (
        aiohttp.ClientSession() as session,
        session.get(world.url + path, headers={"Accept": TABLE}, params={"watch": "true"}) as resp,
    ):
        assert resp.status == 200
        await running_ars(kube, "watched")
        event = json.loads(await resp.content.readline())
    assert event["type"] == "ADDED"
    assert event["object"]["kind"] == "Table"
    (row,) = event["object"]["rows"]
    assert row["cells"][0] == "watched"
