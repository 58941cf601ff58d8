"""Server-side apply and ``managedFields`` (S26) through kubernetes_asyncio and raw HTTP.

Inputs: an emulated cluster (``world``), apply patches sent as ``application/apply-patch+yaml`` in YAML
(raw HTTP) or JSON (kubernetes_asyncio with ``_content_type``), and ordinary writes. Outputs: the stored
objects and their ``managedFields`` in the real encoding (``FieldsV1`` with ``f:``, ``k:``, ``v:`` and
``.``), the 409 conflict answers with kube-apiserver's message and causes, and resourceVersions that
show what was and was not written. Nothing is mocked.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
import yaml
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.conformance import MINIMAL_ARS_SPEC, NS, api_error, rv, status_body

APPLY = "application/apply-patch+yaml"
CM_PATH = f"/api/v1/namespaces/{NS}/configmaps"
DEPLOY_PATH = f"/apis/apps/v1/namespaces/{NS}/deployments"
ARS_PATH = f"/apis/actions.github.com/v1alpha1/namespaces/{NS}/autoscalingrunnersets"


async def send(
    world: World,
    method: str,
    path: str,
    body: Any,
    content_type: str = APPLY,
    *,
    user_agent: str = "sim-tests/1.0",
    **params: str,
) -> tuple[int, Any]:
    """One request; a body that is not a string is sent as YAML for an apply, else as JSON."""
    if isinstance(body, str):
        data = body
    elif content_type == APPLY:
        data = yaml.safe_dump(body)
    else:
        data = json.dumps(body)
    headers = {"Content-Type": content_type, "User-Agent": user_agent}
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, world.url + path, data=data, headers=headers, params=params) as resp,
    ):
        return resp.status, await resp.json()


def configmap(name: str, data: dict[str, str], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data}


def deployment(name: str, containers: list[dict[str, Any]], replicas: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": containers}},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def entries(obj: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """``managedFields`` by (manager, operation, subresource)."""
    out = {}
    for entry in obj["metadata"].get("managedFields") or []:
        out[(entry["manager"], entry["operation"], entry.get("subresource", ""))] = entry
    return out


def fields(obj: dict[str, Any], manager: str, operation: str = "Apply", subresource: str = "") -> Any:
    return entries(obj)[(manager, operation, subresource)]["fieldsV1"]


async def test_apply_creates_the_object_with_an_apply_entry(world: World) -> None:
    manifest = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: created\n  labels: {app: a}\n"
        "  resourceVersion: '7'\ndata:\n  k: v\n"  # cleared when an apply creates, as a PUT's is
    )
    code, created = await send(world, "PATCH", f"{CM_PATH}/created", manifest, fieldManager="alice")
    assert code == 201
    assert created["data"] == {"k": "v"} and created["metadata"]["labels"] == {"app": "a"}
    assert created["metadata"]["resourceVersion"] != "7"
    [entry] = created["metadata"]["managedFields"]
    assert entry == {
        "manager": "alice",
        "operation": "Apply",
        "apiVersion": "v1",
        "time": entry["time"],
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:k": {}}, "f:metadata": {"f:labels": {"f:app": {}}}},
    }
    code, got = await send(world, "GET", f"{CM_PATH}/created", None, "application/json")
    assert code == 200 and got == created


async def test_reapply_is_a_no_op_that_keeps_the_resource_version(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    body = configmap("same", {"a": "1"})
    first = await core.patch_namespaced_config_map(
        "same", NS, body, field_manager="alice", _content_type=APPLY
    )
    again = await core.patch_namespaced_config_map(
        "same", NS, body, field_manager="alice", _content_type=APPLY
    )
    assert rv(again) == rv(first)
    assert kube.sanitize_for_serialization(again) == kube.sanitize_for_serialization(first)


async def test_a_dropped_field_is_removed_unless_another_manager_owns_it(world: World) -> None:
    path = f"{CM_PATH}/drop"
    await send(world, "PATCH", path, configmap("drop", {"a": "1", "b": "2", "c": "3"}), fieldManager="alice")
    # bob applies b with the same value: shared ownership, no conflict.
    code, shared = await send(world, "PATCH", path, configmap("drop", {"b": "2"}), fieldManager="bob")
    assert code == 200
    assert fields(shared, "bob") == {"f:data": {"f:b": {}}}
    code, dropped = await send(world, "PATCH", path, configmap("drop", {"a": "1"}), fieldManager="alice")
    assert code == 200
    # c was alice's alone and goes; b stays, bob still owns it.
    assert dropped["data"] == {"a": "1", "b": "2"}
    assert fields(dropped, "alice") == {"f:data": {"f:a": {}}}


async def test_conflicts_name_the_managers_and_fields(world: World) -> None:
    path = f"{CM_PATH}/contested"
    await send(world, "PATCH", path, configmap("contested", {"a": "1", "b": "1"}), fieldManager="alice")
    code, _ = await send(world, "PATCH", path, {"data": {"a": "2"}}, "application/merge-patch+json")
    assert code == 200  # an update by the user agent's manager, "sim-tests", takes a over
    code, status = await send(
        world, "PATCH", path, configmap("contested", {"a": "3", "b": "3"}), fieldManager="bob"
    )
    assert code == 409
    assert status["reason"] == "Conflict"
    assert status["message"] == (
        'Apply failed with 2 conflicts: conflicts with "alice":\n- .data.b\n'
        'conflicts with "sim-tests" using v1:\n- .data.a'
    )
    assert status["details"] == {
        "causes": [
            {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".data.b"},
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "sim-tests" using v1',
                "field": ".data.a",
            },
        ]
    }
    code, one = await send(world, "PATCH", path, configmap("contested", {"b": "9"}), fieldManager="bob")
    assert code == 409
    assert one["message"] == 'Apply failed with 1 conflict: conflict with "alice": .data.b'


async def test_force_takes_ownership(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.patch_namespaced_config_map(
        "forced", NS, configmap("forced", {"a": "1", "b": "1"}), field_manager="alice", _content_type=APPLY
    )
    exc = await api_error(
        core.patch_namespaced_config_map(
            "forced", NS, configmap("forced", {"a": "2"}), field_manager="bob", _content_type=APPLY
        )
    )
    assert exc.status == 409
    assert status_body(exc)["details"]["causes"][0]["field"] == ".data.a"
    forced = await core.patch_namespaced_config_map(
        "forced", NS, configmap("forced", {"a": "2"}), field_manager="bob", force=True, _content_type=APPLY
    )
    obj = kube.sanitize_for_serialization(forced)
    assert obj["data"] == {"a": "2", "b": "1"}
    assert fields(obj, "bob") == {"f:data": {"f:a": {}}}
    assert fields(obj, "alice") == {"f:data": {"f:b": {}}}
    # alice lost a: applying without it no longer removes it.
    after = await core.patch_namespaced_config_map(
        "forced", NS, configmap("forced", {"b": "1"}), field_manager="alice", _content_type=APPLY
    )
    assert after.data == {"a": "2", "b": "1"}


async def test_two_managers_share_a_list_item(world: World) -> None:
    path = f"{DEPLOY_PATH}/web"
    app = {"name": "app", "image": "app:1"}
    side = {"name": "side", "image": "side:1"}
    code, _ = await send(world, "PATCH", path, deployment("web", [app, side]), fieldManager="alice")
    assert code == 201
    code, both = await send(world, "PATCH", path, deployment("web", [app]), fieldManager="bob")
    assert code == 200
    item = 'k:{"name":"app"}'
    assert fields(both, "bob")["f:spec"]["f:template"]["f:spec"]["f:containers"] == {
        item: {".": {}, "f:image": {}, "f:name": {}}
    }
    # alice drops app: bob still owns it, so it stays; side goes with alice's last claim on it.
    code, kept = await send(world, "PATCH", path, deployment("web", [side]), fieldManager="alice")
    assert code == 200
    names = [c["name"] for c in kept["spec"]["template"]["spec"]["containers"]]
    assert sorted(names) == ["app", "side"]
    code, gone = await send(world, "PATCH", path, deployment("web", [side]), fieldManager="bob")
    assert code == 200
    assert [c["name"] for c in gone["spec"]["template"]["spec"]["containers"]] == ["side"]
    bob = fields(gone, "bob")["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert list(bob) == ['k:{"name":"side"}']


async def test_update_entries_follow_merge_patches(kube: client.ApiClient, world: World) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_config_map(
        NS, configmap("updated", {"a": "1"}), field_manager="maker"
    )
    obj = kube.sanitize_for_serialization(created)
    assert fields(obj, "maker", "Update") == {"f:data": {".": {}, "f:a": {}}}
    assert entries(obj)[("maker", "Update", "")]["apiVersion"] == "v1"
    # No fieldManager: the manager is the user agent up to its first "/".
    code, patched = await send(
        world,
        "PATCH",
        f"{CM_PATH}/updated",
        {"data": {"a": "2", "b": "2"}},
        "application/merge-patch+json",
        user_agent="patcher/v9 (linux)",
    )
    assert code == 200
    assert fields(patched, "patcher", "Update") == {"f:data": {"f:a": {}, "f:b": {}}}
    # a moved to the patcher; maker keeps only the map it made.
    assert fields(patched, "maker", "Update") == {"f:data": {}}


async def test_apply_on_the_status_subresource(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    body = {
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "AutoscalingRunnerSet",
        "metadata": {"name": "scaled"},
        "spec": dict(MINIMAL_ARS_SPEC),
        "status": {"currentRunners": 9},
    }
    answer = await custom.patch_namespaced_custom_object(
        "actions.github.com",
        "v1alpha1",
        NS,
        "autoscalingrunnersets",
        "scaled",
        body,
        field_manager="alice",
        _content_type=APPLY,
    )
    assert answer is None  # 201: the generated client only decodes a patch's 200
    created = await custom.get_namespaced_custom_object(
        "actions.github.com", "v1alpha1", NS, "autoscalingrunnersets", "scaled"
    )
    assert "status" not in created  # the main resource ignores status
    assert "f:status" not in fields(created, "alice")
    status = {**body, "spec": {}, "status": {"currentRunners": 2}}
    applied = await custom.patch_namespaced_custom_object_status(
        "actions.github.com",
        "v1alpha1",
        NS,
        "autoscalingrunnersets",
        "scaled",
        status,
        field_manager="controller",
        _content_type=APPLY,
    )
    assert applied["status"] == {"currentRunners": 2}
    assert applied["spec"] == created["spec"]
    assert fields(applied, "controller", "Apply", "status") == {"f:status": {"f:currentRunners": {}}}
    assert rv(applied) > rv(created)
    # The main resource's status is not its to write: applying it again changes nothing.
    again = await custom.patch_namespaced_custom_object(
        "actions.github.com",
        "v1alpha1",
        NS,
        "autoscalingrunnersets",
        "scaled",
        body,
        field_manager="alice",
        _content_type=APPLY,
    )
    assert rv(again) == rv(applied)
    assert again["status"] == {"currentRunners": 2}


async def test_associative_lists_of_a_crd_schema_merge_by_their_keys(world: World) -> None:
    path = f"{ARS_PATH}/ports"

    def ars(ports: list[dict[str, Any]]) -> dict[str, Any]:
        container = {"name": "runner", "image": "runner:1", "ports": ports}
        return {
            "apiVersion": "actions.github.com/v1alpha1",
            "kind": "AutoscalingRunnerSet",
            "metadata": {"name": "ports"},
            "spec": {**MINIMAL_ARS_SPEC, "template": {"spec": {"containers": [container]}}},
        }

    await send(world, "PATCH", path, ars([{"containerPort": 80}]), fieldManager="alice")
    code, merged = await send(world, "PATCH", path, ars([{"containerPort": 90}]), fieldManager="bob")
    assert code == 200
    ports = merged["spec"]["template"]["spec"]["containers"][0]["ports"]
    assert [p["containerPort"] for p in ports] == [80, 90]
    bob = fields(merged, "bob")["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"runner"}']
    assert bob["f:ports"] == {'k:{"containerPort":90,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}


async def test_bad_apply_requests_are_refused_clearly(world: World) -> None:
    path = f"{CM_PATH}/bad"
    code, status = await send(world, "PATCH", path, configmap("bad", {}))
    assert code == 422
    assert status["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    code, status = await send(
        world, "PATCH", path, {"data": {}}, "application/merge-patch+json", force="true"
    )
    assert code == 422 and "force: Forbidden: may not be specified for non-apply patch" in status["message"]
    code, status = await send(
        world, "PATCH", path, {**configmap("bad", {}), "apiVersion": "v2"}, fieldManager="alice"
    )
    assert code == 400
    assert status["message"] == (
        "Incorrect version specified in apply patch. Specified patch version: v2, expected: v1"
    )
    code, status = await send(world, "PATCH", path, "a: [b", fieldManager="alice")
    assert code == 400 and status["message"].startswith("error decoding YAML")
    with_managed = configmap("bad", {}, managedFields=[{"manager": "x"}])
    code, status = await send(world, "PATCH", path, with_managed, fieldManager="alice")
    assert code == 400 and status["message"] == "metadata.managedFields must be nil"


async def test_managed_fields_sent_in_an_update(kube: client.ApiClient, world: World) -> None:
    path = f"{CM_PATH}/owned"
    await send(world, "PATCH", path, configmap("owned", {"a": "1"}), fieldManager="alice")
    code, live = await send(world, "GET", path, None, "application/json")
    # An empty list keeps them: a client unaware of the field cannot drop it.
    live["metadata"]["managedFields"] = []
    code, kept = await send(world, "PUT", path, live, "application/json")
    assert code == 200 and entries(kept).keys() == {("alice", "Apply", "")}
    assert rv(kept) == rv(live)
    # Entries that do not decode are ignored the same way.
    kept["metadata"]["managedFields"] = [{"manager": "x", "fieldsType": "FieldsV9", "fieldsV1": {}}]
    code, still = await send(world, "PUT", path, kept, "application/json")
    assert code == 200 and entries(still).keys() == {("alice", "Apply", "")}
    # A list holding one empty entry clears them.
    still["metadata"]["managedFields"] = [{}]
    code, cleared = await send(world, "PUT", path, still, "application/json")
    assert code == 200 and "managedFields" not in cleared["metadata"]
    # Valid entries sent are kept as sent.
    mine = {
        "manager": "restorer",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2020-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:a": {}}},
    }
    cleared["metadata"]["managedFields"] = [mine]
    code, restored = await send(world, "PUT", path, cleared, "application/json")
    assert code == 200 and restored["metadata"]["managedFields"] == [mine]


@pytest.mark.parametrize("dry_run", [False, True])
async def test_apply_dry_run_stores_nothing(world: World, dry_run: bool) -> None:
    path = f"{CM_PATH}/dry"
    params = {"dryRun": "All"} if dry_run else {}
    code, answered = await send(
        world, "PATCH", path, configmap("dry", {"a": "1"}), fieldManager="alice", **params
    )
    assert code == 201 and answered["data"] == {"a": "1"}
    code, _ = await send(world, "GET", path, None, "application/json")
    assert code == (404 if dry_run else 200)


async def test_strategic_and_json_patches_take_the_fields_they_change(world: World) -> None:
    path = f"{DEPLOY_PATH}/images"
    await send(
        world, "PATCH", path, deployment("images", [{"name": "app", "image": "app:1"}]), fieldManager="alice"
    )
    container = {"name": "app", "image": "app:2"}
    body = {"spec": {"template": {"spec": {"containers": [container]}}}}
    code, patched = await send(
        world, "PATCH", path, body, "application/strategic-merge-patch+json", fieldManager="kubectl-set"
    )
    assert code == 200
    item = 'k:{"name":"app"}'
    setter = fields(patched, "kubectl-set", "Update")["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert setter == {item: {"f:image": {}}}
    alice = fields(patched, "alice")["f:spec"]["f:template"]["f:spec"]["f:containers"][item]
    assert alice == {".": {}, "f:name": {}}
    ops = [{"op": "add", "path": "/metadata/labels", "value": {"tier": "web"}}]
    code, labelled = await send(
        world, "PATCH", path, ops, "application/json-patch+json", fieldManager="labeller"
    )
    assert code == 200
    assert fields(labelled, "labeller", "Update") == {"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}}
    # alice applies the image again: the strategic patch's manager holds it now.
    code, status = await send(
        world, "PATCH", path, deployment("images", [{"name": "app", "image": "app:1"}]), fieldManager="alice"
    )
    assert code == 409
    assert status["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-set" using apps/v1: '
        '.spec.template.spec.containers[name="app"].image'
    )


async def test_past_ten_update_managers_the_oldest_become_ancient_changes(world: World) -> None:
    path = f"{CM_PATH}/crowded"
    await send(world, "POST", CM_PATH, configmap("crowded", {}), "application/json", fieldManager="maker")
    for i in range(11):
        code, obj = await send(
            world,
            "PATCH",
            path,
            {"data": {f"k{i:02}": "v"}},
            "application/merge-patch+json",
            fieldManager=f"m{i:02}",
        )
        assert code == 200
    updaters = {m for m, op, _ in entries(obj) if op == "Update"}
    assert len(updaters) == 10
    assert "ancient-changes" in updaters
    assert {f"m{i:02}" for i in range(3, 11)} <= updaters
    ancient = fields(obj, "ancient-changes", "Update")
    assert set(ancient["f:data"]) - {"."} <= {"f:k00", "f:k01", "f:k02"}
    owned = set()
    for entry in obj["metadata"]["managedFields"]:
        owned |= set(entry["fieldsV1"].get("f:data", {})) - {"."}
    assert owned == {f"f:k{i:02}" for i in range(11)}  # nothing was lost in the merge


async def test_set_lists_merge_by_value(world: World) -> None:
    path = f"{CM_PATH}/finalized"
    await send(
        world, "PATCH", path, configmap("finalized", {}, finalizers=["example.com/a"]), fieldManager="alice"
    )
    code, both = await send(
        world, "PATCH", path, configmap("finalized", {}, finalizers=["example.com/b"]), fieldManager="bob"
    )
    assert code == 200
    assert both["metadata"]["finalizers"] == ["example.com/a", "example.com/b"]
    assert fields(both, "bob") == {"f:data": {}, "f:metadata": {"f:finalizers": {'v:"example.com/b"': {}}}}
    code, released = await send(world, "PATCH", path, configmap("finalized", {}), fieldManager="alice")
    assert code == 200
    assert released["metadata"]["finalizers"] == ["example.com/b"]


async def test_yaml_is_read_as_kube_apiserver_converts_it_to_json(world: World) -> None:
    manifest = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed\n  annotations:\n"
        "    when: 2024-01-02T03:04:05Z\n    1: one\ndata:\n  date: 2024-01-02\n"
    )
    code, created = await send(world, "PATCH", f"{CM_PATH}/typed", manifest, fieldManager="alice")
    assert code == 201, created
    assert created["metadata"]["annotations"] == {"when": "2024-01-02T03:04:05Z", "1": "one"}
    assert created["data"] == {"date": "2024-01-02"}


async def test_an_update_the_field_types_cannot_describe_still_writes(world: World) -> None:
    """A status condition without its ``type`` key is no associative-list item: the update is stored
    (what the write's own validation allows is unchanged) with its managedFields cleared, as upstream's
    UpdateNoErrors does."""
    pods = f"/api/v1/namespaces/{NS}/pods"
    pod = {
        "metadata": {"name": "keyless"},
        "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "x"}]},
    }
    code, created = await send(world, "POST", pods, pod, "application/json")
    assert code == 201 and created["metadata"]["managedFields"]
    patch = {"status": {"conditions": [{"status": "True"}]}}
    code, patched = await send(
        world, "PATCH", f"{pods}/keyless/status", patch, "application/merge-patch+json"
    )
    assert code == 200
    assert patched["status"]["conditions"] == [{"status": "True"}]
    assert "managedFields" not in patched["metadata"]


async def test_a_field_manager_kube_apiserver_refuses(world: World) -> None:
    code, status = await send(
        world, "POST", CM_PATH, configmap("named", {}), "application/json", fieldManager="a\tb"
    )
    assert code == 422
    assert status["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\tb": '
        "invalid character U+0009 (at position 1)"
    )
    code, status = await send(
        world, "PATCH", f"{CM_PATH}/named", configmap("named", {}), fieldManager="m" * 129
    )
    assert code == 422
    assert status["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes'
    )


async def test_unknown_fields_of_an_applied_built_in_under_strict_validation(world: World) -> None:
    body = {**configmap("strict", {"a": "1"}), "bogus": 1}
    code, status = await send(
        world, "PATCH", f"{CM_PATH}/strict", body, fieldManager="alice", fieldValidation="Strict"
    )
    assert code == 400
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        'strict decoding error: unknown field "bogus"'
    )
    code, created = await send(
        world, "PATCH", f"{CM_PATH}/strict", body, fieldManager="alice", fieldValidation="Ignore"
    )
    assert code == 201 and "bogus" not in created
    assert fields(created, "alice") == {"f:data": {"f:a": {}}}
