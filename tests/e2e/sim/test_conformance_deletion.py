"""Emulator conformance, deletion, finalizers and owner references (apiserver-semantics.md S35-S44).

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Requests go over HTTP through
kubernetes_asyncio's typed APIs (``_preload_content=False`` where the exact response body or status code
matters, ``*_with_http_info`` for headers); watch-visible behaviour is observed with
``kubernetes_asyncio.watch`` from a known resourceVersion. The garbage collector itself is tested in
test_garbage_collector.py: here only what the API server does on DELETE (finalizers added,
deletionTimestamp, status codes), asserted on the DELETE answer itself because the collector acts at once.

Pod grace periods need a bound pod. Pods bound by the simulated scheduler are run by the simulated
kubelet, which (like a real one) deletes them for good soon after they get a deletionTimestamp; the rows
that need a pod to stay terminating use a pod bound at creation to a node no kubelet serves
(``spec.nodeName: unserved-node``), which a real cluster also leaves alone for far longer than a test.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

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
    failure,
    get_ars,
    patch_ars,
    rv,
)
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds(on_demand=True)

ARS_QUALIFIED = f"{ARS}.{GROUP}"
HOLD = "example.com/hold"
UNSERVED_NODE = "unserved-node"
ARS_SPEC = {"githubConfigUrl": "https://github.com/example/repo", "minRunners": 0, "maxRunners": 5}
ars_body = partial(conformance.ars, spec=ARS_SPEC)
create_ars = partial(conformance.create_ars, spec=ARS_SPEC)


# -- helpers ------------------------------------------------------------------------------------------


async def delete_ars(custom: client.CustomObjectsApi, name: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    """DELETE an ARS; returns the HTTP status and the raw JSON body."""
    resp = await custom.delete_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, name, _preload_content=False, **kwargs
    )
    async with resp:
        return resp.status, json.loads(await resp.read())


async def raw_json(call: Any) -> tuple[int, dict[str, Any]]:
    """Await a typed call made with ``_preload_content=False``: the HTTP status and the JSON body."""
    resp = await call
    async with resp:
        return resp.status, json.loads(await resp.read())


def status_of(exc: ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.body)
    assert body["kind"] == "Status"
    assert body["code"] == exc.status
    return body


def parse_time(text: str) -> datetime:
    assert text.endswith("Z") and len(text) == 20, f"not a second-precision UTC timestamp: {text!r}"
    return datetime.fromisoformat(text)


def near(when: datetime, expected: datetime, slack: float = 3.0) -> bool:
    return abs((when - expected).total_seconds()) <= slack


async def gone(read: Callable[[], Any]) -> bool:
    try:
        await read()
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


def pod_body(
    name: str, *, scheduler: str | None = None, node: str | None = None, grace: int | None = None, **meta: Any
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox:1.36", "command": SLEEP}],
    }
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    if node is not None:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta}, "spec": spec}


async def scheduled_pod(core: client.CoreV1Api, name: str, **kwargs: Any) -> Any:
    """A pod bound by the scheduler (and so run by the kubelet)."""
    await core.create_namespaced_pod(NS, pod_body(name, **kwargs))

    async def bound() -> Any:
        pod = await core.read_namespaced_pod(name, NS)
        return pod if pod.spec.node_name else None

    return await eventually(bound, what=f"pod {name} bound")


# -- S35 DELETE basics ------------------------------------------------------------------------------


async def test_s35_delete_is_200_and_a_missing_object_is_404(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    await create_ars(custom, "del-basic")

    code, _body = await delete_ars(custom, "del-basic")
    assert code == 200

    for call in (
        custom.delete_namespaced_custom_object(GROUP, VERSION, NS, ARS, "del-basic"),
        custom.get_namespaced_custom_object(GROUP, VERSION, NS, ARS, "del-basic"),
    ):
        with pytest.raises(ApiException) as caught:
            await call
        assert caught.value.status == 404
        assert status_of(caught.value) == failure(
            404,
            "NotFound",
            f'{ARS_QUALIFIED} "del-basic" not found',
            {"name": "del-basic", "group": GROUP, "kind": ARS},
        )
    with pytest.raises(ApiException) as secret:
        await core.delete_namespaced_secret("absent", NS)
    assert status_of(secret.value) == failure(
        404, "NotFound", 'secrets "absent" not found', {"name": "absent", "kind": "secrets"}
    )


async def test_s35_orphan_dependents_false_answers_202_when_not_deleted_at_once(
    kube: client.ApiClient,
) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "del-202", finalizers=[HOLD])
    await create_ars(custom, "del-200")

    # kubernetes_asyncio deserialises only 200 for custom objects: a 202 gives None.
    assert (
        await custom.delete_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, "del-202", orphan_dependents=False
        )
        is None
    )
    code, body = await delete_ars(custom, "del-202", orphan_dependents=False)
    assert code == 202
    assert body["kind"] == "AutoscalingRunnerSet"
    assert body["metadata"]["deletionTimestamp"]
    assert body["metadata"]["finalizers"] == [HOLD]

    # Deleted at once: 200 whatever orphanDependents says.
    code, body = await delete_ars(custom, "del-200", orphan_dependents=False)
    assert code == 200
    assert body["status"] == "Success"


async def test_s35_options_in_the_body_win_over_query_parameters(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "del-body", finalizers=[HOLD])
    await create_ars(custom, "del-empty-body")

    # Query says Orphan, body says Foreground: the body is used, the query ignored.
    code, body = await delete_ars(
        custom, "del-body", propagation_policy="Orphan", body={"propagationPolicy": "Foreground"}
    )
    assert code == 200
    assert body["metadata"]["finalizers"] == [HOLD, "foregroundDeletion"]

    # Even an empty options body makes the server ignore the query: Background, removed at once.
    code, body = await delete_ars(custom, "del-empty-body", propagation_policy="Orphan", body={})
    assert code == 200
    assert body["kind"] == "Status"
    assert body["status"] == "Success"


# -- S36 DELETE response bodies ---------------------------------------------------------------------


async def test_s36_immediate_delete_answers_a_status_or_the_object(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    rbac = client.RbacAuthorizationV1Api(kube)
    coordination = client.CoordinationV1Api(kube)
    await default_sa_ready(core)
    ars = await create_ars(custom, "resp")
    secret = await core.create_namespaced_secret(NS, {"metadata": {"name": "resp"}})
    role = await rbac.create_namespaced_role(NS, {"metadata": {"name": "resp"}, "rules": []})
    binding = await rbac.create_namespaced_role_binding(
        NS,
        {
            "metadata": {"name": "resp"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "resp"},
        },
    )
    lease = await coordination.create_namespaced_lease(NS, {"metadata": {"name": "resp"}, "spec": {}})
    sa = await core.create_namespaced_service_account(NS, {"metadata": {"name": "resp"}})
    pod = await core.create_namespaced_pod(NS, pod_body("resp", scheduler="other-scheduler"))

    def success(name: str, group: str, plural: str, uid: str) -> dict[str, Any]:
        """The store's Status: details (no group for the core group) but no code."""
        details = {"name": name, "group": group, "kind": plural, "uid": uid}
        if not group:
            del details["group"]
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    assert await delete_ars(custom, "resp") == (200, success("resp", GROUP, ARS, ars["metadata"]["uid"]))
    assert await raw_json(core.delete_namespaced_secret("resp", NS, _preload_content=False)) == (
        200,
        success("resp", "", "secrets", secret.metadata.uid),
    )
    assert await raw_json(rbac.delete_namespaced_role("resp", NS, _preload_content=False)) == (
        200,
        success("resp", "rbac.authorization.k8s.io", "roles", role.metadata.uid),
    )
    assert await raw_json(rbac.delete_namespaced_role_binding("resp", NS, _preload_content=False)) == (
        200,
        success("resp", "rbac.authorization.k8s.io", "rolebindings", binding.metadata.uid),
    )
    assert await raw_json(coordination.delete_namespaced_lease("resp", NS, _preload_content=False)) == (
        200,
        success("resp", "coordination.k8s.io", "leases", lease.metadata.uid),
    )

    # Pods and ServiceAccounts answer the deleted object.
    code, body = await raw_json(core.delete_namespaced_service_account("resp", NS, _preload_content=False))
    assert code == 200
    assert (body["kind"], body["apiVersion"], body["metadata"]["uid"]) == (
        "ServiceAccount",
        "v1",
        sa.metadata.uid,
    )
    code, body = await raw_json(core.delete_namespaced_pod("resp", NS, _preload_content=False))
    assert code == 200
    assert (body["kind"], body["apiVersion"], body["metadata"]["uid"]) == ("Pod", "v1", pod.metadata.uid)
    # An unbound pod is deleted with grace 0, which the server first records on the object.
    assert body["metadata"]["deletionGracePeriodSeconds"] == 0
    assert body["metadata"]["deletionTimestamp"]
    for read in (
        lambda: core.read_namespaced_pod("resp", NS),
        lambda: core.read_namespaced_service_account("resp", NS),
        lambda: core.read_namespaced_secret("resp", NS),
    ):
        assert await gone(read)


