"""The Events a pod's scheduling and its node's kubelet post, as ``kubectl get events`` and ``kubectl
describe pod`` show them.

Inputs: the ``world`` fixture (the simulated scheduler and kubelet), a kubeconfig for it, Debian's
``kubectl``, and kubernetes_asyncio for both Event APIs. Outputs: ``Scheduled`` from default-scheduler
(an events.k8s.io/v1 Event: ``eventTime``, ``reportingController``, no legacy timestamps), the kubelet's
``Pulling``/``Pulled``, ``Created``, ``Started`` and ``Killing`` (core/v1, with ``source``, first and
last timestamps and ``count``), each in kubectl's columns and in describe's Events section; a crash
loop's ``BackOff`` and its repeated, counted Events; ``--sort-by`` and the events.k8s.io view in
kubectl's columns. Nothing is mocked.
"""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.conformance import NS, SLEEP
from tests.helpers import eventually
from tests.kubectl import ok, requires_kubectl

STARTED = ["Scheduled", "Pulled", "Created", "Started"]


def rows(out: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in out.strip().splitlines()]


async def pod_events(kube: client.ApiClient, pod: str) -> list[client.CoreV1Event]:
    listed = await client.CoreV1Api(kube).list_namespaced_event(
        NS, field_selector=f"involvedObject.name={pod}"
    )
    items: list[client.CoreV1Event] = listed.items
    return items


async def started_pod(kube: client.ApiClient, name: str, image: str) -> list[client.CoreV1Event]:
    body = {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": image, "command": SLEEP}]},
    }
    await client.CoreV1Api(kube).create_namespaced_pod(NS, body)

    async def started() -> list[client.CoreV1Event]:
        events = await pod_events(kube, name)
        assert "Started" in [e.reason for e in events]
        return events

    return await eventually(started, timeout=30, what=f"the Started Event of pod {name}")


async def test_scheduled_is_an_events_v1_event_and_the_kubelet_posts_legacy_ones(
    world: World, kube: client.ApiClient
) -> None:
    events = {e.reason: e for e in await started_pod(kube, "p", "busybox:1.36")}
    assert sorted(events) == sorted(STARTED)
    scheduled, pulled, created, started = (events[reason] for reason in STARTED)
    assert scheduled.message == f"Successfully assigned {NS}/p to sim-node-1"
    assert (scheduled.reporting_component, scheduled.action, scheduled.type) == (
        "default-scheduler",
        "Binding",
        "Normal",
    )
    assert scheduled.event_time is not None
    assert scheduled.first_timestamp is None and scheduled.last_timestamp is None
    assert scheduled.source.component is None and not scheduled.count
    # An image with a tag is IfNotPresent, and the node has every image.
    assert pulled.message == 'Container image "busybox:1.36" already present on machine'
    assert created.message == "Created container: c"
    assert started.message == "Started container c"
    for event in (pulled, created, started):
        assert (event.source.component, event.source.host) == ("kubelet", "sim-node-1")
        assert event.involved_object.field_path == "spec.containers{c}"
        assert event.first_timestamp is not None and event.last_timestamp is not None
        assert event.count == 1 and event.event_time is None

    v1 = await client.EventsV1Api(kube).list_namespaced_event(NS, field_selector="reason=Scheduled")
    (new,) = v1.items
    assert (new.reporting_controller, new.reporting_instance) == (
        "default-scheduler",
        "default-scheduler-sim-node-1",
    )
    assert new.regarding.name == "p" and new.note == scheduled.message


