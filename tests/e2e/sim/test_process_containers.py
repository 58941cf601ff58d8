"""Containers the kubelet runs as real processes (sim.processes), seen from inside and through the API.

Inputs: ``processworld.process_world()`` (its kubelet gives pods loopback addresses) with the image
``testimg`` registered as a process runtime; a ServiceAccount ``robot`` allowed to read pods only; a
Secret, a ConfigMap and a PersistentVolumeClaim (the kubelet's fallback claim directory); the test talks
to the server in the pod on its pod IP; Debian's ``kubectl`` for ``kubectl logs``. Outputs: the process
sees its resolved environment, its volumes at their mount paths (read-only where they must be) and its
token at the standard path, without a trace on the host; kubernetes_asyncio's in-cluster config reaches
the emulator over HTTPS and RBAC answers it; readiness, liveness and deletion behave as on a node; logs
come back through ``pods/log``; a missing Secret and a missing command are reported as a kubelet does.
"""

from __future__ import annotations

import asyncio
import shutil
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from kubernetes_asyncio import client, watch

from sim import processes, tokens
from sim.world import World
from tests.e2e.sim import processworld
from tests.e2e.sim.processworld import (
    MOUNTS_ALLOWED,
    NS,
    ask,
    needs_mounts,
    pod_body,
    server_container,
    serving,
)
from tests.helpers import eventually, free_port
from tests.kubectl import KUBECTL

TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
RBAC = "rbac.authorization.k8s.io"


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with processworld.process_world() as w:
        yield w