async def test_s36_deferred_delete_answers_the_updated_object(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    rbac = client.RbacAuthorizationV1Api(kube)
    await default_sa_ready(core)
    await create_ars(custom, "deferred", finalizers=[HOLD])
    await core.create_namespaced_secret(NS, {"metadata": {"name": "deferred", "finalizers": [HOLD]}})
    await core.create_namespaced_service_account(NS, {"metadata": {"name": "deferred", "finalizers": [HOLD]}})
    await rbac.create_namespaced_role(
        NS, {"metadata": {"name": "deferred", "finalizers": [HOLD]}, "rules": []}
    )
    await core.create_namespaced_pod(NS, pod_body("deferred", node=UNSERVED_NODE))

    answers = {
        "AutoscalingRunnerSet": await delete_ars(custom, "deferred"),
        "Secret": await raw_json(core.delete_namespaced_secret("deferred", NS, _preload_content=False)),
        "ServiceAccount": await raw_json(
            core.delete_namespaced_service_account("deferred", NS, _preload_content=False)
        ),
        "Role": await raw_json(rbac.delete_namespaced_role("deferred", NS, _preload_content=False)),
        "Pod": await raw_json(core.delete_namespaced_pod("deferred", NS, _preload_content=False)),
    }
    for kind, (code, body) in answers.items():
        assert code == 200, kind
        assert body["kind"] == kind
        assert body["metadata"]["name"] == "deferred"
        assert body["metadata"]["deletionTimestamp"], kind
    assert answers["Pod"][1]["metadata"]["deletionGracePeriodSeconds"] == 30
    assert answers["Secret"][1]["metadata"]["deletionGracePeriodSeconds"] == 0


# -- S37 propagationPolicy --------------------------------------------------------------------------


async def test_s37_background_is_the_default(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    await create_ars(custom, "bg")
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "bg"}})

    code, body = await delete_ars(custom, "bg")
    status = await core.delete_namespaced_config_map("bg", NS)

    assert (code, body["status"]) == (200, "Success")
    assert status.status == "Success"
    assert await gone(lambda: get_ars(custom, "bg"))
    assert await gone(lambda: core.read_namespaced_config_map("bg", NS))


