"""Emulator conformance, generation, resourceVersion and no-op writes (apiserver-semantics.md S30-S34).

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Requests go over HTTP through
kubernetes_asyncio's typed APIs; watch-visible behaviour is observed with ``kubernetes_asyncio.watch``
from a known resourceVersion, and "no event" is asserted by making a later, real change and checking that
its event is the first one the watch delivers. resourceVersions are compared only for order: on a real
cluster other writers consume revisions too, so nothing here assumes they are contiguous.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import pytest
from kubernetes_asyncio import client, watch

from tests.e2e.sim import conformance
from tests.e2e.sim.conformance import (
    ARS,
    GROUP,
    MERGE,
    NS,
    SLEEP,
    VERSION,
    ars_events,
    default_sa_ready,
    get_ars,
    patch_ars,
)
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds(on_demand=True)

JSON_PATCH = "application/json-patch+json"
ARS_SPEC = {
    "githubConfigUrl": "https://github.com/example/repo",
    "githubConfigSecret": "github-secret",
    "minRunners": 0,
    "maxRunners": 5,
}
ars_body = partial(conformance.ars, spec=ARS_SPEC)
create_ars = partial(conformance.create_ars, spec=ARS_SPEC)


# -- helpers ------------------------------------------------------------------------------------------


async def patch_ars_status(
    custom: client.CustomObjectsApi, name: str, status: dict[str, Any]
) -> dict[str, Any]:
    obj: dict[str, Any] = await custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, NS, ARS, name, {"status": status}, _content_type=MERGE
    )
    return obj


def rv(obj: dict[str, Any]) -> int:
    text = obj["metadata"]["resourceVersion"]
    assert isinstance(text, str) and text.isdigit(), f"resourceVersion is not a decimal string: {text!r}"
    return int(text)


def generation(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["generation"])


def pod_body(name: str, *, scheduler: str | None = "other-scheduler") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox:1.36", "command": SLEEP}],
    }
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


# -- S30 generation of custom resources -------------------------------------------------------------


async def test_s30_generation_starts_at_one_and_ignores_client_values(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)

    created = await create_ars(custom, "gen-client", generation=7)
    assert generation(created) == 1

    # A PUT carrying a made-up generation and no other change is a no-op.
    put = await custom.replace_namespaced_custom_object(
        GROUP,
        VERSION,
        NS,
        ARS,
        "gen-client",
        {**created, "metadata": {**created["metadata"], "generation": 99}},
    )
    assert generation(put) == 1
    assert rv(put) == rv(created)

    # With a spec change the server still decides: one bump from the stored value.
    body = {
        **put,
        "metadata": {**put["metadata"], "generation": 99},
        "spec": {**put["spec"], "maxRunners": 9},
    }
    put = await custom.replace_namespaced_custom_object(GROUP, VERSION, NS, ARS, "gen-client", body)
    assert generation(put) == 2
    patched = await patch_ars(custom, "gen-client", {"metadata": {"generation": 1}})
    assert generation(patched) == 2


async def test_s30_generation_bumps_once_per_spec_write(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "gen-spec")

    patched = await patch_ars(
        custom,
        "gen-spec",
        {"spec": {"minRunners": 1, "maxRunners": 8, "runnerGroup": "g", "runnerScaleSetName": "s"}},
    )
    assert generation(patched) == 2

    patched = await patch_ars(
        custom,
        "gen-spec",
        [
            {"op": "replace", "path": "/spec/minRunners", "value": 2},
            {"op": "replace", "path": "/spec/maxRunners", "value": 9},
            {"op": "remove", "path": "/spec/runnerGroup"},
        ],
        JSON_PATCH,
    )
    assert generation(patched) == 3

    put = await custom.replace_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, "gen-spec", {**patched, "spec": {**patched["spec"], "minRunners": 3}}
    )
    assert generation(put) == 4
    assert generation(await get_ars(custom, "gen-spec")) == 4


async def test_s30_metadata_and_status_writes_do_not_bump_generation(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    owner = await core.create_namespaced_config_map(NS, {"metadata": {"name": "gen-owner"}})
    created = await create_ars(custom, "gen-meta")
    last = rv(created)

    writes = [
        {"metadata": {"labels": {"a": "1"}}},
        {"metadata": {"annotations": {"b": "2"}}},
        {"metadata": {"finalizers": ["example.com/keep"]}},
        {
            "metadata": {
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "gen-owner", "uid": owner.metadata.uid}
                ]
            }
        },
    ]
    for body in writes:
        patched = await patch_ars(custom, "gen-meta", body)
        assert generation(patched) == 1, body
        assert rv(patched) > last, body
        last = rv(patched)

    status = await patch_ars_status(custom, "gen-meta", {"currentRunners": 3, "observedGeneration": 1})
    assert generation(status) == 1
    assert rv(status) > last


# -- S31 generation on deletion ---------------------------------------------------------------------


async def test_s31_finalizer_blocked_delete_bumps_generation_once(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "gen-delete", finalizers=["example.com/hold"])
    spec_changed = await patch_ars(custom, "gen-delete", {"spec": {"maxRunners": 6}})
    assert generation(spec_changed) == 2

    deleting: dict[str, Any] = await custom.delete_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, "gen-delete"
    )
    assert deleting["metadata"]["deletionTimestamp"]
    assert generation(deleting) == 3
    assert rv(deleting) > rv(spec_changed)

    # Deleting again does not set deletionTimestamp again, so it does not bump either.
    again: dict[str, Any] = await custom.delete_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, "gen-delete"
    )
    assert generation(again) == 3
    assert again["metadata"]["deletionTimestamp"] == deleting["metadata"]["deletionTimestamp"]


async def test_s31_graceful_pod_delete_bumps_generation(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    await core.create_namespaced_pod(NS, pod_body("gen-pod", scheduler=None))

    async def bound() -> Any:
        pod = await core.read_namespaced_pod("gen-pod", NS)
        return pod if pod.spec.node_name else None

    pod = await eventually(bound, what="pod bound by the scheduler")
    assert pod.metadata.generation == 1

    deleting = await core.delete_namespaced_pod("gen-pod", NS)

    assert deleting.metadata.deletion_timestamp is not None
    assert deleting.metadata.deletion_grace_period_seconds == 30
    assert deleting.metadata.generation == 2


# -- S32 generation of built-in kinds ---------------------------------------------------------------


async def test_s32_pod_generation_follows_spec_changes(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)

    created = await core.create_namespaced_pod(NS, pod_body("gen-core-pod"))
    assert created.metadata.generation == 1

    labelled = await core.patch_namespaced_pod("gen-core-pod", NS, {"metadata": {"labels": {"a": "1"}}})
    assert labelled.metadata.generation == 1
    status = await core.patch_namespaced_pod_status(
        "gen-core-pod", NS, {"status": {"conditions": [{"type": "example.com/Gate", "status": "True"}]}}
    )
    assert status.metadata.generation == 1

    image = await core.patch_namespaced_pod(
        "gen-core-pod", NS, {"spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]}}
    )
    assert image.metadata.generation == 2

    deleted = await core.delete_namespaced_pod("gen-core-pod", NS)  # unbound: removed at once
    assert deleted.metadata.generation == 3


async def test_s32_other_builtin_kinds_have_no_generation(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    rbac = client.RbacAuthorizationV1Api(kube)
    coordination = client.CoordinationV1Api(kube)

    created = [
        await core.create_namespaced_secret(NS, {"metadata": {"name": "nogen"}, "stringData": {"k": "v"}}),
        await core.create_namespaced_config_map(NS, {"metadata": {"name": "nogen"}, "data": {"k": "v"}}),
        await core.create_namespaced_service_account(NS, {"metadata": {"name": "nogen"}}),
        await rbac.create_namespaced_role(
            NS,
            {
                "metadata": {"name": "nogen"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
            },
        ),
        await rbac.create_namespaced_role_binding(
            NS,
            {
                "metadata": {"name": "nogen"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "nogen"},
                "subjects": [{"kind": "ServiceAccount", "name": "nogen", "namespace": NS}],
            },
        ),
        await coordination.create_namespaced_lease(
            NS, {"metadata": {"name": "nogen"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}
        ),
        await core.create_namespaced_event(
            NS,
            {
                "metadata": {"name": "nogen.1"},
                "involvedObject": {"kind": "Secret", "namespace": NS, "name": "nogen"},
                "reason": "Tested",
                "message": "no generation",
                "type": "Normal",
            },
        ),
    ]
    for obj in created:
        assert obj.metadata.generation is None, obj.kind

    # Updates do not introduce one either.
    secret = await core.patch_namespaced_secret("nogen", NS, {"stringData": {"k": "changed"}})
    lease = await coordination.patch_namespaced_lease("nogen", NS, {"spec": {"holderIdentity": "you"}})
    role = await rbac.patch_namespaced_role(
        "nogen", NS, {"rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}
    )
    assert secret.metadata.generation is None
    assert lease.metadata.generation is None
    assert role.metadata.generation is None


# -- S33 resourceVersion ----------------------------------------------------------------------------


async def test_s33_one_increasing_revision_shared_by_all_kinds(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    revisions: list[tuple[str, int]] = []

    def note(what: str, obj: Any) -> None:
        meta = obj["metadata"] if isinstance(obj, dict) else obj.metadata.to_dict()
        text = meta.get("resourceVersion", meta.get("resource_version"))
        assert isinstance(text, str) and text.isdigit(), f"{what}: {text!r}"
        revisions.append((what, int(text)))

    note("create secret", await core.create_namespaced_secret(NS, {"metadata": {"name": "rv-secret"}}))
    note("create ars", await create_ars(custom, "rv-ars"))
    note("create configmap", await core.create_namespaced_config_map(NS, {"metadata": {"name": "rv-cm"}}))
    note(
        "patch secret",
        await core.patch_namespaced_secret("rv-secret", NS, {"metadata": {"labels": {"a": "1"}}}),
    )
    note("patch ars spec", await patch_ars(custom, "rv-ars", {"spec": {"maxRunners": 7}}))
    note("write ars status", await patch_ars_status(custom, "rv-ars", {"currentRunners": 1}))
    note("add finalizer", await patch_ars(custom, "rv-ars", {"metadata": {"finalizers": ["example.com/x"]}}))
    deleting = await custom.delete_namespaced_custom_object(GROUP, VERSION, NS, ARS, "rv-ars")
    note("set deletionTimestamp", deleting)

    assert [r for _, r in revisions] == sorted({r for _, r in revisions}), revisions

    # The object's resourceVersion is the revision of its last write.
    assert rv(await get_ars(custom, "rv-ars")) == revisions[-1][1]
    secret = await core.read_namespaced_secret("rv-secret", NS)
    assert int(secret.metadata.resource_version) == revisions[3][1]

    # The delete itself is a write: DELETED carries a new revision, later than the last stored one ...
    last_write = revisions[-1][1]
    emptied = await patch_ars(custom, "rv-ars", {"metadata": {"finalizers": None}})
    events = await ars_events(custom, "rv-ars", str(last_write), lambda t, _o: t == "DELETED")
    assert [t for t, _ in events] == ["DELETED"]
    delete_rv = rv(events[0][1])
    assert delete_rv > last_write
    assert rv(emptied) == last_write  # the write that deleted it answers the submitted object

    # ... and the next write of any kind comes after it; a list reads the current revision.
    later = await core.patch_namespaced_config_map("rv-cm", NS, {"data": {"k": "v"}})
    assert int(later.metadata.resource_version) > delete_rv
    listed = await core.list_namespaced_config_map(NS)
    assert int(listed.metadata.resource_version) >= int(later.metadata.resource_version)


async def test_s33_immediate_delete_gets_its_own_revision(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "rv-gone")

    await custom.delete_namespaced_custom_object(GROUP, VERSION, NS, ARS, "rv-gone")
    events = await ars_events(
        custom, "rv-gone", created["metadata"]["resourceVersion"], lambda t, _o: t == "DELETED"
    )

    assert [t for t, _ in events] == ["DELETED"]
    deleted = events[0][1]
    assert rv(deleted) > rv(created)
    assert deleted["spec"] == created["spec"]  # the last stored state


# -- S34 no-op writes -------------------------------------------------------------------------------


async def test_s34_noop_writes_keep_the_resource_version_and_emit_no_event(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "noop", labels={"a": "1"})
    current = await patch_ars_status(custom, "noop", {"currentRunners": 2})

    noops = [
        await patch_ars(custom, "noop", {"metadata": {"labels": {"a": "1"}}, "spec": {"minRunners": 0}}),
        await patch_ars(custom, "noop", [{"op": "test", "path": "/spec/maxRunners", "value": 5}], JSON_PATCH),
        await patch_ars(
            custom, "noop", [{"op": "replace", "path": "/spec/maxRunners", "value": 5}], JSON_PATCH
        ),
        await custom.replace_namespaced_custom_object(GROUP, VERSION, NS, ARS, "noop", current),
        await patch_ars_status(custom, "noop", {"currentRunners": 2}),
        await custom.replace_namespaced_custom_object_status(GROUP, VERSION, NS, ARS, "noop", current),
    ]
    for answer in noops:
        assert answer == current

    marker = await patch_ars(custom, "noop", {"metadata": {"labels": {"marker": "1"}}})
    events = await ars_events(custom, "noop", current["metadata"]["resourceVersion"], lambda _t, _o: True)
    assert [(t, rv(o)) for t, o in events] == [("MODIFIED", rv(marker))]
    assert rv(created) < rv(current) < rv(marker)


async def test_s34_noop_writes_of_builtin_kinds(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    secret = await core.create_namespaced_secret(
        NS, {"metadata": {"name": "noop", "labels": {"a": "1"}}, "data": {"k": "dg=="}}
    )
    rv0 = secret.metadata.resource_version

    smp = await core.patch_namespaced_secret(
        "noop", NS, {"metadata": {"labels": {"a": "1"}}, "data": {"k": "dg=="}}
    )
    merge = await core.patch_namespaced_secret(
        "noop", NS, {"metadata": {"labels": {"a": "1"}}}, _content_type=MERGE
    )
    put = await core.replace_namespaced_secret(
        "noop",
        NS,
        {"metadata": {"name": "noop", "labels": {"a": "1"}, "resourceVersion": rv0}, "data": {"k": "dg=="}},
    )
    assert smp.metadata.resource_version == rv0
    assert merge.metadata.resource_version == rv0
    assert put.metadata.resource_version == rv0

    marker = await core.patch_namespaced_secret("noop", NS, {"metadata": {"labels": {"marker": "1"}}})
    seen: list[tuple[str, str]] = []
    async with asyncio.timeout(5), watch.Watch() as w:
        async for event in w.stream(
            core.list_namespaced_secret, NS, field_selector="metadata.name=noop", resource_version=rv0
        ):
            seen.append((event["type"], event["object"].metadata.resource_version))
            break
    assert seen == [("MODIFIED", marker.metadata.resource_version)]
