"""Deleting a CustomResourceDefinition, as kube-apiserver's CRD storage and CRD finalizer do it.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py) and a CRD of the test's own,
``widgets.example.com`` (namespaced, a status subresource), with widgets in ``default`` and in other
namespaces; kubernetes_asyncio's typed and custom-object APIs, raw HTTP where the exact Status or a watch
stream matters, and Debian's ``kubectl delete crd`` (which waits for the CRD to be gone). Outputs: a CRD
has no finalizer until its first DELETE, which answers it with ``deletionTimestamp``, the
``customresourcecleanup.apiextensions.k8s.io`` finalizer and ``Terminating`` True; its widgets are deleted
in every namespace, a widget with a finalizer of its own holds the CRD (Terminating
``InstanceDeletionInProgress``) while creating widgets is refused 405; once the last widget is gone the
CRD is, its kind is no longer served (404, not in discovery), its watches end, a re-created CRD starts
empty, and a namespace that held a widget finishes deleting.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World
from tests.e2e.sim.conformance import NS, error_status, raw
from tests.helpers import eventually
from tests.kubectl import ok, requires_kubectl

GROUP, VERSION, PLURAL = "example.com", "v1", "widgets"
CRD_NAME = f"{PLURAL}.{GROUP}"
CLEANUP = "customresourcecleanup.apiextensions.k8s.io"
HOLD = "example.com/hold"
MERGE = "application/merge-patch+json"


def widget_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}
                            },
                        }
                    },
                }
            ],
        },
    }


def widget(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Widget",
        "metadata": {"name": name, **meta},
        "spec": {"size": 1},
    }


def widgets_path(namespace: str = NS) -> str:
    return f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/{PLURAL}"


async def install(kube: client.ApiClient) -> dict[str, Any]:
    """Create the CRD and wait until it is Established; its stored form."""
    ext = client.ApiextensionsV1Api(kube)
    await ext.create_custom_resource_definition(widget_crd())

    async def established() -> dict[str, Any] | None:
        crd = await read_crd(kube)
        conditions = (crd or {}).get("status", {}).get("conditions") or []
        return crd if any(c["type"] == "Established" and c["status"] == "True" for c in conditions) else None

    return await eventually(established, what="the widget CRD Established")


async def read_crd(kube: client.ApiClient) -> dict[str, Any] | None:
    """The CRD as stored (raw JSON), or None once it is gone."""
    ext = client.ApiextensionsV1Api(kube)
    # Unread, an answer is not checked: a 404 comes back as its Status.
    async with await ext.read_custom_resource_definition(CRD_NAME, _preload_content=False) as resp:
        if resp.status == 404:
            return None
        assert resp.status == 200, await resp.text()
        body: dict[str, Any] = json.loads(await resp.read())
        return body


def terminating(crd: dict[str, Any]) -> dict[str, Any] | None:
    return next(
        (c for c in crd.get("status", {}).get("conditions") or [] if c["type"] == "Terminating"), None
    )


async def create_widget(
    kube: client.ApiClient, name: str, namespace: str = NS, **meta: Any
) -> dict[str, Any]:
    created: dict[str, Any] = await client.CustomObjectsApi(kube).create_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, widget(name, **meta)
    )
    return created


async def delete_crd(world: World, body: Any = None, **params: str) -> tuple[int, Any]:
    return await raw(
        world, "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}", body, **params
    )


async def crd_gone(kube: client.ApiClient) -> bool:
    return await read_crd(kube) is None


async def test_a_crd_has_no_finalizer_until_its_first_delete_marks_it_terminating(
    world: World, kube: client.ApiClient
) -> None:
    stored = await install(kube)
    assert "finalizers" not in stored["metadata"]
    await create_widget(kube, "held", finalizers=[HOLD])

    code, body = await delete_crd(world)

    assert code == 200
    assert body["kind"] == "CustomResourceDefinition"
    assert body["metadata"]["deletionTimestamp"]
    assert body["metadata"]["finalizers"] == [CLEANUP]
    assert body["metadata"]["generation"] == stored["metadata"]["generation"]
    assert "deletionGracePeriodSeconds" not in body["metadata"]
    condition = terminating(body)
    assert condition is not None
    assert {k: condition[k] for k in ("status", "reason", "message")} == {
        "status": "True",
        "reason": "InstanceDeletionPending",
        "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
    }


async def test_a_crd_goes_with_its_resources_in_every_namespace(world: World, kube: client.ApiClient) -> None:
    await install(kube)
    await client.CoreV1Api(kube).create_namespace({"metadata": {"name": "other"}})
    await create_widget(kube, "a")
    await create_widget(kube, "b", namespace="other")

    code, _ = await delete_crd(world)
    assert code == 200
    await eventually(lambda: crd_gone(kube), what="the widget CRD gone")

    assert not world.store.items((GROUP, PLURAL))
    code, body = await raw(world, "GET", widgets_path())
    assert (code, body) == (404, "404 page not found\n")  # the mux's answer: no such group any more
    code, _ = await raw(world, "GET", f"/apis/{GROUP}/{VERSION}")
    assert code == 404
    _, groups = await raw(world, "GET", "/apis")
    assert GROUP not in {g["name"] for g in groups["groups"]}


async def test_a_resource_with_a_finalizer_holds_its_crd_which_refuses_new_resources(
    world: World, kube: client.ApiClient
) -> None:
    await install(kube)
    await create_widget(kube, "held", finalizers=[HOLD])
    await create_widget(kube, "free")
    custom = client.CustomObjectsApi(kube)

    await delete_crd(world)

    async def in_progress() -> dict[str, Any] | None:
        crd = await read_crd(kube)
        condition = terminating(crd or {})
        return crd if condition and condition["reason"] == "InstanceDeletionInProgress" else None

    crd = await eventually(in_progress, what="the CRD deleting its widgets")
    condition = terminating(crd)
    assert condition is not None
    assert (condition["status"], condition["message"]) == ("True", "CustomResource deletion is in progress")
    assert crd["metadata"]["finalizers"] == [CLEANUP]

    async def only_held_left() -> bool:
        names = [w["metadata"]["name"] for w in world.store.items((GROUP, PLURAL))]
        return names == ["held"]

    await eventually(only_held_left, what="the free widget deleted")
    held = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "held")
    assert held["metadata"]["deletionTimestamp"]

    refused = await error_status(
        custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, widget("new"))
    )
    assert refused == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "create not allowed while custom resource definition is terminating",
        "reason": "MethodNotAllowed",
        "details": {"group": GROUP, "kind": PLURAL},
        "code": 405,
    }
    async with (
        aiohttp.ClientSession() as session,
        session.patch(
            f"{world.url}{widgets_path()}/applied",
            params={"fieldManager": "test"},
            data=json.dumps(widget("applied")),
            headers={"Content-Type": "application/apply-patch+yaml"},
        ) as resp,
    ):
        assert resp.status == 405
        assert (await resp.json())[
            "message"
        ] == "create not allowed while custom resource definition is terminating"
    assert await read_crd(kube) is not None

    # The held widget can still be updated: dropping its finalizer lets it, and then the CRD, go.
    await custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "held", {"metadata": {"finalizers": None}}, _content_type=MERGE
    )
    await eventually(lambda: crd_gone(kube), what="the widget CRD gone")


async def test_a_recreated_crd_does_not_bring_back_its_old_resources(
    world: World, kube: client.ApiClient
) -> None:
    await install(kube)
    await create_widget(kube, "old")
    await delete_crd(world)
    await eventually(lambda: crd_gone(kube), what="the widget CRD gone")

    recreated = await install(kube)

    assert "deletionTimestamp" not in recreated["metadata"]
    assert terminating(recreated) is None
    listed = await client.CustomObjectsApi(kube).list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
    assert listed["items"] == []
    await create_widget(kube, "new")


async def test_a_namespace_holding_resources_of_a_deleted_crd_finishes_deleting(
    world: World, kube: client.ApiClient
) -> None:
    core, custom = client.CoreV1Api(kube), client.CustomObjectsApi(kube)
    await install(kube)
    await core.create_namespace({"metadata": {"name": "team"}})
    await create_widget(kube, "held", namespace="team", finalizers=[HOLD])
    await core.delete_namespace("team")

    async def held_deleting() -> bool:
        held = await custom.get_namespaced_custom_object(GROUP, VERSION, "team", PLURAL, "held")
        return bool(held["metadata"].get("deletionTimestamp"))

    await eventually(held_deleting, what="the namespace controller deleting the widget")
    await delete_crd(world)
    assert (await core.read_namespace("team")).status.phase == "Terminating"

    await custom.patch_namespaced_custom_object(
        GROUP, VERSION, "team", PLURAL, "held", {"metadata": {"finalizers": None}}, _content_type=MERGE
    )

    async def namespace_gone() -> bool:
        try:
            await core.read_namespace("team")
        except ApiException as exc:
            if exc.status == 404:
                return True
            raise
        return False

    await eventually(namespace_gone, what="namespace team gone")
    await eventually(lambda: crd_gone(kube), what="the widget CRD gone")


async def test_a_crds_watches_end_when_it_goes(world: World, kube: client.ApiClient) -> None:
    await install(kube)
    created = await create_widget(kube, "watched")
    seen: list[tuple[str, str]] = []

    async def watch_to_the_end() -> None:
        params = {"watch": "true", "resourceVersion": created["metadata"]["resourceVersion"]}
        async with (
            aiohttp.ClientSession() as session,
            session.get(world.url + widgets_path(), params=params) as resp,
        ):
            assert resp.status == 200
            async for line in resp.content:
                event = json.loads(line)
                seen.append((event["type"], event["object"]["metadata"]["name"]))

    watching = asyncio.create_task(watch_to_the_end())
    await eventually(lambda: world.store.watch_count > 0, what="the widget watch open")
    await delete_crd(world)

    async with asyncio.timeout(10):
        await watching
    assert seen == [("DELETED", "watched")]
    assert await read_crd(kube) is None


async def test_a_dry_run_delete_of_a_crd_answers_it_terminating_and_keeps_it(
    world: World, kube: client.ApiClient
) -> None:
    stored = await install(kube)
    revision = world.revision

    code, body = await delete_crd(world, {"dryRun": ["All"]})

    assert code == 200
    assert body["metadata"]["finalizers"] == [CLEANUP]
    assert terminating(body) is not None
    assert await read_crd(kube) == stored
    assert world.revision == revision
    await create_widget(kube, "still-served")


async def test_a_crd_delete_checks_preconditions_in_its_own_words(
    world: World, kube: client.ApiClient
) -> None:
    stored = await install(kube)
    uid = stored["metadata"]["uid"]

    code, body = await delete_crd(world, {"preconditions": {"uid": "other"}})

    assert code == 409
    assert body["message"] == (
        f'Operation cannot be fulfilled on customresourcedefinitions.apiextensions.k8s.io "{CRD_NAME}": '
        f"Precondition failed: UID in precondition: other, UID in object meta: {uid}"
    )
    assert await read_crd(kube) == stored


@requires_kubectl
async def test_kubectl_delete_crd_waits_for_it_and_its_resources_to_go(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    await install(kube)
    await create_widget(kube, "one")

    out = await ok(kubeconfig, "delete", "crd", CRD_NAME)

    assert out.strip() == f'customresourcedefinition.apiextensions.k8s.io "{CRD_NAME}" deleted'
    assert await read_crd(kube) is None
    assert not world.store.items((GROUP, PLURAL))
