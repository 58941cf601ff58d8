"""The real ``arcsm run`` as an in-cluster process of the emulated cluster (a smoke test).

Inputs: ``processworld.process_world()`` (loopback pod addresses) with the image ``arcsm`` registered as
a process runtime: entrypoint the ``arcsm`` console script of this environment, ``/ghalistener`` standing
for ``arcsm listener``; the ServiceAccount ``arcsm`` in ``arc-systems`` with a ClusterRole (and binding)
of ``controller.permissions.controller_permissions()`` and a Role (and binding) for leader election; a
PersistentVolumeClaim for the journal; a hand-written Pod running ``arcsm run --journal
/var/lib/arcsm/journal.db --http :PORT --controller-namespace arc-systems`` with probes on ``/readyz``
and ``/healthz``, an emptyDir at ``/tmp`` and ``CONTROLLER_MANAGER_POD_NAMESPACE`` from the downward API.
Outputs: the pod becomes Ready through its readiness probe; ``/healthz`` answers on the pod IP; the
journal is on the claim's directory; every request of the process was authenticated as its service
account and none was refused; deleting the pod stops it with SIGTERM and it exits 0.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client, watch

from controller import permissions
from sim import processes
from sim.world import World
from tests.e2e.sim import processworld
from tests.e2e.sim.processworld import ask, free_port
from tests.helpers import eventually

pytestmark = processworld.needs_mounts

NS = "arc-systems"
ACCOUNT = "arcsm"
USER = f"system:serviceaccount:{NS}:{ACCOUNT}"
RBAC = "rbac.authorization.k8s.io"
BIN = Path(sys.executable).parent
ARCSM = str(BIN / "arcsm")
TIMEOUT = 90.0


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with processworld.process_world() as w:
        image = processes.Image(
            entrypoint=(ARCSM,),
            env={"PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin"},
            executables={"/ghalistener": (ARCSM, "listener")},
        )
        w.kubelet.runtimes.register_image("arcsm", processes.ProcessRuntime(image))
        yield w


async def install(kube: client.ApiClient) -> None:
    core, rbac = client.CoreV1Api(kube), client.RbacAuthorizationV1Api(kube)
    subject = {"kind": "ServiceAccount", "name": ACCOUNT, "namespace": NS}
    await core.create_namespaced_service_account(NS, {"metadata": {"name": ACCOUNT}})
    await rbac.create_cluster_role(
        {"metadata": {"name": ACCOUNT}, "rules": permissions.rules(permissions.controller_permissions())}
    )
    await rbac.create_cluster_role_binding(
        {
            "metadata": {"name": ACCOUNT},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": ACCOUNT},
            "subjects": [subject],
        }
    )
    await rbac.create_namespaced_role(
        NS,
        {
            "metadata": {"name": "arcsm-leader-election"},
            "rules": permissions.rules(permissions.leader_election_permissions()),
        },
    )
    await rbac.create_namespaced_role_binding(
        NS,
        {
            "metadata": {"name": "arcsm-leader-election"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "arcsm-leader-election"},
            "subjects": [subject],
        },
    )
    await core.create_namespaced_persistent_volume_claim(
        NS,
        {
            "metadata": {"name": "journal"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
    )


def controller_pod(port: int) -> dict[str, Any]:
    args = [
        "run",
        "--journal",
        "/var/lib/arcsm/journal.db",
        "--http",
        f":{port}",
        "--controller-namespace",
        NS,
    ]
    return {
        "metadata": {"name": "arcsm-controller", "labels": {"app.kubernetes.io/name": "arcsm"}},
        "spec": {
            "serviceAccountName": ACCOUNT,
            "containers": [
                {
                    "name": "manager",
                    "image": "arcsm:0.1.0",
                    "args": args,
                    "env": [
                        {
                            "name": "CONTROLLER_MANAGER_POD_NAMESPACE",
                            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                        }
                    ],
                    "ports": [{"name": "http", "containerPort": port}],
                    "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 1},
                    "livenessProbe": {
                        "httpGet": {"path": "/healthz", "port": "http"},
                        "periodSeconds": 5,
                        "failureThreshold": 6,
                    },
                    "volumeMounts": [
                        {"name": "journal", "mountPath": "/var/lib/arcsm"},
                        {"name": "tmp", "mountPath": "/tmp"},
                    ],
                }
            ],
            "volumes": [
                {"name": "journal", "persistentVolumeClaim": {"claimName": "journal"}},
                {"name": "tmp", "emptyDir": {}},
            ],
        },
    }


async def test_arcsm_run_in_cluster_becomes_ready_and_answers_healthz(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    await install(kube)
    port = free_port()
    created = await core.create_namespaced_pod(NS, controller_pod(port))

    async def ready() -> Any:
        pod = await core.read_namespaced_pod("arcsm-controller", NS)
        statuses = pod.status.container_statuses or []
        terminated = statuses[0].state.terminated if statuses else None
        assert terminated is None, (
            f"arcsm exited: {terminated}\n{await core.read_namespaced_pod_log(pod.metadata.name, NS)}"
        )
        conditions = {c.type: c.status for c in pod.status.conditions or []}
        return pod if conditions.get("Ready") == "True" else None

    pod = await eventually(ready, timeout=TIMEOUT, interval=0.2, what="the arcsm pod Ready through /readyz")
    code, health = await ask(pod.status.pod_ip, port, "/healthz")
    assert (code, health) == (200, {"status": "ok"})
    claim = world.claim_path(NS, "journal")
    assert claim is not None and (claim / "journal.db").is_file()

    mine = [r for r in world.requests if r.user == USER]
    assert mine, "arcsm authenticated with its service-account token"
    assert not [r for r in mine if r.status in (401, 403)], "its RBAC allows what it does"

    await core.delete_namespaced_pod("arcsm-controller", NS)
    last = None
    async with asyncio.timeout(TIMEOUT), watch.Watch() as w:
        stream = w.stream(
            core.list_namespaced_pod,
            NS,
            field_selector="metadata.name=arcsm-controller",
            resource_version=created.metadata.resource_version,
        )
        async for event in stream:
            if event["object"].status.container_statuses:
                last = event["object"].status.container_statuses[0]
            if event["type"] == "DELETED":
                break
    assert last is not None
    assert (last.state.terminated.exit_code, last.state.terminated.reason) == (0, "Completed")