@pytest.mark.parametrize(
    ("policy", "finalizer"),
    [("Foreground", "foregroundDeletion"), ("Orphan", "orphan")],
    ids=["fg", "orphan"],
)
async def test_s37_foreground_and_orphan_add_their_finalizer(
    kube: client.ApiClient, policy: str, finalizer: str
) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "gc-policy")

    code, body = await delete_ars(custom, "gc-policy", propagation_policy=policy)

    assert code == 200
    meta = body["metadata"]
    assert meta["finalizers"] == [finalizer]
    assert meta["deletionTimestamp"]
    assert meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == 2
    assert rv(body) > rv(created)
    # With no dependents the garbage collector then removes its finalizer, which deletes the owner.
    await eventually(lambda: gone(lambda: get_ars(custom, "gc-policy")), what="owner released by the GC")


async def test_s37_orphan_dependents_maps_to_a_policy(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "orphan-bool", finalizers=[HOLD])

    code, body = await delete_ars(custom, "orphan-bool", orphan_dependents=True)

    assert code == 200
    assert body["metadata"]["finalizers"] == [HOLD, "orphan"]


async def test_s37_redelete_with_a_new_policy_still_adds_the_gc_finalizer(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "redelete", finalizers=[HOLD])

    code, first = await delete_ars(custom, "redelete")
    assert code == 200
    assert first["metadata"]["finalizers"] == [HOLD]

    code, second = await delete_ars(custom, "redelete", propagation_policy="Foreground")
    assert code == 200
    assert second["metadata"]["finalizers"] == [HOLD, "foregroundDeletion"]
    assert rv(second) > rv(first)
    # deletionTimestamp and generation were set by the first DELETE only.
    assert second["metadata"]["deletionTimestamp"] == first["metadata"]["deletionTimestamp"]
    assert second["metadata"]["generation"] == first["metadata"]["generation"]