@pytest.fixture
async def core(kube: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(kube)


async def objects(kube: client.ApiClient) -> None:
    core, rbac = client.CoreV1Api(kube), client.RbacAuthorizationV1Api(kube)
    await core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})
    await rbac.create_namespaced_role(
        NS,
        {
            "metadata": {"name": "pods"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}],
        },
    )
    await rbac.create_namespaced_role_binding(
        NS,
        {
            "metadata": {"name": "robot"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "pods"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": NS}],
        },
    )
    await core.create_namespaced_secret(
        NS, {"metadata": {"name": "creds"}, "stringData": {"user": "u1", "pass": "p1"}}
    )
    await core.create_namespaced_config_map(
        NS, {"metadata": {"name": "settings"}, "data": {"level": "debug", "x.conf": "x=1\n"}}
    )
    await core.create_namespaced_persistent_volume_claim(
        NS,
        {
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
    )


def everything_container(port: int) -> dict[str, Any]:
    env = [
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "ACCOUNT", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
        {"name": "USER", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "user"}}},
        {"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "level"}}},
        {
            "name": "ABSENT",
            "valueFrom": {"configMapKeyRef": {"name": "nowhere", "key": "k", "optional": True}},
        },
        {"name": "GREETING", "value": "$(POD_NAME) in $(POD_NAMESPACE), $$(POD_NAME) and $(UNDEFINED)"},
    ]
    mounts = [
        {"name": "tmp", "mountPath": "/tmp"},
        {"name": "creds", "mountPath": "/etc/creds"},
        {"name": "settings", "mountPath": "/etc/settings"},
        {"name": "settings", "mountPath": "/etc/x.conf", "subPath": "x.conf"},
        {"name": "data", "mountPath": "/var/lib/testimg"},
    ]
    return server_container(
        port,
        env=env,
        envFrom=[{"configMapRef": {"name": "settings"}, "prefix": "CM_"}],
        volumeMounts=mounts,
    )


VOLUMES = [
    {"name": "tmp", "emptyDir": {}},
    {
        "name": "creds",
        "secret": {"secretName": "creds", "items": [{"key": "pass", "path": "nested/pass", "mode": 0o400}]},
    },
    {"name": "settings", "configMap": {"name": "settings"}},
    {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
]


def on_host(*paths: str) -> dict[str, bool]:
    """Which of ``paths`` exist on the host."""
    return {p: Path(p).exists() for p in paths}


@needs_mounts
async def test_the_process_sees_its_environment_volumes_and_token(
    world: World, kube: client.ApiClient, core: client.CoreV1Api
) -> None:
    await objects(kube)
    host_before = on_host("/var/lib/testimg", "/etc/creds", "/etc/x.conf", TOKEN_DIR, "/tmp/scratch")
    port = free_port()
    body = pod_body("everything", everything_container(port), serviceAccountName="robot", volumes=VOLUMES)
    body["metadata"]["labels"] = {"app": "testimg"}
    await core.create_namespaced_pod(NS, body)
    pod_ip = await serving(core, "everything", port)
    pod = await core.read_namespaced_pod("everything", NS)

    _, env = await ask(pod_ip, port, "/env")
    assert env["POD_NAME"] == env["HOSTNAME"] == "everything"
    assert (env["POD_NAMESPACE"], env["POD_UID"], env["APP"]) == (NS, pod.metadata.uid, "testimg")
    assert (env["NODE"], env["ACCOUNT"]) == ("sim-node-1", "robot")
    assert (env["POD_IP"], env["HOST_IP"]) == (pod.status.pod_ip, pod.status.host_ip)
    assert (env["USER"], env["LEVEL"], env["CM_level"]) == ("u1", "debug", "debug")
    assert "ABSENT" not in env
    assert env["CM_x.conf"] == "x=1\n"  # dots are allowed in variable names
    assert env["GREETING"] == "everything in default, $(POD_NAME) and $(UNDEFINED)"
    assert env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    assert env["KUBERNETES_SERVICE_PORT"] == env["KUBERNETES_SERVICE_PORT_HTTPS"] == str(world.https_port)
    assert env["PATH"] == "/usr/bin:/bin"

    async def file(path: str) -> dict[str, Any]:
        code, answer = await ask(pod_ip, port, "/file", path=path)
        assert code == 200, (path, answer)
        return dict(answer)

    assert (await file("/etc/creds/nested/pass")) == {"content": "p1", "mode": 0o400}
    assert (await file("/etc/settings/level"))["content"] == "debug"
    assert (await file("/etc/x.conf"))["content"] == "x=1\n"
    assert (await file(f"{TOKEN_DIR}/namespace"))["content"] == NS
    assert (await file(f"{TOKEN_DIR}/ca.crt"))["content"] == world.ca_file.read_text()
    token = (await file(f"{TOKEN_DIR}/token"))["content"]
    claims = jwt.decode(
        token, tokens.signing_key().public_key(), algorithms=["RS256"], audience=tokens.ISSUER
    )
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["kubernetes.io"]["pod"] == {"name": "everything", "uid": pod.metadata.uid}

    # The claim is a directory of the world's, the emptyDir one of the pod's; projected volumes are read-only.
    assert (await ask(pod_ip, port, "/write", path="/var/lib/testimg/hello"))[0] == 200
    claim = world.claim_path(NS, "data")
    assert claim is not None and (claim / "hello").read_text() == "written in the pod"
    assert (await ask(pod_ip, port, "/write", path="/tmp/scratch"))[0] == 200
    assert (await ask(pod_ip, port, "/write", path="/etc/settings/level")) == (500, "Read-only file system")
    assert (await ask(pod_ip, port, "/write", path=f"{TOKEN_DIR}/token")) == (500, "Read-only file system")
    # None of it shows on the host.
    assert on_host(*host_before) == host_before


@needs_mounts
async def test_in_cluster_config_reaches_the_api_over_https_under_its_rbac(
    world: World, kube: client.ApiClient, core: client.CoreV1Api
) -> None:
    await objects(kube)
    port = free_port()
    await core.create_namespaced_pod(
        NS, pod_body("incluster", server_container(port), serviceAccountName="robot")
    )
    pod_ip = await serving(core, "incluster", port)
    code, answer = await ask(pod_ip, port, "/kube")
    assert code == 200, answer
    assert answer["host"] == f"https://127.0.0.1:{world.https_port}"
    assert answer["pods"] == [200, ""]
    assert answer["secrets"] == [
        403,
        'secrets is forbidden: User "system:serviceaccount:default:robot" cannot list resource "secrets" '
        'in API group "" in the namespace "default"',
    ]
    users = {r.user for r in world.requests if r.path == f"/api/v1/namespaces/{NS}/pods" and r.verb == "list"}
    assert "system:serviceaccount:default:robot" in users


def conditions(pod: Any) -> dict[str, str]:
    return {c.type: c.status for c in pod.status.conditions or []}


@needs_mounts
async def test_the_readiness_probe_decides_ready(world: World, core: client.CoreV1Api) -> None:
    port = free_port()
    probe = {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 1, "failureThreshold": 1}
    container = server_container(port, ports=[{"name": "http", "containerPort": port}], readinessProbe=probe)
    await core.create_namespaced_pod(NS, pod_body("readiness", container))
    pod_ip = await serving(core, "readiness", port)

    async def ready(expected: bool) -> bool:
        pod = await core.read_namespaced_pod("readiness", NS)
        cs = pod.status.container_statuses[0]
        state = "True" if expected else "False"
        flags = (cs.ready, conditions(pod)["Ready"], conditions(pod)["ContainersReady"])
        return flags == (expected, state, state) and cs.started

    assert await ready(False), "running but not ready before the probe passes"
    await ask(pod_ip, port, "/ready")
    await eventually(lambda: ready(True), timeout=30, what="Ready after the probe passed")
    await ask(pod_ip, port, "/unready")
    await eventually(lambda: ready(False), timeout=30, what="not Ready after it failed")
    events = await core.list_namespaced_event(NS, field_selector="reason=Unhealthy")
    assert any(
        e.message.startswith("Readiness probe failed: HTTP probe failed with statuscode: 503")
        for e in events.items
    )


@needs_mounts
async def test_a_failing_liveness_probe_restarts_the_container(world: World, core: client.CoreV1Api) -> None:
    port = free_port()
    probe = {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 1, "failureThreshold": 2}
    # Liveness is probed once the server answers, however long a busy machine takes to start it: without
    # the startup probe a slow restart is killed again, as a kubelet would.
    startup = {**probe, "failureThreshold": 300}
    container = server_container(
        port, livenessProbe=probe, startupProbe=startup, env=[{"name": "EXIT_ON_TERM", "value": "3"}]
    )
    await core.create_namespaced_pod(NS, pod_body("liveness", container, terminationGracePeriodSeconds=5))
    pod_ip = await serving(core, "liveness", port)

    async def started() -> bool:  # the liveness probe runs from here on
        return bool((await core.read_namespaced_pod("liveness", NS)).status.container_statuses[0].started)

    await eventually(started, timeout=60, what="the startup probe passed")
    await ask(pod_ip, port, "/sicken")

    async def restarted() -> Any:
        pod = await core.read_namespaced_pod("liveness", NS)
        cs = pod.status.container_statuses[0]
        return cs if cs.restart_count == 1 and cs.state.running is not None else None

    status = await eventually(restarted, timeout=60, what="the container restarted")
    assert (status.last_state.terminated.exit_code, status.last_state.terminated.reason) == (3, "Error")
    killing = await core.list_namespaced_event(NS, field_selector="reason=Killing")
    assert [e.message for e in killing.items] == ["Container main failed liveness probe, will be restarted"]
    # The new run is a new process: healthy again.
    await serving(core, "liveness", port)
    assert (await core.read_namespaced_pod("liveness", NS)).status.container_statuses[0].restart_count == 1


async def deletion_status(core: client.CoreV1Api, name: str) -> Any:
    """Delete the pod and return the last container status written before it went."""
    created = await core.read_namespaced_pod(name, NS)
    await core.delete_namespaced_pod(name, NS)
    last = None
    async with asyncio.timeout(30), watch.Watch() as w:
        stream = w.stream(
            core.list_namespaced_pod,
            NS,
            field_selector=f"metadata.name={name}",
            resource_version=created.metadata.resource_version,
        )
        async for event in stream:
            if event["object"].status.container_statuses:
                last = event["object"].status.container_statuses[0]
            if event["type"] == "DELETED":
                break
    return last


@needs_mounts
async def test_deletion_sends_sigterm_and_the_exit_code_shows(world: World, core: client.CoreV1Api) -> None:
    port = free_port()
    container = server_container(port, env=[{"name": "EXIT_ON_TERM", "value": "42"}])
    await core.create_namespaced_pod(NS, pod_body("graceful", container, terminationGracePeriodSeconds=10))
    await serving(core, "graceful", port)
    status = await deletion_status(core, "graceful")
    assert (status.state.terminated.exit_code, status.state.terminated.reason) == (42, "Error")


@needs_mounts
async def test_a_process_that_ignores_sigterm_is_killed_after_the_grace_period(
    world: World, core: client.CoreV1Api
) -> None:
    port = free_port()
    container = server_container(port, env=[{"name": "IGNORE_SIGTERM", "value": "1"}])
    await core.create_namespaced_pod(NS, pod_body("stubborn", container, terminationGracePeriodSeconds=1))
    await serving(core, "stubborn", port)
    status = await deletion_status(core, "stubborn")
    assert (status.state.terminated.exit_code, status.state.terminated.reason) == (137, "Error")


@needs_mounts
async def test_logs_come_back_through_the_log_subresource(
    world: World, core: client.CoreV1Api, tmp_path: Path
) -> None:
    port = free_port()
    await core.create_namespaced_pod(NS, pod_body("talker", server_container(port), restartPolicy="Never"))
    await serving(core, "talker", port)
    # stdout and stderr interleave as they arrive.
    log = await core.read_namespaced_pod_log("talker", NS)
    assert set(log.splitlines()) == {f"serving on port {port}", "a line on stderr"}
    assert (await core.read_namespaced_pod_log("talker", NS, tail_lines=1)).count("\n") == 1
    stamped = await core.read_namespaced_pod_log("talker", NS, timestamps=True)
    assert all(line[:4].isdigit() and "Z " in line for line in stamped.splitlines())

    if KUBECTL is not None:
        kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
        proc = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            str(kubeconfig),
            "logs",
            "talker",
            "-c",
            "main",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        assert f"serving on port {port}" in out.decode()

        follow = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            str(kubeconfig),
            "logs",
            "-f",
            "talker",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert follow.stdout is not None
        first = await asyncio.wait_for(follow.stdout.readline(), 30)
        assert first.decode().strip() in (f"serving on port {port}", "a line on stderr")
        await core.delete_namespaced_pod("talker", NS)
        rest, _ = await asyncio.wait_for(follow.communicate(), 30)
        assert "terminating on SIGTERM" in rest.decode()


@needs_mounts
async def test_a_missing_secret_keeps_the_container_waiting_until_it_exists(
    world: World, core: client.CoreV1Api
) -> None:
    port = free_port()
    env = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "later", "key": "token"}}}]
    await core.create_namespaced_pod(NS, pod_body("patient", server_container(port, env=env)))

    async def waiting() -> Any:
        pod = await core.read_namespaced_pod("patient", NS)
        statuses = pod.status.container_statuses or []
        w = statuses[0].state.waiting if statuses else None
        return pod if w is not None and w.reason == "CreateContainerConfigError" else None

    pod = await eventually(waiting, timeout=30, what="CreateContainerConfigError")
    assert pod.status.phase == "Pending"
    assert pod.status.container_statuses[0].state.waiting.message == 'secret "later" not found'
    await core.create_namespaced_secret(NS, {"metadata": {"name": "later"}, "stringData": {"token": "t"}})
    pod_ip = await serving(core, "patient", port)
    assert (await ask(pod_ip, port, "/env"))[1]["TOKEN"] == "t"


