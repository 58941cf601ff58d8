"""Emulator conformance, lists and updates (apiserver-semantics.md S14-S21): list shape and
resourceVersion, label and field selectors, pagination, list resourceVersion options, optimistic
concurrency on PUT, unconditional PUT and PUT to a missing object.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Requests go over HTTP through
kubernetes_asyncio's typed APIs, or aiohttp against ``world.url`` where the wire body matters (typed list
models hide whether items carry ``apiVersion``/``kind``). Tests named ``test_sNN_*`` assert what a real
kube-apiserver (1.34/1.35) with the project's CRDs answers; tests named ``test_hook_*`` use the emulator's
compaction hook to reach what a real cluster does after its periodic etcd compaction. Lists of built-in
kinds are scoped by a label of the test, so objects a real cluster creates on its own never interfere.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.conformance import (
    ARS,
    GROUP,
    MERGE,
    NS,
    VERSION,
    api_error,
    ars,
    default_sa_ready,
    failure,
    raw,
    rv,
    status_body,
)

pytestmark = pytest.mark.both_worlds(on_demand=True)

ARS_ALL = f"/apis/{GROUP}/{VERSION}/{ARS}"
ARS_PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{ARS}"
SECRETS_PATH = f"/api/v1/namespaces/{NS}/secrets"
STALE = "the object has been modified; please apply your changes to the latest version and try again"
TOO_OLD = "The provided continue parameter is too old to display a consistent list result."


# -- helpers ------------------------------------------------------------------------------------------


def pod(name: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def names(listed: dict[str, Any]) -> list[str]:
    return [i["metadata"]["name"] for i in listed["items"]]


# -- S14 list shape and resourceVersion ---------------------------------------------------------------------


async def test_s14_custom_resource_list_shape_order_and_rv(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    created = [
        await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s14-b")),
        await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s14-a")),
        await crs.create_namespaced_custom_object(GROUP, VERSION, "arc-systems", ARS, ars("s14-c")),
    ]
    status, listed = await raw(world, "GET", ARS_ALL)
    assert status == 200
    assert (listed["kind"], listed["apiVersion"]) == ("AutoscalingRunnerSetList", f"{GROUP}/{VERSION}")
    # Unstructured: the empty continue is written out (a built-in list leaves it out).
    assert set(listed["metadata"]) == {"resourceVersion", "continue"} and listed["metadata"]["continue"] == ""
    # Ordered by namespace, then name; custom resource items keep apiVersion and kind.
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]] == [
        ("arc-systems", "s14-c"),
        (NS, "s14-a"),
        (NS, "s14-b"),
    ]
    for item in listed["items"]:
        assert (item["apiVersion"], item["kind"]) == (f"{GROUP}/{VERSION}", "AutoscalingRunnerSet")
    assert rv(listed) >= max(rv(o) for o in created)

    # The list RV is the store's revision, which writes to other types move too.
    secret = await core.create_namespaced_secret(NS, {"metadata": {"name": "s14"}})
    again = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS)
    assert rv(again) >= rv(secret)
    assert names(again) == ["s14-a", "s14-b"]


async def test_s14_builtin_list_items_omit_type_fields(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    for name in ("s14-y", "s14-x"):
        await core.create_namespaced_secret(NS, {"metadata": {"name": name, "labels": {"test": "s14"}}})
    status, listed = await raw(world, "GET", SECRETS_PATH, labelSelector="test=s14")
    assert status == 200
    assert (listed["kind"], listed["apiVersion"]) == ("SecretList", "v1")
    assert names(listed) == ["s14-x", "s14-y"]
    for item in listed["items"]:
        assert "kind" not in item
        assert "apiVersion" not in item
    typed = await core.list_namespaced_secret(NS, label_selector="test=s14")
    assert [s.metadata.name for s in typed.items] == ["s14-x", "s14-y"]
    assert typed.metadata.resource_version.isdigit()


async def test_s14_empty_lists_have_an_empty_items_array(world: World) -> None:
    for path in (ARS_PATH, SECRETS_PATH, f"/apis/{GROUP}/{VERSION}/namespaces/arc-systems/ephemeralrunners"):
        status, listed = await raw(world, "GET", path, labelSelector="test=s14-nothing")
        assert status == 200
        assert listed["items"] == []
        assert listed["metadata"]["resourceVersion"].isdigit()


# -- S15 label selectors ---------------------------------------------------------------------------------


S15_OBJECTS = {
    "s15-a": {"app": "web", "tier": "front", "n": "5"},
    "s15-b": {"app": "web", "tier": "back", "n": "10"},
    "s15-c": {"app": "db"},
    "s15-d": {},
}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["s15-a", "s15-b"]),
        ("app==web", ["s15-a", "s15-b"]),
        ("app!=web", ["s15-c", "s15-d"]),
        ("tier in (front,back)", ["s15-a", "s15-b"]),
        ("tier in (front)", ["s15-a"]),
        ("tier notin (front)", ["s15-b", "s15-c", "s15-d"]),
        ("tier", ["s15-a", "s15-b"]),
        ("!tier", ["s15-c", "s15-d"]),
        ("app=web,tier=back", ["s15-b"]),
        ("app in (web,db),!tier", ["s15-c"]),
        ("n>6", ["s15-b"]),
        ("n<6", ["s15-a"]),
        (" app = web , tier != back ", ["s15-a"]),
        ("", ["s15-a", "s15-b", "s15-c", "s15-d"]),
    ],
)
async def test_s15_label_selector_operators(
    world: World, kube: client.ApiClient, selector: str, expected: list[str]
) -> None:
    crs = client.CustomObjectsApi(kube)
    for name, labels in S15_OBJECTS.items():
        await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars(name, labels=labels))
    listed = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, label_selector=selector)
    assert names(listed) == expected


async def test_s15_label_selector_on_builtins(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    for name, labels in S15_OBJECTS.items():
        await core.create_namespaced_secret(
            NS, {"metadata": {"name": name, "labels": {"test": "s15", **labels}}}
        )
    listed = await core.list_namespaced_secret(NS, label_selector="test=s15,tier notin (back)")
    assert [s.metadata.name for s in listed.items] == ["s15-a", "s15-c", "s15-d"]


@pytest.mark.parametrize("selector", ["app in (web", "a=b=c", "n>x", "=web", "app in web", "a!"])
async def test_s15_label_selector_parse_errors_are_400(
    world: World, kube: client.ApiClient, selector: str
) -> None:
    crs = client.CustomObjectsApi(kube)
    exc = await api_error(crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, label_selector=selector))
    assert exc.status == 400
    body = status_body(exc)
    assert (body["kind"], body["status"], body["reason"], body["code"]) == (
        "Status",
        "Failure",
        "BadRequest",
        400,
    )


# -- S16 field selectors ---------------------------------------------------------------------------------


async def test_s16_custom_resources_select_by_name_and_namespace_only(
    world: World, kube: client.ApiClient
) -> None:
    crs = client.CustomObjectsApi(kube)
    for namespace, name in ((NS, "s16-a"), (NS, "s16-b"), ("arc-systems", "s16-a")):
        await crs.create_namespaced_custom_object(GROUP, VERSION, namespace, ARS, ars(name))
    by_name = await crs.list_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, field_selector="metadata.name=s16-a"
    )
    assert names(by_name) == ["s16-a"]
    not_name = await crs.list_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, field_selector="metadata.name!=s16-a"
    )
    assert names(not_name) == ["s16-b"]
    everywhere = await crs.list_cluster_custom_object(
        GROUP, VERSION, ARS, field_selector="metadata.namespace==arc-systems"
    )
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in everywhere["items"]] == [
        ("arc-systems", "s16-a")
    ]
    both = await crs.list_cluster_custom_object(
        GROUP, VERSION, ARS, field_selector="metadata.name=s16-a,metadata.namespace!=arc-systems"
    )
    assert [i["metadata"]["namespace"] for i in both["items"]] == [NS]

    for field in ("spec.githubConfigUrl", "status.phase", "metadata.uid"):
        exc = await api_error(
            crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, field_selector=f"{field}=x")
        )
        assert exc.status == 400
        assert status_body(exc) == failure(400, "BadRequest", f"field label not supported: {field}")


async def test_s16_pod_fields(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    labels = {"test": "s16"}
    # Pods for schedulers nobody runs: they stay unbound and Pending, on the emulator as on a cluster.
    await core.create_namespaced_pod(
        NS, pod("s16-never", labels, restartPolicy="Never", schedulerName="s16-a")
    )
    await core.create_namespaced_pod(NS, pod("s16-always", labels, schedulerName="s16-b"))

    async def select(fields: str) -> list[str]:
        listed = await core.list_namespaced_pod(NS, label_selector="test=s16", field_selector=fields)
        return [p.metadata.name for p in listed.items]

    assert await select("spec.restartPolicy=Never") == ["s16-never"]
    assert await select("spec.restartPolicy!=Never") == ["s16-always"]
    assert await select("spec.schedulerName==s16-b") == ["s16-always"]
    assert await select("spec.serviceAccountName=default") == ["s16-always", "s16-never"]
    assert await select("spec.nodeName=") == ["s16-always", "s16-never"]
    assert await select("spec.hostNetwork=false") == ["s16-always", "s16-never"]
    assert await select("status.phase=Pending") == ["s16-always", "s16-never"]
    assert await select("status.podIP=") == ["s16-always", "s16-never"]
    assert await select("status.nominatedNodeName=") == ["s16-always", "s16-never"]
    assert await select("metadata.name=s16-never,spec.restartPolicy=Always") == []
    exc = await api_error(core.list_namespaced_pod(NS, field_selector="spec.containers=x"))
    assert exc.status == 400
    assert status_body(exc) == failure(400, "BadRequest", "field label not supported: spec.containers")


async def test_s16_secret_and_event_fields(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    labels = {"test": "s16"}
    await core.create_namespaced_secret(NS, {"metadata": {"name": "s16-opaque", "labels": labels}})
    await core.create_namespaced_secret(
        NS, {"metadata": {"name": "s16-custom", "labels": labels}, "type": "example.com/custom"}
    )
    listed = await core.list_namespaced_secret(NS, label_selector="test=s16", field_selector="type=Opaque")
    assert [s.metadata.name for s in listed.items] == ["s16-opaque"]
    listed = await core.list_namespaced_secret(NS, label_selector="test=s16", field_selector="type!=Opaque")
    assert [s.metadata.name for s in listed.items] == ["s16-custom"]
    exc = await api_error(core.list_namespaced_secret(NS, field_selector="data=x"))
    assert status_body(exc) == failure(400, "BadRequest", "field label not supported: data")

    for name, involved, reason, kind in (
        ("s16-e1", "s16-runner", "Started", "Normal"),
        ("s16-e2", "s16-other", "Failed", "Warning"),
    ):
        await core.create_namespaced_event(
            NS,
            {
                "metadata": {"name": name, "labels": labels},
                "involvedObject": {
                    "kind": "Pod",
                    "namespace": NS,
                    "name": involved,
                    "uid": f"uid-{involved}",
                },
                "reason": reason,
                "message": name,
                "type": kind,
                "source": {"component": "s16-controller"},
            },
        )

    async def events(fields: str) -> list[str]:
        listed = await core.list_namespaced_event(NS, label_selector="test=s16", field_selector=fields)
        return [e.metadata.name for e in listed.items]

    assert await events("involvedObject.name=s16-runner") == ["s16-e1"]
    assert await events("involvedObject.kind=Pod,involvedObject.uid=uid-s16-other") == ["s16-e2"]
    assert await events("reason=Failed") == ["s16-e2"]
    assert await events("type=Warning") == ["s16-e2"]
    assert await events("source=s16-controller") == ["s16-e1", "s16-e2"]
    assert await events("involvedObject.namespace=default,type!=Warning") == ["s16-e1"]


@pytest.mark.parametrize("selector", ["metadata.name in (a)", "metadata.name", "metadata.name<a"])
async def test_s16_only_equality_operators(world: World, kube: client.ApiClient, selector: str) -> None:
    crs = client.CustomObjectsApi(kube)
    exc = await api_error(crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, field_selector=selector))
    assert exc.status == 400
    assert status_body(exc)["reason"] == "BadRequest"


# -- S17 pagination ---------------------------------------------------------------------------------------


async def test_s17_pages_share_the_first_pages_snapshot(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    for i in range(5):
        await crs.create_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, ars(f"s17-{i}", labels={"test": "s17"})
        )

    first = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, limit=2)
    assert names(first) == ["s17-0", "s17-1"]
    token = first["metadata"]["continue"]
    assert token
    assert first["metadata"]["remainingItemCount"] == 3
    snapshot = first["metadata"]["resourceVersion"]

    # Changes after the first page do not show up in the later ones.
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s17-9"))
    await crs.delete_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s17-3")
    await crs.patch_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, "s17-2", {"metadata": {"labels": {"late": "yes"}}}, _content_type=MERGE
    )

    second = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, limit=2, _continue=token)
    assert names(second) == ["s17-2", "s17-3"]
    assert "late" not in second["items"][0]["metadata"]["labels"]
    assert second["metadata"]["resourceVersion"] == snapshot
    assert second["metadata"]["remainingItemCount"] == 1
    third = await crs.list_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, limit=2, _continue=second["metadata"]["continue"]
    )
    assert names(third) == ["s17-4"]
    assert third["metadata"] == {"resourceVersion": snapshot, "continue": ""}

    # A fresh list sees the changes.
    fresh = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS)
    assert names(fresh) == ["s17-0", "s17-1", "s17-2", "s17-4", "s17-9"]


async def test_s17_limit_with_a_selector_has_no_remaining_count(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    for i in range(4):
        await crs.create_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, ars(f"s17-{i}", labels={"test": "s17"})
        )
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = await crs.list_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, label_selector="test=s17", limit=3, _continue=token
        )
        pages += 1
        seen += names(page)
        assert "remainingItemCount" not in page["metadata"]
        token = page["metadata"].get("continue", "")
        if not token:
            break
    assert seen == ["s17-0", "s17-1", "s17-2", "s17-3"]
    assert pages == 2
    # A limit at least the size of the list answers everything with no continue.
    whole = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, limit=4)
    assert whole["metadata"]["continue"] == "" and "remainingItemCount" not in whole["metadata"]
    assert len(whole["items"]) == 4


@pytest.mark.diverges_on_real(
    "resourceVersion=0 with a continue token: kube-apiserver's cache answers the rest, past the limit"
)
async def test_s17_continue_with_a_resource_version_is_400(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    for i in range(3):
        await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars(f"s17-{i}"))
    first = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, limit=1)
    token = first["metadata"]["continue"]
    exc = await api_error(
        crs.list_namespaced_custom_object(
            GROUP,
            VERSION,
            NS,
            ARS,
            limit=1,
            _continue=token,
            resource_version=first["metadata"]["resourceVersion"],
        )
    )
    assert exc.status == 400
    assert status_body(exc) == failure(
        400, "BadRequest", "specifying resource version is not allowed when using continue"
    )
    # resourceVersion=0 is allowed alongside a continue token.
    page = await crs.list_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, limit=1, _continue=token, resource_version="0"
    )
    assert names(page) == ["s17-1"]


@pytest.mark.emulator_only("compacts the emulator's history on demand")
async def test_hook_s17_compacted_continue_token_is_410_expired(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    for i in range(3):
        await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars(f"s17-{i}"))
    first = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, limit=1)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s17-late"))
    world.compact()  # what etcd's periodic compaction does on a cluster
    exc = await api_error(
        crs.list_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, limit=1, _continue=first["metadata"]["continue"]
        )
    )
    assert exc.status == 410
    body = status_body(exc)
    assert (body["kind"], body["status"], body["reason"], body["code"]) == (
        "Status",
        "Failure",
        "Expired",
        410,
    )
    assert body["message"].startswith(TOO_OLD)


# -- S18 list resourceVersion options ------------------------------------------------------------------------


async def test_s18_resource_version_semantics(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s18-a"))
    before = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS)
    at = before["metadata"]["resourceVersion"]
    late = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s18-b"))

    # Unset: the latest state, consistently.
    latest = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS)
    assert names(latest) == ["s18-a", "s18-b"]
    assert rv(latest) >= rv(late)
    # "0": any state the server has (served from its cache, possibly stale).
    any_state = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, resource_version="0")
    assert any_state["kind"] == "AutoscalingRunnerSetList"
    assert set(names(any_state)) <= {"s18-a", "s18-b"}
    # N: not older than N (explicitly or by default).
    for options in ({}, {"resource_version_match": "NotOlderThan"}):
        newer = await crs.list_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, resource_version=at, **options
        )
        assert rv(newer) >= int(at)
        assert "s18-a" in names(newer)
    # Exact: the snapshot at N.
    exact = await crs.list_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, resource_version=at, resource_version_match="Exact"
    )
    assert exact["metadata"]["resourceVersion"] == at
    assert names(exact) == ["s18-a"]


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        (
            {"resourceVersionMatch": "NotOlderThan"},
            [("FieldValueForbidden", "resourceVersionMatch is forbidden unless resourceVersion is provided")],
        ),
        (
            {"resourceVersionMatch": "Exact", "resourceVersion": "0"},
            [("FieldValueForbidden", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')],
        ),
        (
            {"resourceVersionMatch": "Newest", "resourceVersion": "1"},
            [
                (
                    "FieldValueNotSupported",
                    'Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
                )
            ],
        ),
        (
            {"sendInitialEvents": "true"},
            [("FieldValueForbidden", "sendInitialEvents is forbidden for list")],
        ),
        (
            {"resourceVersionMatch": "Exact"},
            [("FieldValueForbidden", "resourceVersionMatch is forbidden unless resourceVersion is provided")],
        ),
    ],
)
async def test_s18_invalid_list_option_combinations_are_422(
    world: World, params: dict[str, str], errors: list[tuple[str, str]]
) -> None:
    def body_of(reason: str, text: str) -> str:
        return text if reason == "FieldValueNotSupported" else f"Forbidden: {text}"

    field = "sendInitialEvents" if "sendInitialEvents" in params else "resourceVersionMatch"
    causes = [{"reason": r, "message": body_of(r, t), "field": field} for r, t in errors]
    joined = ", ".join(f"{field}: {c['message']}" for c in causes)
    for path in (ARS_PATH, SECRETS_PATH):
        status, body = await raw(world, "GET", path, **params)
        assert status == 422, path
        assert body == failure(
            422,
            "Invalid",
            f'ListOptions.meta.k8s.io "" is invalid: {joined}',
            {"group": "meta.k8s.io", "kind": "ListOptions", "causes": causes},
        )


async def test_s18_resource_version_match_with_continue_is_422(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    for i in range(2):
        await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars(f"s18-{i}"))
    first = await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS, limit=1)
    status, body = await raw(
        world,
        "GET",
        ARS_PATH,
        limit="1",
        resourceVersion="0",
        resourceVersionMatch="NotOlderThan",
        **{"continue": first["metadata"]["continue"]},
    )
    assert status == 422
    text = "resourceVersionMatch is forbidden when continue is provided"
    assert body == failure(
        422,
        "Invalid",
        f'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: {text}',
        {
            "group": "meta.k8s.io",
            "kind": "ListOptions",
            "causes": [
                {
                    "reason": "FieldValueForbidden",
                    "message": f"Forbidden: {text}",
                    "field": "resourceVersionMatch",
                }
            ],
        },
    )


@pytest.mark.emulator_only("compacts the emulator's history on demand")
async def test_hook_s18_exact_list_of_a_compacted_revision_is_410(
    world: World, kube: client.ApiClient
) -> None:
    crs = client.CustomObjectsApi(kube)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s18-a"))
    at = (await crs.list_namespaced_custom_object(GROUP, VERSION, NS, ARS))["metadata"]["resourceVersion"]
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s18-b"))
    world.compact()  # what etcd's periodic compaction does on a cluster
    exc = await api_error(
        crs.list_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, resource_version=at, resource_version_match="Exact"
        )
    )
    assert exc.status == 410
    body = status_body(exc)
    assert (body["reason"], body["code"]) == ("Expired", 410)
    assert body["message"].startswith("The resourceVersion for the provided list is too old.")


# -- S19 optimistic concurrency on PUT -----------------------------------------------------------------------


async def test_s19_put_with_the_current_rv_succeeds_and_a_stale_one_conflicts(
    world: World, kube: client.ApiClient
) -> None:
    crs = client.CustomObjectsApi(kube)
    created = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s19"))
    changed = {**created, "spec": {**created["spec"], "minRunners": 1}}
    updated, status, _ = await crs.replace_namespaced_custom_object_with_http_info(
        GROUP, VERSION, NS, ARS, "s19", changed
    )
    assert status == 200
    assert updated["spec"]["minRunners"] == 1
    assert rv(updated) > rv(created)
    assert isinstance(updated["metadata"]["resourceVersion"], str)

    stale = {**created, "spec": {**created["spec"], "minRunners": 2}}
    exc = await api_error(crs.replace_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s19", stale))
    assert exc.status == 409
    assert status_body(exc) == failure(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {ARS}.{GROUP} "s19": {STALE}',
        {"name": "s19", "group": GROUP, "kind": ARS},
    )
    assert (await crs.get_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s19"))["spec"]["minRunners"] == 1


async def test_s19_builtin_puts_check_the_rv_too(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    coordination = client.CoordinationV1Api(kube)

    lease = await coordination.create_namespaced_lease(
        NS, {"metadata": {"name": "s19"}, "spec": {"holderIdentity": "a"}}
    )
    lease.spec.holder_identity = "b"
    renewed = await coordination.replace_namespaced_lease("s19", NS, lease)
    assert renewed.spec.holder_identity == "b"
    lease.spec.holder_identity = "c"  # still the RV the first replace consumed
    exc = await api_error(coordination.replace_namespaced_lease("s19", NS, lease))
    assert exc.status == 409
    assert status_body(exc) == failure(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on leases.coordination.k8s.io "s19": {STALE}',
        {"name": "s19", "group": "coordination.k8s.io", "kind": "leases"},
    )

    secret = await core.create_namespaced_secret(NS, {"metadata": {"name": "s19"}, "stringData": {"k": "1"}})
    await core.patch_namespaced_secret("s19", NS, {"metadata": {"labels": {"x": "y"}}})
    exc = await api_error(core.replace_namespaced_secret("s19", NS, secret))
    assert exc.status == 409
    assert status_body(exc)["message"] == f'Operation cannot be fulfilled on secrets "s19": {STALE}'


async def test_s19_put_with_another_uid_conflicts(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    created = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s19-uid"))
    other_uid = "00000000-0000-4000-8000-000000000000"
    body = {**created, "metadata": {**created["metadata"], "uid": other_uid}}
    exc = await api_error(crs.replace_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s19-uid", body))
    assert exc.status == 409
    status = status_body(exc)
    assert status["reason"] == "Conflict"
    assert status["details"] == {"name": "s19-uid", "group": GROUP, "kind": ARS}
    assert status["message"].startswith(f'Operation cannot be fulfilled on {ARS}.{GROUP} "s19-uid": ')
    uid = created["metadata"]["uid"]
    assert (
        f"Precondition failed: UID in precondition: {other_uid}, UID in object meta: {uid}"
        in status["message"]
    )

    # Unconditional (no RV) built-in PUTs still honour a uid.
    await core.create_namespaced_secret(NS, {"metadata": {"name": "s19-uid"}})
    exc = await api_error(
        core.replace_namespaced_secret("s19-uid", NS, {"metadata": {"name": "s19-uid", "uid": other_uid}})
    )
    assert exc.status == 409
    assert "Precondition failed: UID in precondition" in status_body(exc)["message"]


# -- S20 unconditional PUT -----------------------------------------------------------------------------------


def rv_required(plural: str, group: str, name: str) -> dict[str, Any]:
    qualified = f"{plural}.{group}"
    message = "Invalid value: 0: must be specified for an update"
    return failure(
        422,
        "Invalid",
        f'{qualified} "{name}" is invalid: metadata.resourceVersion: {message}',
        {
            "name": name,
            "group": group,
            "kind": plural,
            "causes": [
                {"reason": "FieldValueInvalid", "message": message, "field": "metadata.resourceVersion"}
            ],
        },
    )


async def test_s20_custom_resources_and_leases_need_a_resource_version(
    world: World, kube: client.ApiClient
) -> None:
    crs = client.CustomObjectsApi(kube)
    coordination = client.CoordinationV1Api(kube)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s20"))
    exc = await api_error(crs.replace_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s20", ars("s20")))
    assert exc.status == 422
    assert status_body(exc) == rv_required(ARS, GROUP, "s20")
    # The status subresource is an update of the same store.
    exc = await api_error(
        crs.replace_namespaced_custom_object_status(GROUP, VERSION, NS, ARS, "s20", ars("s20"))
    )
    assert exc.status == 422
    assert status_body(exc) == rv_required(ARS, GROUP, "s20")

    await coordination.create_namespaced_lease(
        NS, {"metadata": {"name": "s20"}, "spec": {"holderIdentity": "a"}}
    )
    exc = await api_error(
        coordination.replace_namespaced_lease(
            "s20", NS, {"metadata": {"name": "s20"}, "spec": {"holderIdentity": "b"}}
        )
    )
    assert exc.status == 422
    assert status_body(exc) == rv_required("leases", "coordination.k8s.io", "s20")
    assert (await coordination.read_namespaced_lease("s20", NS)).spec.holder_identity == "a"


async def test_s20_pods_and_secrets_accept_a_put_without_rv(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)

    # Last writer wins: two writers from the same read, neither sending an RV.
    await core.create_namespaced_secret(NS, {"metadata": {"name": "s20"}, "stringData": {"k": "0"}})
    first = await core.replace_namespaced_secret(
        "s20", NS, {"metadata": {"name": "s20"}, "stringData": {"k": "1"}}
    )
    second = await core.replace_namespaced_secret(
        "s20", NS, {"metadata": {"name": "s20"}, "stringData": {"k": "2"}}
    )
    assert rv(second) > rv(first)
    assert (await core.read_namespaced_secret("s20", NS)).data == {"k": "Mg=="}

    # A pod nobody schedules keeps its spec, so the PUT below is a valid pod update.
    await core.create_namespaced_pod(NS, pod("s20", {"test": "s20"}, schedulerName="s20-manual"))
    status, current = await raw(world, "GET", f"/api/v1/namespaces/{NS}/pods/s20")
    assert status == 200
    del current["metadata"]["resourceVersion"]
    current["metadata"]["labels"] = {"test": "s20", "put": "unconditional"}
    replaced = await core.replace_namespaced_pod("s20", NS, current)
    assert replaced.metadata.labels == {"test": "s20", "put": "unconditional"}


async def test_s20_other_builtins_accept_a_put_without_rv(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    rbac = client.RbacAuthorizationV1Api(kube)
    await core.create_namespaced_service_account(NS, {"metadata": {"name": "s20"}})
    sa = await core.replace_namespaced_service_account(
        "s20", NS, {"metadata": {"name": "s20", "labels": {"put": "yes"}}}
    )
    assert sa.metadata.labels == {"put": "yes"}

    await rbac.create_namespaced_role(NS, {"metadata": {"name": "s20"}, "rules": []})
    rule = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
    role = await rbac.replace_namespaced_role("s20", NS, {"metadata": {"name": "s20"}, "rules": [rule]})
    assert role.rules[0].verbs == ["get"]

    binding = {
        "metadata": {"name": "s20"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "s20"},
        "subjects": [{"kind": "ServiceAccount", "name": "s20", "namespace": NS}],
    }
    await rbac.create_namespaced_role_binding(NS, binding)
    binding["metadata"]["labels"] = {"put": "yes"}
    replaced = await rbac.replace_namespaced_role_binding("s20", NS, binding)
    assert replaced.metadata.labels == {"put": "yes"}

    event = {
        "metadata": {"name": "s20"},
        "involvedObject": {"kind": "Pod", "namespace": NS, "name": "s20"},
        "reason": "Tested",
        "message": "first",
        "type": "Normal",
    }
    await core.create_namespaced_event(NS, event)
    replaced_event = await core.replace_namespaced_event("s20", NS, {**event, "message": "second"})
    assert replaced_event.message == "second"


# -- S21 PUT to a missing object -----------------------------------------------------------------------------


async def test_s21_put_to_a_missing_object_is_404_for_most_kinds(
    world: World, kube: client.ApiClient
) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    body = ars("s21")
    body["metadata"]["resourceVersion"] = "1"
    exc = await api_error(crs.replace_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s21", body))
    assert exc.status == 404
    assert status_body(exc) == failure(
        404, "NotFound", f'{ARS}.{GROUP} "s21" not found', {"name": "s21", "group": GROUP, "kind": ARS}
    )
    exc = await api_error(crs.replace_namespaced_custom_object_status(GROUP, VERSION, NS, ARS, "s21", body))
    assert exc.status == 404

    for replace, plural, obj in (
        (core.replace_namespaced_pod, "pods", pod("s21", {"test": "s21"})),
        (core.replace_namespaced_secret, "secrets", {"metadata": {"name": "s21"}}),
        (core.replace_namespaced_service_account, "serviceaccounts", {"metadata": {"name": "s21"}}),
    ):
        exc = await api_error(replace("s21", NS, obj))
        assert exc.status == 404, plural
        assert status_body(exc) == failure(
            404, "NotFound", f'{plural} "s21" not found', {"name": "s21", "kind": plural}
        )


async def test_s21_put_creates_leases_roles_bindings_and_events(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    rbac = client.RbacAuthorizationV1Api(kube)
    coordination = client.CoordinationV1Api(kube)

    lease, status, _ = await coordination.replace_namespaced_lease_with_http_info(
        "s21", NS, {"metadata": {"name": "s21"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}
    )
    assert status == 201
    assert (lease.metadata.name, lease.spec.holder_identity) == ("s21", "me")
    assert lease.metadata.uid
    assert (await coordination.read_namespaced_lease("s21", NS)).metadata.uid == lease.metadata.uid

    role, status, _ = await rbac.replace_namespaced_role_with_http_info(
        "s21", NS, {"metadata": {"name": "s21"}, "rules": []}
    )
    assert (status, role.metadata.name) == (201, "s21")
    binding = {
        "metadata": {"name": "s21"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "s21"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": NS}],
    }
    created_binding, status, _ = await rbac.replace_namespaced_role_binding_with_http_info("s21", NS, binding)
    assert (status, created_binding.role_ref.name) == (201, "s21")

    event = {
        "metadata": {"name": "s21"},
        "involvedObject": {"kind": "Pod", "namespace": NS, "name": "s21"},
        "reason": "Tested",
        "message": "created by PUT",
        "type": "Normal",
    }
    created_event, status, _ = await core.replace_namespaced_event_with_http_info("s21", NS, event)
    assert (status, created_event.message) == (201, "created by PUT")

    # A second PUT of the same name is an ordinary update (200).
    lease.spec.holder_identity = "you"
    _, status, _ = await coordination.replace_namespaced_lease_with_http_info("s21", NS, lease)
    assert status == 200
