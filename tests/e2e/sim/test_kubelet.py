"""The emulator's scheduler and kubelet seen through the real kubernetes_asyncio client (S59, S60).

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Status sequences are observed with a
real watch from the pod's creation revision, so every intermediate write is seen in order.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from sim.runtimes import EXIT_CODE, ContainerContext
from sim.world import World
from tests.helpers import eventually

NS = "default"
NODE = "sim-node-1"


def pod_body(
    name: str,
    *,
    restart: str = "Never",
    annotations: dict[str, str] | None = None,
    scheduler: str | None = None,
    image: str = "busybox:1.36",
) -> dict[str, Any]:
    spec: dict[str, Any] = {"restartPolicy": restart, "containers": [{"name": "main", "image": image}]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    metadata: dict[str, Any] = {"name": name}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


async def record(
    core: client.CoreV1Api, name: str, rv: str, until: Callable[[str, Any], bool], within: float = 10.0
) -> list[tuple[str, Any]]:
    """Watch pod ``name`` from revision ``rv`` until ``until(type, pod)`` holds; return the events."""
    seen: list[tuple[str, Any]] = []
    async with asyncio.timeout(within), watch.Watch() as w:
        async for event in w.stream(
            core.list_namespaced_pod, NS, field_selector=f"metadata.name={name}", resource_version=rv
        ):
            seen.append((event["type"], event["object"]))
            if until(event["type"], event["object"]):
                break
    return seen


def conditions(pod: Any) -> dict[str, str]:
    return {c.type: c.status for c in pod.status.conditions or []}


def states(pod: Any) -> list[str]:
    """The state of each container: waiting:<reason>, running or terminated:<reason>:<exitCode>."""
    out = []
    for cs in pod.status.container_statuses or []:
        if cs.state.running is not None:
            out.append("running")
        elif cs.state.terminated is not None:
            out.append(f"terminated:{cs.state.terminated.reason}:{cs.state.terminated.exit_code}")
        elif cs.state.waiting is not None:
            out.append(f"waiting:{cs.state.waiting.reason}")
    return out


def terminal(_type: str, pod: Any) -> bool:
    return pod.status.phase in ("Succeeded", "Failed")


async def phase_of(core: client.CoreV1Api, name: str) -> str:
    return str((await core.read_namespaced_pod(name, NS)).status.phase)


async def test_scheduler_binds_default_scheduler_pods_only(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(NS, pod_body("other", scheduler="other-scheduler"))
    await core.create_namespaced_pod(NS, pod_body("mine"))

    async def running() -> bool:
        return await phase_of(core, "mine") == "Running"

    await eventually(running, what="default-scheduler pod running")
    mine = await core.read_namespaced_pod("mine", NS)
    assert mine.spec.node_name == NODE
    assert conditions(mine)["PodScheduled"] == "True"
    other = await core.read_namespaced_pod("other", NS)
    assert other.spec.node_name is None
    assert other.status.phase == "Pending"
    assert not other.status.container_statuses


async def test_status_sequence_then_completion(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_pod(NS, pod_body("seq"))

    async def complete_when_running() -> None:
        await world.kubelet.complete(NS, "seq", 0)

    completer = asyncio.create_task(complete_when_running())
    events = await record(core, "seq", created.metadata.resource_version, terminal)
    await completer

    pods = [pod for _, pod in events]
    assert all(t == "MODIFIED" for t, _ in events)
    # 1. bound (PodScheduled) while still Pending with no container statuses.
    bound = next(i for i, p in enumerate(pods) if p.spec.node_name == NODE)
    assert pods[bound].status.phase == "Pending"
    assert conditions(pods[bound]).get("PodScheduled") == "True"
    assert not pods[bound].status.container_statuses
    # 2. IPs, start time and ContainerCreating, still Pending.
    creating = next(i for i, p in enumerate(pods) if states(p) == ["waiting:ContainerCreating"])
    assert creating > bound
    p = pods[creating]
    assert p.status.phase == "Pending"
    assert p.status.host_ip and p.status.pod_ip and p.status.start_time is not None
    assert conditions(p)["Initialized"] == "True"
    assert conditions(p)["Ready"] == "False"
    assert conditions(p)["ContainersReady"] == "False"
    # 3. Running and Ready.
    running = next(i for i, p in enumerate(pods) if p.status.phase == "Running")
    assert running > creating
    assert states(pods[running]) == ["running"]
    assert conditions(pods[running])["Ready"] == "True"
    assert pods[running].status.container_statuses[0].ready is True
    # 4. terminated and Succeeded, in one write, last.
    assert pods[-1].status.phase == "Succeeded"
    assert states(pods[-1]) == ["terminated:Completed:0"]
    assert conditions(pods[-1])["Ready"] == "False"
    term = pods[-1].status.container_statuses[0].state.terminated
    assert term.started_at is not None and term.finished_at is not None
    assert [p.status.phase for p in pods] == sorted(
        (p.status.phase for p in pods), key=["Pending", "Running", "Succeeded"].index
    )
    # Each step was its own write.
    rvs = [int(p.metadata.resource_version) for p in pods]
    assert rvs == sorted(set(rvs))


async def test_exit_code_annotation_sets_terminal_phase(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(NS, pod_body("fails", annotations={"sim.arcsm.io/exit-code": "3"}))
    await core.create_namespaced_pod(
        NS, pod_body("works", annotations={"sim.arcsm.io/exit-code": "0", "sim.arcsm.io/run-seconds": "0.05"})
    )

    async def finished(name: str) -> Any:
        pod = await core.read_namespaced_pod(name, NS)
        return pod if pod.status.phase in ("Succeeded", "Failed") else None

    failed = await eventually(lambda: finished("fails"), what="fails terminal")
    assert failed.status.phase == "Failed"
    assert states(failed) == ["terminated:Error:3"]
    worked = await eventually(lambda: finished("works"), what="works terminal")
    assert worked.status.phase == "Succeeded"
    assert states(worked) == ["terminated:Completed:0"]


async def test_graceful_delete_terminates_then_removes(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_pod(NS, pod_body("graceful", restart="Always"))

    async def running() -> bool:
        return await phase_of(core, "graceful") == "Running"

    await eventually(running, what="pod running")
    deleted = await core.delete_namespaced_pod("graceful", NS)
    assert deleted.metadata.deletion_timestamp is not None
    assert deleted.metadata.deletion_grace_period_seconds == 30

    events = await record(core, "graceful", created.metadata.resource_version, lambda t, _p: t == "DELETED")
    after_delete = [(t, p) for t, p in events if p.metadata.deletion_timestamp is not None]
    assert after_delete[-1][0] == "DELETED"
    terminated = [p for t, p in after_delete if t == "MODIFIED" and p.status.phase == "Failed"]
    assert terminated, "the kubelet writes the terminal status before the pod goes"
    assert states(terminated[0]) == ["terminated:Error:143"]
    last = after_delete[-1][1]
    assert last.status.phase == "Failed"
    try:
        await core.read_namespaced_pod("graceful", NS)
    except ApiException as exc:
        assert exc.status == 404
    else:
        raise AssertionError("pod still exists")


async def test_restart_policy_always_restarts(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(NS, pod_body("restarts", restart="Always"))
    await world.kubelet.complete(NS, "restarts", 1)

    async def restarted() -> Any:
        pod = await core.read_namespaced_pod("restarts", NS)
        cs = (pod.status.container_statuses or [None])[0]
        return pod if cs is not None and cs.restart_count == 1 and cs.state.running is not None else None

    pod = await eventually(restarted, what="container restarted")
    assert pod.status.phase == "Running"
    last = pod.status.container_statuses[0].last_state.terminated
    assert (last.exit_code, last.reason) == (1, "Error")


async def test_failure_modes(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(NS, pod_body("pull", annotations={"sim.arcsm.io/fail": "ErrImagePull"}))
    await core.create_namespaced_pod(NS, pod_body("oom", annotations={"sim.arcsm.io/fail": "OOMKilled"}))
    await core.create_namespaced_pod(NS, pod_body("evicted", annotations={"sim.arcsm.io/fail": "Evicted"}))

    async def backing_off() -> bool:
        pod = await core.read_namespaced_pod("pull", NS)
        return pod.status.phase == "Pending" and states(pod) == ["waiting:ImagePullBackOff"]

    await eventually(backing_off, what="ImagePullBackOff")

    async def oom() -> Any:
        pod = await core.read_namespaced_pod("oom", NS)
        return pod if pod.status.phase == "Failed" else None

    assert states(await eventually(oom, what="OOMKilled")) == ["terminated:OOMKilled:137"]

    async def evicted() -> Any:
        pod = await core.read_namespaced_pod("evicted", NS)
        return pod if pod.status.phase == "Failed" else None

    pod = await eventually(evicted, what="Evicted")
    assert pod.status.reason == "Evicted"
    assert conditions(pod)["DisruptionTarget"] == "True"

    # A pod stuck pulling is still removed by the kubelet when deleted.
    await core.delete_namespaced_pod("pull", NS)

    async def pull_gone() -> bool:
        try:
            await core.read_namespaced_pod("pull", NS)
        except ApiException as exc:
            return exc.status == 404
        return False

    await eventually(pull_gone, what="stuck pod removed")


async def test_registered_runtime_runs_matching_containers(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    ran: list[str] = []

    async def runner(ctx: ContainerContext) -> int:
        ran.append(f"{ctx.pod_name}/{ctx.name}")
        return 7

    world.kubelet.runtimes.register_image("ghcr.io/example/runner", runner)
    await core.create_namespaced_pod(NS, pod_body("custom", image="ghcr.io/example/runner:2.0"))

    async def done() -> Any:
        pod = await core.read_namespaced_pod("custom", NS)
        return pod if pod.status.phase == "Failed" else None

    pod = await eventually(done, what="custom runtime exited")
    assert states(pod) == ["terminated:Error:7"]
    assert ran == ["custom/main"]


def crashing(name: str, restart: str, code: int = 1) -> dict[str, Any]:
    """A pod whose container exits with ``code`` as soon as it runs, every run."""
    return pod_body(name, restart=restart, annotations={EXIT_CODE: str(code)})


def shrink_backoff(world: World, restart: float, restart_max: float) -> None:
    world.kubelet.timing = dataclasses.replace(world.kubelet.timing, restart=restart, restart_max=restart_max)


async def test_a_crashing_container_backs_off_doubling_to_the_cap(
    world: World, kube: client.ApiClient
) -> None:
    shrink_backoff(world, restart=0.05, restart_max=0.2)
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_pod(NS, crashing("crash", "Always"))
    uid = created.metadata.uid

    def restarted_four_times(_type: str, pod: Any) -> bool:
        statuses = pod.status.container_statuses or []
        return bool(statuses) and statuses[0].restart_count >= 4

    events = await record(core, "crash", created.metadata.resource_version, restarted_four_times)
    statuses = [
        (p.status.phase, p.status.container_statuses[0]) for _, p in events if p.status.container_statuses
    ]
    counts = [cs.restart_count for _, cs in statuses]
    assert counts == sorted(counts) and set(counts) == {0, 1, 2, 3, 4}, "one restart at a time"
    backing_off = [
        (cs.restart_count, cs)
        for _, cs in statuses
        if cs.state.waiting is not None and cs.state.waiting.reason == "CrashLoopBackOff"
    ]
    # The first exit is restarted at once; each later one waits out a delay that doubles up to the cap.
    messages = {count: cs.state.waiting.message for count, cs in backing_off}
    assert messages == {
        n: f"back-off {delay} restarting failed container=main pod=crash_{NS}({uid})"
        for n, delay in ((1, "50ms"), (2, "100ms"), (3, "200ms"))
    }
    for _count, cs in backing_off:
        last = cs.last_state.terminated
        assert (last.exit_code, last.reason) == (1, "Error"), "lastState holds the exit it backs off from"
        assert cs.ready is False and cs.started is False
    assert {phase for phase, _ in statuses if _.restart_count >= 1} == {"Running"}
    restarted = [cs for _, cs in statuses if cs.restart_count >= 1 and cs.state.running is not None]
    assert restarted and all(cs.last_state.terminated.exit_code == 1 for cs in restarted)

    async def backoff_events() -> Any:
        found = await core.list_namespaced_event(NS, field_selector="reason=BackOff")
        return found.items or None

    event = (await eventually(backoff_events, what="a BackOff Event"))[0]
    assert event.type == "Warning"
    assert event.message == f"Back-off restarting failed container main in pod crash_{NS}({uid})"
    assert event.involved_object.field_path == "spec.containers{main}"


async def test_a_container_backing_off_waits_out_its_delay(world: World, kube: client.ApiClient) -> None:
    shrink_backoff(world, restart=3600.0, restart_max=3600.0)
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_pod(NS, crashing("slow", "OnFailure"))

    async def backing_off() -> Any:
        pod = await core.read_namespaced_pod("slow", NS)
        cs = (pod.status.container_statuses or [None])[0]
        waiting = cs.state.waiting if cs is not None else None
        return pod if waiting is not None and waiting.reason == "CrashLoopBackOff" else None

    pod = await eventually(backing_off, what="CrashLoopBackOff after the second exit")
    cs = pod.status.container_statuses[0]
    assert cs.restart_count == 1, "the first exit was restarted at once"
    assert cs.state.waiting.message.startswith("back-off 1h0m0s restarting failed container=main pod=slow_")
    # Another pod runs and finishes meanwhile; the one backing off is still waiting.
    await core.create_namespaced_pod(NS, pod_body("other", annotations={EXIT_CODE: "0"}))

    async def other_done() -> bool:
        return await phase_of(core, "other") == "Succeeded"

    await eventually(other_done, what="the other pod finished")
    pod = await core.read_namespaced_pod("slow", NS)
    cs = pod.status.container_statuses[0]
    assert (cs.restart_count, states(pod), pod.status.phase) == (1, ["waiting:CrashLoopBackOff"], "Running")
    # Deleted while backing off: its last exit is its final state.
    await core.delete_namespaced_pod("slow", NS)
    events = await record(core, "slow", created.metadata.resource_version, lambda t, _p: t == "DELETED")
    final = [p for t, p in events if t == "MODIFIED" and p.status.phase == "Failed"]
    assert final and states(final[-1]) == ["terminated:Error:1"]


async def test_restart_policy_never_and_on_failure_after_exit_0_do_not_restart(
    world: World, kube: client.ApiClient
) -> None:
    shrink_backoff(world, restart=0.01, restart_max=0.01)
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(NS, crashing("never", "Never", code=1))
    await core.create_namespaced_pod(NS, crashing("done", "OnFailure", code=0))
    await core.create_namespaced_pod(NS, crashing("retried", "OnFailure", code=2))

    async def finished(name: str) -> Any:
        pod = await core.read_namespaced_pod(name, NS)
        return pod if pod.status.phase in ("Succeeded", "Failed") else None

    never = await eventually(lambda: finished("never"), what="the Never pod terminal")
    done = await eventually(lambda: finished("done"), what="the OnFailure pod terminal")
    for pod, outcome in (
        (never, ("Failed", ["terminated:Error:1"])),
        (done, ("Succeeded", ["terminated:Completed:0"])),
    ):
        cs = pod.status.container_statuses[0]
        assert (pod.status.phase, states(pod)) == outcome
        assert cs.restart_count == 0 and cs.last_state.terminated is None

    async def retried() -> Any:
        pod = await core.read_namespaced_pod("retried", NS)
        cs = pod.status.container_statuses[0] if pod.status.container_statuses else None
        return pod if cs is not None and cs.restart_count >= 2 else None

    pod = await eventually(retried, what="OnFailure restarts a failed container")
    assert pod.status.phase == "Running"
    assert pod.status.container_statuses[0].last_state.terminated.exit_code == 2