@requires_kubectl
async def test_kubectl_shows_a_pods_events_from_scheduler_and_kubelet(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    await started_pod(kube, "web", "nginx")  # untagged: pulled every time (Always)
    table = rows(
        await ok(kubeconfig, "get", "events", "-n", NS, "--field-selector", "involvedObject.name=web")
    )
    assert table[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    # Listed in name order (the pod's name and a timestamp): the order they were posted in.
    assert sorted(r[2] for r in table[1:]) == sorted(["Scheduled", "Pulling", *STARTED[1:]])
    for row in table[1:]:
        assert re.fullmatch(r"\d+s", row[0]), row  # an age from eventTime or lastTimestamp, never <unknown>
        assert row[1] == "Normal" and row[3] == "pod/web"
    assert [r[4] for r in table if r[2] == "Pulling"] == ['Pulling image "nginx"']
    wide = rows(
        await ok(kubeconfig, "get", "events", "-n", NS, "--field-selector", "reason=Scheduled", "-o", "wide")
    )
    assert wide[0][:7] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE"]
    assert wide[1][4] == "default-scheduler, default-scheduler-sim-node-1"

    described = await ok(kubeconfig, "describe", "pod", "web", "-n", NS)
    section = described[described.index("Events:") :]
    lines = rows(section)
    assert lines[1] == ["Type", "Reason", "Age", "From", "Message"]
    # describe sorts by last timestamp (eventTime for Scheduled, which has microseconds): any order.
    by_reason = {line[1]: line for line in lines[3:]}
    assert by_reason["Scheduled"][3:] == [
        "default-scheduler",
        f"Successfully assigned {NS}/web to sim-node-1",
    ]
    assert {reason: line[3] for reason, line in by_reason.items() if reason != "Scheduled"} == {
        "Pulling": "kubelet",
        "Pulled": "kubelet",
        "Created": "kubelet",
        "Started": "kubelet",
    }

    await ok(kubeconfig, "delete", "pod", "web", "-n", NS, "--wait=false")

    async def killing() -> list[list[str]]:
        found = rows(await ok(kubeconfig, "get", "events", "-n", NS, "--field-selector", "reason=Killing"))
        assert len(found) == 2, found
        return found

    stopped = await eventually(killing, timeout=30, what="the Killing Event of pod web")
    assert stopped[1][1:] == ["Normal", "Killing", "pod/web", "Stopping container c"]


@requires_kubectl
async def test_kubectl_sorts_events_and_prints_the_events_k8s_io_view_as_the_core_one(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    await started_pod(kube, "p", "busybox:1.36")
    # --sort-by asks the Table with whole objects (includeObject=Object) and sorts on them.
    by_time = rows(await ok(kubeconfig, "get", "events", "-n", NS, "--sort-by=.metadata.name"))
    assert by_time[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert sorted(r[2] for r in by_time[1:]) == sorted(STARTED)
    assert {r[3] for r in by_time[1:]} == {"pod/p"}

    new_api = rows(await ok(kubeconfig, "get", "events.v1.events.k8s.io", "-n", NS, "-o", "wide"))
    assert new_api[0][:7] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE"]
    by_reason = {r[2]: r for r in new_api[1:]}
    assert by_reason["Started"][3:7] == [
        "pod/p",
        "spec.containers{c}",
        "kubelet, sim-node-1",
        "Started container c",
    ]
    assert by_reason["Scheduled"][3:6] == [
        "pod/p",
        "default-scheduler, default-scheduler-sim-node-1",
        f"Successfully assigned {NS}/p to sim-node-1",
    ]

    table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"{world.url}/apis/events.k8s.io/v1/namespaces/{NS}/events",
            headers={"Accept": table},
            params={"includeObject": "Object"},
        ) as resp,
    ):
        listed = await resp.json()
    objects = [row["object"] for row in listed["rows"]]
    assert {(o["kind"], o["apiVersion"]) for o in objects} == {("Event", "events.k8s.io/v1")}
    assert {o["reason"] for o in objects} == set(STARTED)


@requires_kubectl
async def test_kubectl_describe_shows_a_crash_loops_back_off_and_repeated_events(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    annotations = {"sim.arcsm.io/exit-code": "1", "sim.arcsm.io/run-seconds": "0"}
    body = {
        "metadata": {"name": "crash", "annotations": annotations},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]},
    }
    pod = await client.CoreV1Api(kube).create_namespaced_pod(NS, body)

    async def backing_off() -> dict[str, list[str]]:
        described = await ok(kubeconfig, "describe", "pod", "crash", "-n", NS)
        lines = {line[1]: line for line in rows(described[described.index("Events:") :])[3:]}
        assert "BackOff" in lines, lines
        return lines

    lines = await eventually(backing_off, timeout=30, what="the BackOff Event of pod crash")
    assert lines["BackOff"][0] == "Warning" and lines["BackOff"][3] == "kubelet"
    assert (
        lines["BackOff"][4] == f"Back-off restarting failed container c in pod crash_{NS}({pod.metadata.uid})"
    )
    # The container started (at least) twice: the kubelet's identical Events are one, counted.
    for reason in ("Pulled", "Created", "Started"):
        counted = re.fullmatch(r"\d+s \(x(\d+) over \d+s\)", lines[reason][2])
        assert counted is not None and int(counted[1]) >= 2, lines[reason]