# -- S38 preconditions ------------------------------------------------------------------------------


async def test_s38_delete_preconditions(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    created = await create_ars(custom, "pre")
    uid, current = created["metadata"]["uid"], created["metadata"]["resourceVersion"]
    pod = await core.create_namespaced_pod(NS, pod_body("pre", scheduler="other-scheduler"))
    details = {"name": "pre", "group": GROUP, "kind": "AutoscalingRunnerSet"}

    # The precondition check of rest.BeforeDelete names the resource by its Kind.
    with pytest.raises(ApiException) as wrong_uid:
        await custom.delete_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, "pre", body={"preconditions": {"uid": "not-the-uid"}}
        )
    assert status_of(wrong_uid.value) == failure(
        409,
        "Conflict",
        'Operation cannot be fulfilled on AutoscalingRunnerSet.actions.github.com "pre": the UID in the '
        f"precondition (not-the-uid) does not match the UID in record ({uid}). "
        "The object might have been deleted and then recreated",
        details,
    )
    with pytest.raises(ApiException) as wrong_rv:
        await custom.delete_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, "pre", body={"preconditions": {"resourceVersion": "1"}}
        )
    assert status_of(wrong_rv.value) == failure(
        409,
        "Conflict",
        'Operation cannot be fulfilled on AutoscalingRunnerSet.actions.github.com "pre": the '
        f"ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({current}). "
        "The object might have been modified",
        details,
    )
    with pytest.raises(ApiException) as pod_uid:
        await core.delete_namespaced_pod(
            "pre", NS, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="other"))
        )
    assert status_of(pod_uid.value) == failure(
        409,
        "Conflict",
        'Operation cannot be fulfilled on Pod "pre": the UID in the precondition (other) does not match '
        f"the UID in record ({pod.metadata.uid}). The object might have been deleted and then recreated",
        {"name": "pre", "kind": "Pod"},
    )
    assert (await get_ars(custom, "pre"))["metadata"]["resourceVersion"] == current

    code, body = await delete_ars(
        custom, "pre", body={"preconditions": {"uid": uid, "resourceVersion": current}}
    )
    assert (code, body["status"]) == (200, "Success")
    await core.delete_namespaced_pod(
        "pre", NS, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=pod.metadata.uid))
    )
    assert await gone(lambda: core.read_namespaced_pod("pre", NS))


# -- S39 pod grace period ---------------------------------------------------------------------------