@needs_mounts
async def test_a_command_that_is_not_there_is_a_start_error(world: World, core: client.CoreV1Api) -> None:
    container = {"name": "main", "image": processworld.IMAGE, "command": ["/no/such/program"]}
    await core.create_namespaced_pod(NS, pod_body("broken", container, restartPolicy="Never"))

    async def failed() -> Any:
        pod = await core.read_namespaced_pod("broken", NS)
        return pod if pod.status.phase == "Failed" else None

    pod = await eventually(failed, timeout=30, what="the pod Failed")
    terminated = pod.status.container_statuses[0].state.terminated
    assert (terminated.reason, terminated.exit_code) == ("StartError", 128)
    assert terminated.message == (
        'unable to start container process: exec: "/no/such/program": '
        "stat /no/such/program: no such file or directory"
    )


@needs_mounts
async def test_an_image_executable_stands_for_a_host_command(world: World, core: client.CoreV1Api) -> None:
    port = free_port()
    runtime = processes.ProcessRuntime(
        processworld.image(entrypoint=(), executables={"/serve": (processworld.image().entrypoint)})
    )
    world.kubelet.runtimes.register_image("serving-image", runtime)
    container = {"name": "main", "image": "serving-image:1.0", "command": ["/serve", str(port)]}
    await core.create_namespaced_pod(NS, pod_body("executable", container))
    await serving(core, "executable", port)


