"""Emulator conformance, built-in kinds (apiserver-semantics.md S55-S59, S61, S65, S66).

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Leases, leader election with
kubernetes_asyncio's ``LeaderElection`` + ``LeaseLock``, core and events.k8s.io Events, pod defaults and
ServiceAccount admission, the binding subresource, pod update restrictions, Secrets, ServiceAccounts,
RBAC and namespace deletion, all through kubernetes_asyncio or raw HTTP where the client cannot read
the answer (binding) or hides the wire format (MicroTime strings).

Pods that must stay put name ``schedulerName: other-scheduler`` so the simulated scheduler (and so the
kubelet) leaves them alone, as a real cluster without that scheduler would.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.leaderelection import electionconfig, leaderelection
from kubernetes_asyncio.leaderelection.resourcelock.leaselock import LeaseLock

from sim.world import World
from tests.e2e.sim.conformance import NS, error_status, raw_response
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds(on_demand=True)

OTHER_SCHEDULER = "other-scheduler"
GENERATED = "[bcdfghjklmnpqrstvwxz2456789]{5}"


# -- helpers ----------------------------------------------------------------------------------------------


async def api_error(call: Any) -> dict[str, Any]:
    """The Status body of the ApiException ``call`` (an awaitable) raises (``error_status``), a Failure."""
    body = await error_status(call)
    assert (body["kind"], body["apiVersion"], body["status"]) == ("Status", "v1", "Failure")
    return body


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def pod(name: str, *, scheduler: str | None = OTHER_SCHEDULER, **spec: Any) -> dict[str, Any]:
    body_spec: dict[str, Any] = {"containers": [{"name": "main", "image": "busybox:1.36"}], **spec}
    if scheduler is not None:
        body_spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body_spec}


def lease(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": spec}


# -- S55 Lease object -------------------------------------------------------------------------------------


async def test_s55_lease_micro_times_round_trip_in_utc(world: World) -> None:
    body = lease(
        "s55",
        holderIdentity="a",
        leaseDurationSeconds=15,
        acquireTime="2025-01-01T00:00:00.123456Z",
        renewTime="2025-01-01T02:00:01.500000+02:00",
        leaseTransitions=0,
    )
    async with raw_response(
        world, "POST", f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases", body
    ) as resp:
        assert resp.status == 201
        created = await resp.json()
    assert created["spec"] == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2025-01-01T00:00:00.123456Z",
        "renewTime": "2025-01-01T00:00:01.500000Z",
        "leaseTransitions": 0,
    }
    assert "generation" not in created["metadata"]
    assert "status" not in created


async def test_s55_lease_micro_time_needs_six_fractional_digits(world: World, kube: client.ApiClient) -> None:
    coord = client.CoordinationV1Api(kube)
    body = await api_error(
        coord.create_namespaced_lease(
            NS, lease("s55-time", holderIdentity="a", renewTime="2025-01-01T00:00:00Z")
        )
    )
    assert (body["code"], body["reason"]) == (400, "BadRequest")
    assert body["message"].startswith('Lease in version "v1" cannot be handled as a Lease: ')


async def test_s55_lease_validation(world: World, kube: client.ApiClient) -> None:
    coord = client.CoordinationV1Api(kube)
    body = await api_error(coord.create_namespaced_lease(NS, lease("s55-bad", leaseDurationSeconds=0)))
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'Lease.coordination.k8s.io "s55-bad" is invalid: spec.leaseDurationSeconds: Invalid value: 0: '
        "must be greater than 0"
    )
    assert body["details"] == {
        "name": "s55-bad",
        "group": "coordination.k8s.io",
        "kind": "Lease",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 0: must be greater than 0",
                "field": "spec.leaseDurationSeconds",
            }
        ],
    }
    body = await api_error(coord.create_namespaced_lease(NS, lease("s55-bad", leaseTransitions=-1)))
    assert body["message"] == (
        'Lease.coordination.k8s.io "s55-bad" is invalid: spec.leaseTransitions: Invalid value: -1: '
        "must be greater than or equal to 0"
    )


async def test_s55_lease_strategy_dropped_without_coordinated_leader_election(
    world: World, kube: client.ApiClient
) -> None:
    coord = client.CoordinationV1Api(kube)
    created = await coord.create_namespaced_lease(
        NS, lease("s55-strategy", holderIdentity="a", strategy="OldestEmulationVersion", preferredHolder="b")
    )
    assert created.spec.holder_identity == "a"
    assert created.spec.strategy is None
    assert created.spec.preferred_holder is None


async def test_s55_lease_put_needs_rv_and_creates_when_missing(world: World, kube: client.ApiClient) -> None:
    coord = client.CoordinationV1Api(kube)
    # PUT to a missing lease creates it (201; the client deserialises it).
    made = await coord.replace_namespaced_lease("s55-put", NS, lease("s55-put", holderIdentity="a"))
    assert made.metadata.resource_version
    assert made.spec.holder_identity == "a"
    # An unconditional PUT is refused.
    body = await api_error(
        coord.replace_namespaced_lease("s55-put", NS, lease("s55-put", holderIdentity="b"))
    )
    assert (body["code"], body["reason"]) == (422, "Invalid")
    # The generic store's error names the resource, not the Kind (details.kind is the plural too).
    assert body["message"] == (
        'leases.coordination.k8s.io "s55-put" is invalid: metadata.resourceVersion: Invalid value: 0: '
        "must be specified for an update"
    )
    assert body["details"] == {
        "name": "s55-put",
        "group": "coordination.k8s.io",
        "kind": "leases",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 0: must be specified for an update",
                "field": "metadata.resourceVersion",
            }
        ],
    }
    # A stale one conflicts; a current one wins.
    current = lease("s55-put", holderIdentity="b")
    current["metadata"]["resourceVersion"] = made.metadata.resource_version
    renewed = await coord.replace_namespaced_lease("s55-put", NS, current)
    assert renewed.spec.holder_identity == "b"
    stale = client.V1Lease(metadata=made.metadata, spec=client.V1LeaseSpec(holder_identity="c"))
    body = await api_error(coord.replace_namespaced_lease("s55-put", NS, stale))
    assert (body["code"], body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "s55-put": '
        "the object has been modified; please apply your changes to the latest version and try again"
    )


# -- S56 leader election ------------------------------------------------------------------------------------


class Candidate:
    """One kubernetes_asyncio LeaderElection candidate on the shared lock name."""

    def __init__(self, kube: client.ApiClient, identity: str) -> None:
        self.identity = identity
        self.leading = asyncio.Event()
        self.stopped = asyncio.Event()
        lock = LeaseLock("s56-lock", NS, identity, kube)

        async def started() -> None:
            self.leading.set()

        async def stopped() -> None:
            self.stopped.set()

        # The library's minimums: retry >= 1 s, renew deadline > 1.2 * retry, lease duration > renew deadline.
        config = electionconfig.Config(
            lock,
            lease_duration=2,
            renew_deadline=1.3,
            retry_period=1,
            onstarted_leading=started,
            onstopped_leading=stopped,
        )
        self.task = asyncio.create_task(leaderelection.LeaderElection(config).run())

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def test_s56_leader_election_with_kubernetes_asyncio(world: World, kube: client.ApiClient) -> None:
    coord = client.CoordinationV1Api(kube)
    a = Candidate(kube, "candidate-a")
    b: Candidate | None = None
    try:
        # get (404) -> create: a leads.
        await asyncio.wait_for(a.leading.wait(), 5)
        first = await coord.read_namespaced_lease("s56-lock", NS)
        assert first.spec.holder_identity == "candidate-a"
        assert first.spec.lease_duration_seconds == 2

        b = Candidate(kube, "candidate-b")

        # a renews by PUT with the resourceVersion it read; b waits while the record keeps changing.
        async def renewed_for_longer_than_the_lease() -> bool:
            current = await coord.read_namespaced_lease("s56-lock", NS)
            assert current.spec.holder_identity == "candidate-a"
            return bool((current.spec.renew_time - first.spec.renew_time).total_seconds() >= 2.5)

        await eventually(renewed_for_longer_than_the_lease, timeout=8, interval=0.1, what="renewals")
        assert not b.leading.is_set()

        # a goes away without releasing (kubernetes_asyncio never releases): b takes over after the lease.
        await a.stop()
        await asyncio.wait_for(b.leading.wait(), 8)
        taken = await coord.read_namespaced_lease("s56-lock", NS)
        assert taken.spec.holder_identity == "candidate-b"
        assert taken.spec.lease_transitions is None  # client-go would bump it; kubernetes_asyncio does not

        # Writing with an outdated resourceVersion is how a candidate loses a race: 409.
        body = await api_error(coord.replace_namespaced_lease("s56-lock", NS, first))
        assert (body["code"], body["reason"]) == (409, "Conflict")
    finally:
        await a.stop()
        if b is not None:
            await b.stop()


# -- S57 Events -------------------------------------------------------------------------------------------


def core_event(name: str, involved_ns: str = NS, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "namespace": involved_ns, "name": "p", "apiVersion": "v1"},
        "reason": "Started",
        "message": "started it",
        "type": "Normal",
        "source": {"component": "tester"},
        "firstTimestamp": "2025-01-01T00:00:00Z",
        "lastTimestamp": "2025-01-01T00:00:00Z",
        "count": 1,
        **fields,
    }


def v1_event(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": "2025-01-01T00:00:00.000000Z",
        "reportingController": "example.com/tester",
        "reportingInstance": "tester-1",
        "action": "Start",
        "reason": "Started",
        "regarding": {"kind": "Pod", "namespace": NS, "name": "p", "apiVersion": "v1"},
        "note": "started it",
        "type": "Normal",
        **fields,
    }


EVENTS_V1 = f"/apis/events.k8s.io/v1/namespaces/{NS}/events"


async def test_s57_core_event_namespace_must_match(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    body = await api_error(core.create_namespaced_event(NS, core_event("s57-ns", involved_ns="other")))
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'Event "s57-ns" is invalid: '
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace'
    )
    assert body["details"] == {
        "name": "s57-ns",
        "kind": "Event",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "other": does not match event.namespace',
                "field": "involvedObject.namespace",
            }
        ],
    }


async def test_s57_events_v1_strict_create(world: World, kube: client.ApiClient) -> None:
    events = client.EventsV1Api(kube)
    body = await api_error(
        events.create_namespaced_event(NS, v1_event("s57-strict", type="Info", deprecatedCount=3))
    )
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'Event "s57-strict" is invalid: '
        '[type: Invalid value: "": has invalid value: Info, count: Invalid value: "": needs to be unset]'
    )
    assert [c["field"] for c in body["details"]["causes"]] == ["type", "count"]
    missing = {k: v for k, v in v1_event("s57-missing").items() if k not in ("eventTime", "action")}
    body = await api_error(events.create_namespaced_event(NS, missing))
    assert {c["field"] for c in body["details"]["causes"]} == {
        "eventTime"
    }  # legacy rules need no action then


async def test_s57_core_and_events_v1_share_one_store(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    events = client.EventsV1Api(kube)
    made = await events.create_namespaced_event(NS, v1_event("s57-shared"))
    as_core = await core.read_namespaced_event("s57-shared", NS)
    assert as_core.metadata.uid == made.metadata.uid
    assert as_core.metadata.resource_version == made.metadata.resource_version
    assert as_core.message == "started it"
    assert as_core.reporting_component == "example.com/tester"
    assert as_core.reporting_instance == "tester-1"
    assert (as_core.involved_object.kind, as_core.involved_object.name) == ("Pod", "p")
    assert as_core.event_time is not None

    await core.create_namespaced_event(NS, core_event("s57-legacy"))
    # A legacy event has eventTime null, which kubernetes_asyncio's EventsV1Event refuses: read it raw.
    async with raw_response(world, "GET", f"{EVENTS_V1}/s57-legacy") as resp:
        as_v1 = await resp.json()
    assert (as_v1["apiVersion"], as_v1["kind"]) == ("events.k8s.io/v1", "Event")
    assert as_v1["eventTime"] is None
    assert as_v1["note"] == "started it"
    assert as_v1["deprecatedCount"] == 1
    assert as_v1["deprecatedSource"] == {"component": "tester"}
    assert as_v1["deprecatedFirstTimestamp"] == "2025-01-01T00:00:00Z"
    assert as_v1["regarding"]["name"] == "p"
    async with raw_response(world, "GET", EVENTS_V1) as resp:
        listed = {e["metadata"]["name"] for e in (await resp.json())["items"]}
    assert {"s57-shared", "s57-legacy"} <= listed
    listed = {e.metadata.name for e in (await core.list_namespaced_event(NS)).items}
    assert {"s57-shared", "s57-legacy"} <= listed

    await core.delete_namespaced_event("s57-shared", NS)
    body = await api_error(events.read_namespaced_event("s57-shared", NS))
    assert (body["code"], body["message"]) == (404, 'events.events.k8s.io "s57-shared" not found')


async def test_s57_repeats_aggregated_by_patch(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    events = client.EventsV1Api(kube)
    await core.create_namespaced_event(NS, core_event("s57-count"))
    bumped = await core.patch_namespaced_event(
        "s57-count", NS, {"count": 2, "lastTimestamp": "2025-01-01T00:01:00Z"}
    )
    assert bumped.count == 2
    async with raw_response(world, "GET", f"{EVENTS_V1}/s57-count") as resp:
        assert (await resp.json())["deprecatedCount"] == 2

    await events.create_namespaced_event(NS, v1_event("s57-series"))
    series = {"count": 2, "lastObservedTime": "2025-01-01T00:01:00.000000Z"}
    patched = await events.patch_namespaced_event("s57-series", NS, {"series": series})
    assert patched.series.count == 2
    assert (await core.read_namespaced_event("s57-series", NS)).series.count == 2
    # Through events.k8s.io/v1 everything but the series is immutable.
    body = await api_error(events.patch_namespaced_event("s57-series", NS, {"note": "changed"}))
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'Event "s57-series" is invalid: message: Invalid value: "changed": field is immutable'
    )
    # A series needs count >= 2.
    body = await api_error(
        events.patch_namespaced_event("s57-series", NS, {"series": {**series, "count": 1}})
    )
    assert [c["field"] for c in body["details"]["causes"]] == ["series.count"]


# -- S58 pod create defaults and admission ------------------------------------------------------------------


async def test_s58_pod_create_defaults(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    body = pod("s58", scheduler=None)
    body["spec"]["containers"] = [
        {"name": "main", "image": "busybox:1.36", "ports": [{"containerPort": 80}]},
        {"name": "side", "image": "busybox"},
    ]
    created = await core.create_namespaced_pod(NS, body)
    spec = created.spec
    assert created.metadata.generation == 1
    assert created.status.phase == "Pending"
    assert created.status.qos_class == "BestEffort"
    assert spec.restart_policy == "Always"
    assert spec.termination_grace_period_seconds == 30
    assert spec.dns_policy == "ClusterFirst"
    assert spec.scheduler_name == "default-scheduler"
    assert spec.enable_service_links is True
    assert spec.service_account_name == "default"
    assert spec.priority == 0
    main, side = spec.containers
    assert (main.termination_message_path, main.termination_message_policy) == (
        "/dev/termination-log",
        "File",
    )
    assert main.image_pull_policy == "IfNotPresent"
    assert side.image_pull_policy == "Always"  # no tag means :latest
    assert main.ports[0].protocol == "TCP"
    # ServiceAccount admission: a projected token volume, mounted read-only in every container.
    (volume,) = spec.volumes
    assert re.fullmatch(f"kube-api-access-{GENERATED}", volume.name)
    assert volume.projected is not None
    for container in (main, side):
        (mount,) = container.volume_mounts
        assert (mount.name, mount.mount_path, mount.read_only) == (
            volume.name,
            "/var/run/secrets/kubernetes.io/serviceaccount",
            True,
        )
    # DefaultTolerationSeconds admission.
    tolerations = {(t.key, t.operator, t.effect, t.toleration_seconds) for t in spec.tolerations}
    assert tolerations == {
        ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 300),
        ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 300),
    }


async def test_s58_pod_quantities_and_qos(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    body = pod("s58-qos")
    body["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "0.5", "memory": "64Mi"}}
    created = await core.create_namespaced_pod(NS, body)
    resources = created.spec.containers[0].resources
    assert resources.limits == {"cpu": "500m", "memory": "64Mi"}
    assert resources.requests == {"cpu": "500m", "memory": "64Mi"}  # limits copied to missing requests
    assert created.status.qos_class == "Guaranteed"


async def test_s58_pod_with_missing_service_account_is_forbidden(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    body = await api_error(core.create_namespaced_pod(NS, pod("s58-nosa", serviceAccountName="nope")))
    assert (body["code"], body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        'pods "s58-nosa" is forbidden: '
        'error looking up service account default/nope: serviceaccount "nope" not found'
    )
    assert body["details"] == {"name": "s58-nosa", "kind": "pods"}


async def test_s58_pods_in_a_new_namespace_once_its_default_sa_exists(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespace({"metadata": {"name": "s58-fresh"}})
    await eventually(lambda: core.read_namespaced_service_account("default", "s58-fresh"), what="default SA")
    created = await core.create_namespaced_pod("s58-fresh", pod("p"))
    assert created.spec.service_account_name == "default"


# -- S59 binding -------------------------------------------------------------------------------------------


def binding(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


async def test_s59_binding_subresource(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(NS, pod("s59"))
    path = f"/api/v1/namespaces/{NS}/pods/s59/binding"
    async with raw_response(world, "POST", path, binding("s59", "s59-node")) as resp:
        assert resp.status == 201
        assert await resp.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }
    bound = await core.read_namespaced_pod("s59", NS)
    assert bound.spec.node_name == "s59-node"
    assert {c.type: c.status for c in bound.status.conditions} == {"PodScheduled": "True"}

    async with raw_response(world, "POST", path, binding("s59", "elsewhere")) as resp:
        assert resp.status == 409
        body = await resp.json()
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Operation cannot be fulfilled on pods/binding "s59": '
        'pod s59 is already assigned to node "s59-node"',
        "reason": "Conflict",
        "details": {"name": "s59", "kind": "pods/binding"},
        "code": 409,
    }


async def test_s59_binding_a_deleting_pod_conflicts(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    body = pod("s59-del")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await core.create_namespaced_pod(NS, body)
    await core.delete_namespaced_pod("s59-del", NS)
    async with raw_response(
        world, "POST", f"/api/v1/namespaces/{NS}/pods/s59-del/binding", binding("s59-del", "n")
    ) as resp:
        assert resp.status == 409
        status = await resp.json()
    assert status["message"] == (
        'Operation cannot be fulfilled on pods/binding "s59-del": pod s59-del is being deleted, '
        "cannot be assigned to a host"
    )
    await core.patch_namespaced_pod(
        "s59-del", NS, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/hold"]}}
    )


async def test_s59_node_name_cannot_be_changed_by_update(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    unbound = await core.create_namespaced_pod(NS, pod("s59-upd"))
    # Not even on an unbound pod: only the binding subresource sets it.
    unbound.spec.node_name = "sneaky"
    body = await api_error(core.replace_namespaced_pod("s59-upd", NS, unbound))
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert body["message"].startswith(
        'Pod "s59-upd" is invalid: spec: Forbidden: pod updates may not change fields other than '
    )
    async with raw_response(
        world, "POST", f"/api/v1/namespaces/{NS}/pods/s59-upd/binding", binding("s59-upd", "n1")
    ) as resp:
        assert resp.status == 201
    bound = await core.read_namespaced_pod("s59-upd", NS)
    for node in ("n2", None):
        bound.spec.node_name = node
        body = await api_error(core.replace_namespaced_pod("s59-upd", NS, bound))
        assert (body["code"], body["details"]["causes"][0]["field"]) == (422, "spec")
    assert (await core.read_namespaced_pod("s59-upd", NS)).spec.node_name == "n1"


# -- S61 pod update restrictions ----------------------------------------------------------------------------


async def test_s61_pod_update_restrictions(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    body = pod("s61", activeDeadlineSeconds=300)
    body["spec"]["tolerations"] = [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}]
    created = await core.create_namespaced_pod(NS, body)
    # Tolerations is an atomic list: a patch sends all of them, the admission-added defaults included.
    existing = [kube.sanitize_for_serialization(t) for t in created.spec.tolerations]

    # Allowed: container images, a shorter activeDeadlineSeconds, added tolerations, metadata.
    changed = await core.patch_namespaced_pod(
        "s61",
        NS,
        {
            "metadata": {"labels": {"a": "b"}},
            "spec": {
                "containers": [{"name": "main", "image": "busybox:1.37"}],
                "activeDeadlineSeconds": 200,
                "tolerations": [*existing, {"key": "new", "operator": "Exists", "effect": "NoSchedule"}],
            },
        },
    )
    assert changed.spec.containers[0].image == "busybox:1.37"
    assert changed.spec.active_deadline_seconds == 200
    assert "new" in {t.key for t in changed.spec.tolerations}
    assert changed.metadata.generation == 2

    body = await api_error(core.patch_namespaced_pod("s61", NS, {"spec": {"activeDeadlineSeconds": 600}}))
    assert body["message"] == (
        'Pod "s61" is invalid: spec.activeDeadlineSeconds: Invalid value: 600: '
        "must be less than or equal to previous value"
    )
    body = await api_error(
        core.patch_namespaced_pod(
            "s61",
            NS,
            {"spec": {"tolerations": [{**existing[0], "value": "other"}, *existing[1:]]}},
        )
    )
    assert body["details"]["causes"][0] == {
        "reason": "FieldValueForbidden",
        "message": "Forbidden: existing toleration can not be modified except its tolerationSeconds",
        "field": "spec.tolerations",
    }
    for forbidden in (
        {"spec": {"restartPolicy": "Never"}},
        {"spec": {"containers": [{"name": "main", "env": [{"name": "X", "value": "1"}]}]}},
        {"spec": {"containers": [{"name": "extra", "image": "busybox"}]}},
    ):
        body = await api_error(core.patch_namespaced_pod("s61", NS, forbidden))
        assert (body["code"], body["reason"]) == (422, "Invalid")
        assert body["details"]["causes"][0]["reason"] == "FieldValueForbidden"
        assert body["details"]["causes"][0]["field"] in ("spec", "spec.containers")
        assert body["message"].startswith('Pod "s61" is invalid: spec')


# -- S65 Secrets -------------------------------------------------------------------------------------------


async def test_s65_secret_data_must_be_base64(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    body = await api_error(
        core.create_namespaced_secret(NS, {"metadata": {"name": "s65-bad"}, "data": {"k": "not base64!"}})
    )
    assert (body["code"], body["reason"]) == (400, "BadRequest")
    assert body["message"] == (
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3'
    )


async def test_s65_string_data_merged_type_defaulted(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_secret(
        NS,
        {
            "metadata": {"name": "s65"},
            "data": {"a": b64("1"), "keep": b64("k")},
            "stringData": {"a": "override", "b": "2"},
        },
    )
    assert created.type == "Opaque"
    assert created.data == {"a": b64("override"), "b": b64("2"), "keep": b64("k")}
    assert created.string_data is None
    assert created.metadata.generation is None
    read = await core.read_namespaced_secret("s65", NS)
    assert read.string_data is None
    assert read.data == created.data
    patched = await core.patch_namespaced_secret("s65", NS, {"stringData": {"b": "3"}})
    assert patched.data["b"] == b64("3")
    assert patched.string_data is None


async def test_s65_immutable_secret(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_secret(
        NS, {"metadata": {"name": "s65-frozen"}, "data": {"a": b64("1")}, "immutable": True}
    )
    body = await api_error(core.patch_namespaced_secret("s65-frozen", NS, {"data": {"a": b64("2")}}))
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert (
        body["message"]
        == 'Secret "s65-frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set'
    )
    body = await api_error(core.patch_namespaced_secret("s65-frozen", NS, {"immutable": False}))
    assert body["message"] == (
        'Secret "s65-frozen" is invalid: immutable: Forbidden: field is immutable when `immutable` is set'
    )
    # Metadata stays writable.
    labelled = await core.patch_namespaced_secret("s65-frozen", NS, {"metadata": {"labels": {"a": "b"}}})
    assert labelled.metadata.labels == {"a": "b"}


# -- S66 ServiceAccounts, RBAC, Namespaces ----------------------------------------------------------------


async def test_s66_service_accounts_are_plain_and_default_is_everywhere(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespace({"metadata": {"name": "s66-sa"}})
    default = await eventually(
        lambda: core.read_namespaced_service_account("default", "s66-sa"),
        what="default SA in a new namespace",
    )
    assert default.metadata.generation is None
    assert not default.secrets  # no token Secrets since 1.24
    made = await core.create_namespaced_service_account(NS, {"metadata": {"name": "s66-runner"}})
    assert (made.kind, made.api_version) == ("ServiceAccount", "v1")
    assert made.metadata.generation is None
    assert made.metadata.uid


async def test_s66_rolebinding_role_ref_is_immutable(world: World, kube: client.ApiClient) -> None:
    rbac = client.RbacAuthorizationV1Api(kube)
    rule = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
    for name in ("s66-a", "s66-b"):
        await rbac.create_namespaced_role(NS, {"metadata": {"name": name}, "rules": [rule]})
    made = await rbac.create_namespaced_role_binding(
        NS,
        {
            "metadata": {"name": "s66"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "s66-a"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": NS}],
        },
    )
    assert made.metadata.generation is None
    body = await api_error(rbac.patch_namespaced_role_binding("s66", NS, {"roleRef": {"name": "s66-b"}}))
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert body["message"].startswith(
        'RoleBinding.rbac.authorization.k8s.io "s66" is invalid: roleRef: Invalid value: '
    )
    assert body["message"].endswith(": cannot change roleRef")
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueInvalid", "roleRef")
    ]
    # Subjects may change.
    patched = await rbac.patch_namespaced_role_binding(
        "s66", NS, {"subjects": [{"kind": "ServiceAccount", "name": "other", "namespace": NS}]}
    )
    assert [s.name for s in patched.subjects] == ["other"]


async def test_s66_namespace_deletion(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespace({"metadata": {"name": "s66-ns"}})
    await core.create_namespaced_config_map("s66-ns", {"metadata": {"name": "plain"}})
    await core.create_namespaced_config_map(
        "s66-ns", {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    )

    # The answer is the Namespace, which kubernetes_asyncio would read as a Status: read it raw.
    async with raw_response(world, "DELETE", "/api/v1/namespaces/s66-ns") as resp:
        assert resp.status == 200
        deleting = await resp.json()
    assert deleting["kind"] == "Namespace"
    assert deleting["status"]["phase"] == "Terminating"
    assert deleting["metadata"]["deletionTimestamp"]
    # NamespaceLifecycle admission refuses new content.
    body = await api_error(core.create_namespaced_config_map("s66-ns", {"metadata": {"name": "late"}}))
    assert (body["code"], body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        'configmaps "late" is forbidden: '
        "unable to create new content in namespace s66-ns because it is being terminated"
    )

    async def only_held_left() -> bool:
        names = [c.metadata.name for c in (await core.list_namespaced_config_map("s66-ns")).items]
        return names == ["held"]

    await eventually(only_held_left, timeout=30, what="contents deleted")
    assert (await core.read_namespace("s66-ns")).status.phase == "Terminating"
    await core.patch_namespaced_config_map("held", "s66-ns", {"metadata": {"finalizers": None}})

    async def namespace_gone() -> bool:
        try:
            await core.read_namespace("s66-ns")
        except ApiException as exc:
            return exc.status == 404
        return False

    await eventually(namespace_gone, timeout=30, what="namespace removed")