async def test_s39_grace_comes_from_the_pod_spec_or_the_request(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    await scheduled_pod(core, "grace-spec", grace=45)
    await scheduled_pod(core, "grace-param")
    await scheduled_pod(core, "grace-negative")

    now = datetime.now(UTC)
    spec = await core.delete_namespaced_pod("grace-spec", NS)
    param = await core.delete_namespaced_pod("grace-param", NS, grace_period_seconds=7)
    negative = await core.delete_namespaced_pod("grace-negative", NS, grace_period_seconds=-5)

    for pod, grace in ((spec, 45), (param, 7), (negative, 1)):
        assert pod.metadata.deletion_grace_period_seconds == grace, pod.metadata.name
        assert near(pod.metadata.deletion_timestamp, now + timedelta(seconds=grace)), pod.metadata.name
    # The kubelet stops the containers (within the grace period) and then deletes the pods for good.
    for name in ("grace-param", "grace-negative"):
        await eventually(
            lambda n=name: gone(lambda: core.read_namespaced_pod(n, NS)), timeout=30, what=f"{name} removed"
        )


async def test_s39_unbound_and_terminal_pods_are_deleted_at_once(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    await core.create_namespaced_pod(NS, pod_body("unbound", scheduler="other-scheduler", grace=60))
    await core.create_namespaced_pod(NS, pod_body("finished", node=UNSERVED_NODE, grace=60))
    await core.patch_namespaced_pod_status("finished", NS, {"status": {"phase": "Succeeded"}})

    for name in ("unbound", "finished"):
        deleted = await core.delete_namespaced_pod(name, NS, grace_period_seconds=30)
        assert deleted.metadata.deletion_grace_period_seconds == 0
        assert await gone(lambda n=name: core.read_namespaced_pod(n, NS)), name


async def test_s39_a_later_delete_may_only_shorten_the_grace(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    await core.create_namespaced_pod(NS, pod_body("shorten", node=UNSERVED_NODE))

    first = await core.delete_namespaced_pod("shorten", NS, grace_period_seconds=60)
    assert first.metadata.deletion_grace_period_seconds == 60
    start = first.metadata.deletion_timestamp - timedelta(seconds=60)

    # Longer, equal or unspecified grace: nothing changes.
    for grace in (120, 60, None):
        again = await core.delete_namespaced_pod("shorten", NS, grace_period_seconds=grace)
        assert again.metadata.resource_version == first.metadata.resource_version, grace
        assert again.metadata.deletion_timestamp == first.metadata.deletion_timestamp, grace

    # Shorter: deletionTimestamp moves to (first request + new grace), the pod stays.
    shorter = await core.delete_namespaced_pod("shorten", NS, grace_period_seconds=10)
    assert shorter.metadata.deletion_grace_period_seconds == 10
    assert shorter.metadata.deletion_timestamp == start + timedelta(seconds=10)
    assert shorter.metadata.generation == first.metadata.generation
    still = await core.read_namespaced_pod("shorten", NS)
    assert still.metadata.resource_version == shorter.metadata.resource_version

    # Grace 0 (what a kubelet sends once the containers are gone) removes it.
    final = await core.delete_namespaced_pod("shorten", NS, grace_period_seconds=0)
    assert final.metadata.deletion_grace_period_seconds == 0
    assert await gone(lambda: core.read_namespaced_pod("shorten", NS))


# -- S40 finalizer-blocked delete -------------------------------------------------------------------


async def test_s40_finalizer_blocked_delete_marks_the_object(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "blocked", finalizers=[HOLD])

    now = datetime.now(UTC)
    code, deleting = await delete_ars(custom, "blocked")

    assert code == 200
    meta = deleting["metadata"]
    assert near(parse_time(meta["deletionTimestamp"]), now)
    assert meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == created["metadata"]["generation"] + 1
    assert meta["finalizers"] == [HOLD]
    assert rv(deleting) > rv(created)
    events = await ars_events(custom, "blocked", created["metadata"]["resourceVersion"], lambda _t, _o: True)
    assert [(t, rv(o)) for t, o in events] == [("MODIFIED", rv(deleting))]

    # Still readable and updatable.
    assert await get_ars(custom, "blocked") == deleting
    updated = await patch_ars(
        custom, "blocked", {"spec": {"maxRunners": 9}, "metadata": {"labels": {"a": "b"}}}
    )
    assert updated["spec"]["maxRunners"] == 9
    assert updated["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]


async def test_s40_finalizer_blocked_delete_of_a_builtin_kind(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_secret(NS, {"metadata": {"name": "blocked", "finalizers": [HOLD]}})

    code, body = await raw_json(core.delete_namespaced_secret("blocked", NS, _preload_content=False))

    assert code == 200
    assert body["metadata"]["deletionGracePeriodSeconds"] == 0
    assert "generation" not in body["metadata"]
    assert int(body["metadata"]["resourceVersion"]) > int(created.metadata.resource_version)
    secret = await core.patch_namespaced_secret("blocked", NS, {"stringData": {"still": "writable"}})
    assert secret.metadata.deletion_timestamp is not None


# -- S41 no new finalizers while deleting -----------------------------------------------------------


@pytest.mark.diverges_on_real("the details of the refusal (group and kind) differ")
async def test_s41_no_new_finalizers_once_deleting(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "no-new", finalizers=[HOLD, "example.com/second"])
    await delete_ars(custom, "no-new")

    with pytest.raises(ApiException) as caught:
        await patch_ars(
            custom, "no-new", {"metadata": {"finalizers": [HOLD, "example.com/second", "example.com/x"]}}
        )

    assert caught.value.status == 422
    detail = (
        "no new finalizers can be added if the object is being deleted, "
        'found new finalizers []string{"example.com/x"}'
    )
    assert status_of(caught.value) == failure(
        422,
        "Invalid",
        f'AutoscalingRunnerSet.actions.github.com "no-new" is invalid: '
        f"metadata.finalizers: Forbidden: {detail}",
        {
            "name": "no-new",
            "group": GROUP,
            "kind": "AutoscalingRunnerSet",
            "causes": [
                {
                    "reason": "FieldValueForbidden",
                    "message": f"Forbidden: {detail}",
                    "field": "metadata.finalizers",
                }
            ],
        },
    )

    # Reordering and removing are allowed.
    reordered = await patch_ars(custom, "no-new", {"metadata": {"finalizers": ["example.com/second", HOLD]}})
    assert reordered["metadata"]["finalizers"] == ["example.com/second", HOLD]
    removed = await patch_ars(custom, "no-new", {"metadata": {"finalizers": [HOLD]}})
    assert removed["metadata"]["finalizers"] == [HOLD]


# -- S42 last finalizer removed ---------------------------------------------------------------------


async def test_s42_removing_the_last_finalizer_deletes_with_only_a_deleted_event(
    kube: client.ApiClient,
) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "last", finalizers=[HOLD])
    _code, deleting = await delete_ars(custom, "last")
    old_rv = deleting["metadata"]["resourceVersion"]

    answer = await patch_ars(custom, "last", {"metadata": {"finalizers": None}})

    # 200 with the submitted object: old resourceVersion, no finalizers.
    assert answer["metadata"]["resourceVersion"] == old_rv
    assert "finalizers" not in answer["metadata"]
    assert answer["metadata"]["deletionTimestamp"] == deleting["metadata"]["deletionTimestamp"]
    events = await ars_events(custom, "last", old_rv, lambda _t, _o: True)
    assert [t for t, _ in events] == ["DELETED"]
    last_state = events[0][1]
    assert last_state["metadata"]["finalizers"] == [HOLD]  # the last stored state
    assert rv(last_state) > int(old_rv)
    assert await gone(lambda: get_ars(custom, "last"))


async def test_s42_a_put_without_finalizers_deletes_a_builtin_object(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "last", "finalizers": [HOLD]}})
    await core.delete_namespaced_config_map("last", NS)
    deleting = await core.read_namespaced_config_map("last", NS)

    deleting.metadata.finalizers = []
    answer = await core.replace_namespaced_config_map("last", NS, deleting)

    assert answer.metadata.resource_version == deleting.metadata.resource_version
    seen = []
    async with asyncio.timeout(5), watch.Watch() as w:
        async for event in w.stream(
            core.list_namespaced_config_map,
            NS,
            field_selector="metadata.name=last",
            resource_version=deleting.metadata.resource_version,
        ):
            seen.append((event["type"], event["object"].metadata.finalizers))
            break
    assert seen == [("DELETED", [HOLD])]
    assert await gone(lambda: core.read_namespaced_config_map("last", NS))


# -- S43 deletionTimestamp immutable ----------------------------------------------------------------


async def test_s43_deletion_fields_are_cleared_on_create(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    stamp = {"deletionTimestamp": "2030-01-01T00:00:00Z", "deletionGracePeriodSeconds": 5}

    ars = await create_ars(custom, "stamped", **stamp)
    secret = await core.create_namespaced_secret(NS, {"metadata": {"name": "stamped", **stamp}})

    assert "deletionTimestamp" not in ars["metadata"]
    assert "deletionGracePeriodSeconds" not in ars["metadata"]
    assert secret.metadata.deletion_timestamp is None
    assert secret.metadata.deletion_grace_period_seconds is None


@pytest.mark.diverges_on_real(
    "kube-apiserver records the changed deletionTimestamp in managedFields (a new resourceVersion) and lists"
    " the grace period's cause twice"
)
async def test_s43_deletion_timestamp_cannot_be_removed_or_changed(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "immutable", finalizers=[HOLD])
    _code, deleting = await delete_ars(custom, "immutable")
    meta = deleting["metadata"]

    # Removing or changing either field is silently undone: the write is a no-op.
    for change in (
        {"deletionTimestamp": None},
        {"deletionTimestamp": "2001-01-01T00:00:00Z"},
        {"deletionGracePeriodSeconds": None},
    ):
        answer = await patch_ars(custom, "immutable", {"metadata": change})
        assert answer == deleting, change

    put = await custom.replace_namespaced_custom_object(
        GROUP,
        VERSION,
        NS,
        ARS,
        "immutable",
        {**deleting, "metadata": {k: v for k, v in meta.items() if not k.startswith("deletion")}},
    )
    assert put == deleting

    # A different grace period is not restored but rejected (ValidateImmutableField).
    with pytest.raises(ApiException) as caught:
        await patch_ars(custom, "immutable", {"metadata": {"deletionGracePeriodSeconds": 30}})
    assert caught.value.status == 422
    assert status_of(caught.value) == failure(
        422,
        "Invalid",
        'AutoscalingRunnerSet.actions.github.com "immutable" is invalid: '
        "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
        {
            "name": "immutable",
            "group": GROUP,
            "kind": "AutoscalingRunnerSet",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: 30: field is immutable",
                    "field": "metadata.deletionGracePeriodSeconds",
                }
            ],
        },
    )


@pytest.mark.diverges_on_real("kube-apiserver lists the cause twice and quotes the time as written")
async def test_s43_deletion_timestamp_cannot_be_set_by_an_update(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "not-deleting")

    with pytest.raises(ApiException) as caught:
        await patch_ars(custom, "not-deleting", {"metadata": {"deletionTimestamp": "2030-01-01T00:00:00Z"}})

    assert caught.value.status == 422
    status = status_of(caught.value)
    assert status["reason"] == "Invalid"
    assert status["details"]["kind"] == "AutoscalingRunnerSet"
    [cause] = status["details"]["causes"]
    assert cause["field"] == "metadata.deletionTimestamp"
    assert cause["reason"] == "FieldValueInvalid"
    assert cause["message"].endswith(": field is immutable")
    assert await get_ars(custom, "not-deleting") == created


# -- S44 ownerReferences validation -----------------------------------------------------------------


OWNER = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "name": "owner",
    "uid": "6f0e6bde-0000-4000-8000-000000000001",
}


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("apiVersion", 'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty'),
        ("kind", 'metadata.ownerReferences.kind: Invalid value: "": must not be empty'),
        ("name", 'metadata.ownerReferences.name: Invalid value: "": must not be empty'),
        ("uid", 'metadata.ownerReferences.uid: Invalid value: "": must not be empty'),
    ],
)
async def test_s44_owner_reference_fields_are_required(
    kube: client.ApiClient, missing: str, message: str
) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    ref = {k: v for k, v in OWNER.items() if k != missing}
    field, _sep, body = message.partition(": ")

    with pytest.raises(ApiException) as ars:
        await create_ars(custom, "owned", ownerReferences=[ref])
    with pytest.raises(ApiException) as cm:
        await core.create_namespaced_config_map(NS, {"metadata": {"name": "owned", "ownerReferences": [ref]}})

    assert status_of(ars.value) == failure(
        422,
        "Invalid",
        f'AutoscalingRunnerSet.actions.github.com "owned" is invalid: {message}',
        {
            "name": "owned",
            "group": GROUP,
            "kind": "AutoscalingRunnerSet",
            "causes": [{"reason": "FieldValueInvalid", "message": body, "field": field}],
        },
    )
    assert status_of(cm.value) == failure(
        422,
        "Invalid",
        f'ConfigMap "owned" is invalid: {message}',
        {
            "name": "owned",
            "kind": "ConfigMap",
            "causes": [{"reason": "FieldValueInvalid", "message": body, "field": field}],
        },
    )