async def test_a_machine_without_mount_namespaces_is_reported(
    world: World, core: client.CoreV1Api, tmp_path: Path
) -> None:
    python = sys.executable
    if MOUNTS_ALLOWED:
        # Here the helper runs as nobody: unshare(2) is refused, as on a machine that does not permit it.
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv is not installed (util-linux)")
        wrapper = tmp_path / "unprivileged-python"
        wrapper.write_text(
            f'#!/bin/sh\nexec {setpriv} --reuid=65534 --regid=65534 --clear-groups {sys.executable} "$@"\n'
        )
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
        python = str(wrapper)
    world.kubelet.runtimes.register_image(
        "unprivileged", processes.ProcessRuntime(processworld.image(), python=python)
    )
    await core.create_namespaced_pod(
        NS, pod_body("refused", {"name": "main", "image": "unprivileged"}, restartPolicy="Never")
    )

    async def failed() -> Any:
        pod = await core.read_namespaced_pod("refused", NS)
        return pod if pod.status.phase == "Failed" else None

    terminated = (
        (await eventually(failed, timeout=30, what="the pod Failed"))
        .status.container_statuses[0]
        .state.terminated
    )
    assert terminated.reason == "StartError"
    assert "private mount namespace" in terminated.message and "CAP_SYS_ADMIN" in terminated.message


@needs_mounts
async def test_an_ephemeral_volume_is_the_pods_own_claim_mounted_in_the_process(
    world: World, core: client.CoreV1Api
) -> None:
    port = free_port()
    template = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    container = server_container(port, volumeMounts=[{"name": "work", "mountPath": "/home/runner/_work"}])
    body = pod_body(
        "scratch", container, volumes=[{"name": "work", "ephemeral": {"volumeClaimTemplate": template}}]
    )
    await core.create_namespaced_pod(NS, body)
    pod_ip = await serving(core, "scratch", port)
    assert (await ask(pod_ip, port, "/write", path="/home/runner/_work/hello"))[0] == 200
    claim = world.claim_path(NS, "scratch-work")
    assert claim is not None and (claim / "hello").read_text() == "written in the pod"


@needs_mounts
async def test_a_volume_over_a_parent_of_the_images_files_does_not_hide_them(
    world: World, core: client.CoreV1Api, tmp_path: Path
) -> None:
    # The image's files are host directories (here a virtualenv's stand-in under tmp_path): an emptyDir
    # mounted over their parent, as a chart's /tmp is, leaves them visible, as an image's files would.
    files = tmp_path / "image" / "lib"
    files.mkdir(parents=True)
    (files / "marker").write_text("from the image")
    # Nested image directories, as a virtualenv inside an editable install's source tree is.
    runtime = processes.ProcessRuntime(processworld.image(paths=(str(files), str(files.parent))))
    world.kubelet.runtimes.register_image("layered-image", runtime)
    port = free_port()
    container = {
        **server_container(port),
        "image": "layered-image:1.0",
        "volumeMounts": [{"name": "scratch", "mountPath": str(tmp_path)}],
    }
    await core.create_namespaced_pod(
        NS, pod_body("layered", container, volumes=[{"name": "scratch", "emptyDir": {}}])
    )
    pod_ip = await serving(core, "layered", port)
    code, found = await ask(pod_ip, port, "/file", path=str(files / "marker"))
    assert (code, found["content"]) == (200, "from the image")
    assert (await ask(pod_ip, port, "/write", path=str(tmp_path / "scratch-file")))[0] == 200
    assert not (tmp_path / "scratch-file").exists(), "the write went to the emptyDir, not the host"
    assert (await ask(pod_ip, port, "/write", path=str(files / "changed")))[0] == 500, (
        "the image is read-only"
    )