async def test_s44_at_most_one_controller_and_no_event_owners(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    second = {**OWNER, "name": "other", "uid": "6f0e6bde-0000-4000-8000-000000000002"}
    event_owner = {
        "apiVersion": "v1",
        "kind": "Event",
        "name": "ev",
        "uid": "6f0e6bde-0000-4000-8000-000000000003",
    }

    with pytest.raises(ApiException) as controllers:
        await create_ars(
            custom,
            "two-controllers",
            ownerReferences=[{**OWNER, "controller": True}, {**second, "controller": True}],
        )
    with pytest.raises(ApiException) as event:
        await core.create_namespaced_config_map(
            NS, {"metadata": {"name": "event-owned", "ownerReferences": [event_owner]}}
        )

    status = status_of(controllers.value)
    assert (status["code"], status["reason"]) == (422, "Invalid")
    [cause] = status["details"]["causes"]
    assert cause["field"] == "metadata.ownerReferences"
    assert cause["message"].endswith(
        'Only one reference can have Controller set to true. Found "true" in references for '
        "ConfigMap/owner and ConfigMap/other"
    )
    status = status_of(event.value)
    assert (status["code"], status["reason"]) == (422, "Invalid")
    [cause] = status["details"]["causes"]
    assert cause["field"] == "metadata.ownerReferences"
    assert cause["message"].endswith("/v1, Kind=Event is disallowed from being an owner")
    # One controller is fine.
    created = await create_ars(
        custom, "one-controller", ownerReferences=[{**OWNER, "controller": True}, second]
    )
    assert len(created["metadata"]["ownerReferences"]) == 2


async def test_s44_duplicate_owner_references_are_deduplicated_with_a_warning(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    uid = OWNER["uid"]
    # The owner is made up, so the garbage collector deletes these dependents: finalizers keep them.
    on_create = (
        ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, "
        "and may reject such requests as early as 1.24; please fix your requests; "
        f"duplicate UID(s) observed: {uid}"
    )
    on_patch = (
        ".metadata.ownerReferences contains duplicate entries after mutating admission happens; "
        "API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; "
        f"please fix your requests; duplicate UID(s) observed: {uid}"
    )

    created, code, headers = await custom.create_namespaced_custom_object_with_http_info(
        GROUP, VERSION, NS, ARS, ars_body("dup", finalizers=[HOLD], ownerReferences=[OWNER, OWNER])
    )
    assert code == 201
    assert created["metadata"]["ownerReferences"] == [OWNER]
    assert f'299 - "{on_create}"' in headers.getall("Warning", [])

    patched, code, headers = await custom.patch_namespaced_custom_object_with_http_info(
        GROUP, VERSION, NS, ARS, "dup", {"metadata": {"ownerReferences": [OWNER, OWNER]}}, _content_type=MERGE
    )
    assert code == 200
    assert patched["metadata"]["ownerReferences"] == [OWNER]
    assert f'299 - "{on_patch}"' in headers.getall("Warning", [])

    await core.create_namespaced_config_map(NS, {"metadata": {"name": "dup-cm", "finalizers": [HOLD]}})
    cm, code, headers = await core.patch_namespaced_config_map_with_http_info(
        "dup-cm", NS, {"metadata": {"ownerReferences": [OWNER, OWNER]}}, _content_type=MERGE
    )
    assert code == 200
    assert [r.uid for r in cm.metadata.owner_references] == [uid]
    assert f'299 - "{on_patch}"' in headers.getall("Warning", [])
