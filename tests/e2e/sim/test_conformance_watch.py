"""Emulator conformance, watches (apiserver-semantics.md S49-S54) and the emulator's test hooks.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py), or a ``World`` made here when a test
needs ``watch_history`` or ``bookmark_interval``. Requests go over HTTP, through kubernetes_asyncio
(typed APIs, ``watch.Watch``) or raw aiohttp where the exact lines and headers matter. Every test scopes
its objects with its own label, so objects other controllers create (on a real cluster, for example
the ``kube-root-ca.crt`` ConfigMap) never show up in its watches.

Tests named ``test_sNN_*`` assert what a real kube-apiserver answers; tests named ``test_hook_*`` drive
the emulator's hooks (compaction, faults, dropping watches, the request log) and assert what a client
sees when a real cluster does the same thing.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from sim.faults import Fault
from sim.world import World
from tests import worlds
from tests.e2e.sim.conformance import NS, status_body
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds(on_demand=True)

CM_PATH = f"/api/v1/namespaces/{NS}/configmaps"
ARS_GROUP, ARS_VERSION, ARS_PLURAL = "actions.github.com", "v1alpha1", "autoscalingrunnersets"
ARS_PATH = f"/apis/{ARS_GROUP}/{ARS_VERSION}/namespaces/{NS}/{ARS_PLURAL}"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


# -- helpers ------------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def raw_get(world: World, path: str, **query: str) -> AsyncIterator[aiohttp.ClientResponse]:
    """A GET over raw HTTP; the response is open (not read) inside the block."""
    async with (
        aiohttp.ClientSession() as session,
        session.get(world.url + path, params=query, ssl=worlds.client_ssl(world)) as resp,
    ):
        yield resp


async def read_line(resp: aiohttp.ClientResponse, timeout: float = 5.0) -> bytes:
    """The next line of a watch stream (b"" at a clean end of stream)."""
    return await asyncio.wait_for(resp.content.readline(), timeout)


async def read_event(resp: aiohttp.ClientResponse, timeout: float = 5.0) -> dict[str, Any]:
    line = await read_line(resp, timeout)
    assert line.endswith(b"\n"), f"not a complete watch line: {line!r}"
    assert b"\n" not in line[:-1]
    event: dict[str, Any] = json.loads(line)
    return event


async def read_events(resp: aiohttp.ClientResponse, n: int, timeout: float = 5.0) -> list[dict[str, Any]]:
    return [await read_event(resp, timeout) for _ in range(n)]


async def read_to_end(resp: aiohttp.ClientResponse, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every event until the server ends the stream (cleanly: a truncated stream raises)."""
    events = []
    async with asyncio.timeout(timeout):
        while line := await resp.content.readline():
            events.append(json.loads(line))
    return events


def cm(name: str, label: str, **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"test": label}}, "data": dict(data)}


def ars(name: str, label: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{ARS_GROUP}/{ARS_VERSION}",
        "kind": "AutoscalingRunnerSet",
        "metadata": {"name": name, "labels": {"test": label}},
        "spec": {"githubConfigUrl": "https://github.com/example", "githubConfigSecret": "secret"},
    }


def sel(label: str) -> str:
    return f"test={label}"


def rv(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj["metadata"]["resourceVersion"])
    return str(obj.metadata.resource_version)


async def list_rv(core: client.CoreV1Api, label: str) -> str:
    return str(
        (await core.list_namespaced_config_map(NS, label_selector=sel(label))).metadata.resource_version
    )


async def collect(
    w: watch.Watch, func: Any, *args: Any, n: int, timeout: float = 5.0, **kwargs: Any
) -> list[dict[str, Any]]:
    """The first ``n`` events of ``w.stream(func, ...)``."""
    events: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        async for event in w.stream(func, *args, **kwargs):
            events.append(event)
            if len(events) == n:
                break
    return events


# -- S49 watch request and framing -----------------------------------------------------------------------


async def test_s49_watch_framing_chunked_json_lines(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    start = await list_rv(core, "s49")
    async with raw_get(world, CM_PATH, watch="1", labelSelector=sel("s49"), resourceVersion=start) as resp:
        # Status and headers arrive before any event exists.
        assert resp.status == 200
        assert resp.headers["Content-Type"].split(";")[0] == "application/json"
        assert resp.headers["Transfer-Encoding"] == "chunked"
        assert "Content-Length" not in resp.headers

        created = await core.create_namespaced_config_map(NS, cm("s49", "s49", a="1"))
        added = await read_event(resp)  # flushed as soon as it happens
        assert set(added) == {"type", "object"}
        assert added["type"] == "ADDED"
        assert added["object"]["kind"] == "ConfigMap"
        assert added["object"]["apiVersion"] == "v1"
        assert added["object"]["metadata"]["name"] == "s49"
        assert added["object"]["metadata"]["resourceVersion"] == rv(created)
        assert added["object"]["data"] == {"a": "1"}

        await core.patch_namespaced_config_map("s49", NS, {"data": {"a": "2"}})
        modified = await read_event(resp)
        assert (modified["type"], modified["object"]["kind"]) == ("MODIFIED", "ConfigMap")
        assert modified["object"]["data"] == {"a": "2"}

        await core.delete_namespaced_config_map("s49", NS)
        deleted = await read_event(resp)
        assert (deleted["type"], deleted["object"]["kind"]) == ("DELETED", "ConfigMap")
        assert deleted["object"]["apiVersion"] == "v1"


@pytest.mark.parametrize("spelling", ["1", "true", "True"])
async def test_s49_watch_query_spellings(world: World, kube: client.ApiClient, spelling: str) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_config_map(NS, cm("s49-spelling", "s49-spelling"))
    async with raw_get(world, CM_PATH, watch=spelling, labelSelector=sel("s49-spelling")) as resp:
        assert resp.status == 200
        event = await read_event(resp)
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "s49-spelling")


async def test_s49_single_object_watch_by_field_selector(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    start = await list_rv(core, "s49-one")
    async with watch.Watch() as w:
        task = asyncio.create_task(
            collect(
                w,
                core.list_namespaced_config_map,
                NS,
                n=3,
                field_selector="metadata.name=s49-one",
                resource_version=start,
            )
        )
        await core.create_namespaced_config_map(NS, cm("s49-other", "s49-one"))
        await core.create_namespaced_config_map(NS, cm("s49-one", "s49-one"))
        await core.patch_namespaced_config_map("s49-other", NS, {"data": {"x": "1"}})
        await core.patch_namespaced_config_map("s49-one", NS, {"data": {"x": "1"}})
        await core.delete_namespaced_config_map("s49-one", NS)
        events = await task
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "s49-one"),
        ("MODIFIED", "s49-one"),
        ("DELETED", "s49-one"),
    ]
    # kubernetes_asyncio deserialises the typed object; the raw object carries apiVersion/kind.
    assert isinstance(events[0]["object"], client.V1ConfigMap)
    assert {(e["raw_object"]["apiVersion"], e["raw_object"]["kind"]) for e in events} == {("v1", "ConfigMap")}


async def test_s49_custom_resource_watch_objects_carry_type_fields(
    world: World, kube: client.ApiClient
) -> None:
    crs = client.CustomObjectsApi(kube)
    listed = await crs.list_namespaced_custom_object(
        ARS_GROUP, ARS_VERSION, NS, ARS_PLURAL, label_selector=sel("s49-cr")
    )
    async with watch.Watch() as w:
        task = asyncio.create_task(
            collect(
                w,
                crs.list_namespaced_custom_object,
                ARS_GROUP,
                ARS_VERSION,
                NS,
                ARS_PLURAL,
                n=1,
                label_selector=sel("s49-cr"),
                resource_version=listed["metadata"]["resourceVersion"],
            )
        )
        await crs.create_namespaced_custom_object(
            ARS_GROUP, ARS_VERSION, NS, ARS_PLURAL, ars("s49-cr", "s49-cr")
        )
        (event,) = await task
    assert event["type"] == "ADDED"
    assert event["object"]["apiVersion"] == f"{ARS_GROUP}/{ARS_VERSION}"
    assert event["object"]["kind"] == "AutoscalingRunnerSet"
    assert event["object"]["metadata"]["name"] == "s49-cr"


# -- S50 watch start resourceVersion ---------------------------------------------------------------------


@pytest.mark.parametrize("start", [None, "0"])
async def test_s50_watch_without_rv_synthesizes_added_in_key_order(
    world: World, kube: client.ApiClient, start: str | None
) -> None:
    core = client.CoreV1Api(kube)
    created = {}
    for name in ("s50-c", "s50-a", "s50-b"):
        created[name] = await core.create_namespaced_config_map(NS, cm(name, "s50-init"))
    created["s50-a"] = await core.patch_namespaced_config_map("s50-a", NS, {"data": {"v": "2"}})
    query = {"watch": "true", "labelSelector": sel("s50-init")}
    if start is not None:
        query["resourceVersion"] = start
    async with raw_get(world, CM_PATH, **query) as resp:
        initial = await read_events(resp, 3)
        # Each synthetic ADDED carries the object's own resourceVersion, in key (namespace/name) order.
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in initial] == [
            ("ADDED", "s50-a"),
            ("ADDED", "s50-b"),
            ("ADDED", "s50-c"),
        ]
        assert [e["object"]["metadata"]["resourceVersion"] for e in initial] == [
            rv(created[n]) for n in ("s50-a", "s50-b", "s50-c")
        ]
        assert initial[0]["object"]["data"] == {"v": "2"}
        # Then live changes.
        await core.delete_namespaced_config_map("s50-b", NS)
        live = await read_event(resp)
        assert (live["type"], live["object"]["metadata"]["name"]) == ("DELETED", "s50-b")


async def test_s50_watch_from_rv_replays_every_later_change(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    a = await core.create_namespaced_config_map(NS, cm("s50-a", "s50-replay"))
    a2 = await core.patch_namespaced_config_map("s50-a", NS, {"data": {"v": "2"}})
    b = await core.create_namespaced_config_map(NS, cm("s50-b", "s50-replay"))
    await core.delete_namespaced_config_map("s50-a", NS)
    async with raw_get(
        world, CM_PATH, watch="true", labelSelector=sel("s50-replay"), resourceVersion=rv(a)
    ) as resp:
        events = await read_events(resp, 3)
    # No synthetic ADDED for what existed at the start revision: exactly the later changes, in order.
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("MODIFIED", "s50-a"),
        ("ADDED", "s50-b"),
        ("DELETED", "s50-a"),
    ]
    assert events[0]["object"]["metadata"]["resourceVersion"] == rv(a2)
    assert events[1]["object"]["metadata"]["resourceVersion"] == rv(b)
    assert int(events[2]["object"]["metadata"]["resourceVersion"]) > int(rv(b))


@pytest.mark.emulator_only("compacts the emulator's history on demand")
async def test_s50_watch_from_compacted_rv_gets_410_error_event(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    old = await core.create_namespaced_config_map(NS, cm("s50-old", "s50-410"))
    await core.patch_namespaced_config_map("s50-old", NS, {"data": {"v": "2"}})
    world.compact()  # what etcd compaction does to a real cluster's history every few minutes

    async with raw_get(
        world, CM_PATH, watch="true", labelSelector=sel("s50-410"), resourceVersion=rv(old)
    ) as resp:
        assert resp.status == 200  # the error travels inside the stream
        error = await read_event(resp)
        assert await read_line(resp) == b""  # ERROR is the last line; the stream ends cleanly
    assert error["type"] == "ERROR"
    status = error["object"]
    assert re.fullmatch(rf"too old resource version: {rv(old)} \(\d+\)", status["message"])
    assert {k: v for k, v in status.items() if k != "message"} == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "reason": "Expired",
        "code": 410,
    }


@pytest.mark.emulator_only("compacts the emulator's history on demand")
async def test_s50_compacted_rv_through_kubernetes_asyncio(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    old = await core.create_namespaced_config_map(NS, cm("s50-old", "s50-client"))
    await core.patch_namespaced_config_map("s50-old", NS, {"data": {"v": "2"}})
    world.compact()

    # With timeout_seconds the client raises at once.
    with pytest.raises(ApiException) as raised:
        async with watch.Watch() as w:
            async for _ in w.stream(
                core.list_namespaced_config_map, NS, resource_version=rv(old), timeout_seconds=5
            ):
                pass
    assert raised.value.status == 410
    assert raised.value.reason.startswith(f"Expired: too old resource version: {rv(old)} (")

    # Without it, it retries once with the same resourceVersion, then raises.
    before = len(world.requests)
    with pytest.raises(ApiException) as raised:
        async with watch.Watch() as w:
            async for _ in w.stream(core.list_namespaced_config_map, NS, resource_version=rv(old)):
                pass
    assert raised.value.status == 410
    watches = [r for r in world.requests[before:] if r.verb == "watch"]
    assert len(watches) == 2
    assert all(f"resourceVersion={rv(old)}" in r.query for r in watches)


# -- S51 ordering and selector transitions ---------------------------------------------------------------


async def test_s51_one_event_per_write_strictly_increasing(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_config_map(NS, cm("s51", "s51-order"))
    async with watch.Watch() as w:
        task = asyncio.create_task(
            collect(
                w,
                core.list_namespaced_config_map,
                NS,
                n=25,
                label_selector=sel("s51-order"),
                resource_version=rv(created),
            )
        )
        written = []
        for i in range(25):
            written.append(rv(await core.patch_namespaced_config_map("s51", NS, {"data": {"i": str(i)}})))
        events = await task
    # No coalescing: one MODIFIED per write, in write order, each with its write's resourceVersion.
    assert [e["type"] for e in events] == ["MODIFIED"] * 25
    assert [rv(e["object"]) for e in events] == written
    assert [e["object"].data["i"] for e in events] == [str(i) for i in range(25)]
    numbers = [int(v) for v in written]
    assert all(a < b for a, b in itertools.pairwise(numbers))


async def test_s51_label_selector_transitions(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    body = cm("s51-sel", "s51-sel", v="1")
    body["metadata"]["labels"]["app"] = "x"
    start = await list_rv(core, "s51-sel")
    async with raw_get(
        world, CM_PATH, watch="1", labelSelector="app=x,test=s51-sel", resourceVersion=start
    ) as resp:
        await core.create_namespaced_config_map(NS, body)
        added = await read_event(resp)
        assert (added["type"], added["object"]["metadata"]["name"]) == ("ADDED", "s51-sel")

        # Stops matching: DELETED with the previous content and the new resourceVersion.
        moved = await core.patch_namespaced_config_map(
            "s51-sel", NS, {"metadata": {"labels": {"app": "y"}}, "data": {"v": "2"}}
        )
        gone = await read_event(resp)
        assert gone["type"] == "DELETED"
        assert gone["object"]["metadata"]["labels"]["app"] == "x"
        assert gone["object"]["data"] == {"v": "1"}
        assert gone["object"]["metadata"]["resourceVersion"] == rv(moved)

        # Changes while not matching are not sent; starting to match again is an ADDED.
        await core.patch_namespaced_config_map("s51-sel", NS, {"data": {"v": "3"}})
        back = await core.patch_namespaced_config_map("s51-sel", NS, {"metadata": {"labels": {"app": "x"}}})
        again = await read_event(resp)
        assert again["type"] == "ADDED"
        assert again["object"]["data"] == {"v": "3"}
        assert again["object"]["metadata"]["resourceVersion"] == rv(back)

        # DELETED carries the last stored state with the delete's (newer) resourceVersion.
        await core.delete_namespaced_config_map("s51-sel", NS)
        deleted = await read_event(resp)
        assert deleted["type"] == "DELETED"
        assert deleted["object"]["data"] == {"v": "3"}
        assert deleted["object"]["metadata"]["labels"]["app"] == "x"
        assert int(deleted["object"]["metadata"]["resourceVersion"]) > int(rv(back))
        after = await list_rv(core, "s51-sel")
        assert int(after) >= int(deleted["object"]["metadata"]["resourceVersion"])


# -- S52 bookmarks ---------------------------------------------------------------------------------------


@pytest.mark.diverges_on_real("kube-apiserver sent no bookmark before its timeout within the case's window")
async def test_s52_bookmark_before_server_timeout_is_type_and_rv_only(
    world: World, kube: client.ApiClient
) -> None:
    crs = client.CustomObjectsApi(kube)
    created = await crs.create_namespaced_custom_object(
        ARS_GROUP, ARS_VERSION, NS, ARS_PLURAL, ars("s52", "s52")
    )
    # About 2 s before a 3 s server-side timeout the server sends a bookmark.
    async with raw_get(
        world,
        ARS_PATH,
        watch="true",
        allowWatchBookmarks="true",
        timeoutSeconds="3",
        labelSelector=sel("s52"),
        resourceVersion=rv(created),
    ) as resp:
        event = await read_event(resp, timeout=3)
    assert event["type"] == "BOOKMARK"
    obj = event["object"]
    assert obj == {
        "kind": "AutoscalingRunnerSet",
        "apiVersion": f"{ARS_GROUP}/{ARS_VERSION}",
        "metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]},
    }
    assert int(obj["metadata"]["resourceVersion"]) >= int(rv(created))


async def test_s52_periodic_bookmarks_follow_the_revision() -> None:
    async with World(seed=1, bookmark_interval=0.2) as world, client.ApiClient(world.configuration()) as api:
        core = client.CoreV1Api(api)
        start = await list_rv(core, "s52-periodic")
        async with raw_get(
            world,
            CM_PATH,
            watch="1",
            allowWatchBookmarks="1",
            labelSelector=sel("s52-periodic"),
            resourceVersion=start,
        ) as resp:
            first = await read_event(resp)
            assert first["type"] == "BOOKMARK"
            assert first["object"]["kind"] == "ConfigMap"
            assert first["object"]["apiVersion"] == "v1"
            assert "name" not in first["object"]["metadata"]
            assert int(first["object"]["metadata"]["resourceVersion"]) >= int(start)
            # A write elsewhere (not matching the selector) moves later bookmarks past it.
            other = await core.create_namespaced_config_map(NS, cm("s52-elsewhere", "s52-other"))

            async def bookmark_past_write() -> bool:
                event = await read_event(resp)
                assert event["type"] == "BOOKMARK"
                return int(event["object"]["metadata"]["resourceVersion"]) >= int(rv(other))

            await eventually(bookmark_past_write, what="a bookmark at or after the write")


async def test_s52_no_bookmarks_unless_allowed() -> None:
    async with World(seed=1, bookmark_interval=0.1) as world:
        async with raw_get(
            world, CM_PATH, watch="1", timeoutSeconds="1", labelSelector=sel("s52-none")
        ) as resp:
            events = await read_to_end(resp)
        assert events == []


async def test_s52_kubernetes_asyncio_tracks_bookmark_rv() -> None:
    async with World(seed=1, bookmark_interval=0.2) as world, client.ApiClient(world.configuration()) as api:
        core = client.CoreV1Api(api)
        other = await core.create_namespaced_config_map(NS, cm("s52-other", "s52-other"))
        async with watch.Watch() as w:
            (event,) = await collect(
                w,
                core.list_namespaced_config_map,
                NS,
                n=1,
                label_selector=sel("s52-client"),
                resource_version=rv(other),
                allow_watch_bookmarks=True,
            )
            assert event["type"] == "BOOKMARK"
            # Bookmarks are not deserialised, but move the resourceVersion the client resumes from.
            assert event["object"] == event["raw_object"]
            assert w.resource_version == event["raw_object"]["metadata"]["resourceVersion"]


# -- S53 sendInitialEvents -------------------------------------------------------------------------------


async def test_s53_send_initial_events_requires_not_older_than(world: World) -> None:
    async with raw_get(world, CM_PATH, watch="1", sendInitialEvents="true") as resp:
        assert resp.status == 422
        body = await resp.json()
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        "reason": "Invalid",
        "details": {
            "group": "meta.k8s.io",
            "kind": "ListOptions",
            "causes": [
                {
                    "reason": "FieldValueForbidden",
                    "message": "Forbidden: "
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    "field": "resourceVersionMatch",
                }
            ],
        },
        "code": 422,
    }


async def test_s53_resource_version_match_on_watch_needs_send_initial_events(world: World) -> None:
    async with raw_get(world, CM_PATH, watch="1", resourceVersionMatch="NotOlderThan") as resp:
        assert resp.status == 422
        body = await resp.json()
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
    )


async def test_s53_initial_events_then_end_bookmark_then_live(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    b = await core.create_namespaced_config_map(NS, cm("s53-b", "s53"))
    a = await core.create_namespaced_config_map(NS, cm("s53-a", "s53"))
    async with raw_get(
        world,
        CM_PATH,
        watch="1",
        sendInitialEvents="true",
        resourceVersionMatch="NotOlderThan",
        allowWatchBookmarks="true",
        labelSelector=sel("s53"),
    ) as resp:
        assert resp.status == 200
        initial = await read_events(resp, 3)
        assert [(e["type"], e["object"]["metadata"].get("name")) for e in initial] == [
            ("ADDED", "s53-a"),
            ("ADDED", "s53-b"),
            ("BOOKMARK", None),
        ]
        assert [rv(e["object"]) for e in initial[:2]] == [rv(a), rv(b)]
        end = initial[2]["object"]
        assert end["kind"] == "ConfigMap"
        assert end["metadata"]["annotations"] == {INITIAL_EVENTS_END: "true"}
        assert int(rv(end)) >= max(int(rv(a)), int(rv(b)))
        c = await core.create_namespaced_config_map(NS, cm("s53-c", "s53"))
        live = await read_event(resp)
        assert (live["type"], rv(live["object"])) == ("ADDED", rv(c))


@pytest.mark.parametrize("start", ["", "0"])
async def test_s53_send_initial_events_false_starts_from_now(
    world: World, kube: client.ApiClient, start: str
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_config_map(NS, cm("s53-old", "s53-false"))
    async with raw_get(
        world,
        CM_PATH,
        watch="1",
        sendInitialEvents="false",
        resourceVersionMatch="NotOlderThan",
        resourceVersion=start,
        labelSelector=sel("s53-false"),
    ) as resp:
        assert resp.status == 200
        new = await core.create_namespaced_config_map(NS, cm("s53-new", "s53-false"))
        event = await read_event(resp)
    # No synthetic ADDED for s53-old: the first event is the live one.
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "s53-new")
    assert rv(event["object"]) == rv(new)


async def test_s53_send_initial_events_through_kubernetes_asyncio(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_config_map(NS, cm("s53-k", "s53-k"))
    async with watch.Watch() as w:
        events = await collect(
            w,
            core.list_namespaced_config_map,
            NS,
            n=2,
            label_selector=sel("s53-k"),
            send_initial_events=True,
            resource_version_match="NotOlderThan",
            allow_watch_bookmarks=True,
        )
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["raw_object"]["metadata"]["annotations"] == {INITIAL_EVENTS_END: "true"}
    assert w.resource_version == events[1]["raw_object"]["metadata"]["resourceVersion"]


# -- S54 watch timeout -----------------------------------------------------------------------------------


async def test_s54_timeout_seconds_ends_stream_cleanly(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with raw_get(world, CM_PATH, watch="1", timeoutSeconds="1", labelSelector=sel("s54")) as resp:
        assert resp.status == 200
        events = await read_to_end(resp)  # a truncated stream would raise here
    elapsed = loop.time() - started
    assert events == []
    assert 0.9 <= elapsed < 5

    # kubernetes_asyncio with timeout_seconds stops iterating; the caller re-watches from the last RV.
    first = await core.create_namespaced_config_map(NS, cm("s54-a", "s54"))
    async with watch.Watch() as w:
        seen = [
            e["object"].metadata.name
            async for e in w.stream(
                core.list_namespaced_config_map, NS, label_selector=sel("s54"), timeout_seconds=1
            )
        ]
        assert seen == ["s54-a"]
        assert w.resource_version == rv(first)
        await core.create_namespaced_config_map(NS, cm("s54-b", "s54"))
        resumed = [
            (e["type"], e["object"].metadata.name)
            async for e in w.stream(
                core.list_namespaced_config_map,
                NS,
                label_selector=sel("s54"),
                resource_version=w.resource_version,
                timeout_seconds=1,
            )
        ]
    assert resumed == [("ADDED", "s54-b")]


# -- hooks: compaction -----------------------------------------------------------------------------------


@pytest.mark.emulator_only("its own hooks (faults, compaction, dropped watches, request log)")
async def test_hook_watch_history_limit_expires_resume_continue_and_exact() -> None:
    async with World(seed=1, watch_history=5) as world, client.ApiClient(world.configuration()) as api:
        core = client.CoreV1Api(api)
        first = await core.create_namespaced_config_map(NS, cm("h-0", "h-history"))
        for i in range(1, 4):
            await core.create_namespaced_config_map(NS, cm(f"h-{i}", "h-history"))
        page = await core.list_namespaced_config_map(NS, label_selector=sel("h-history"), limit=2)
        # Still within the last 5 events: a watch resumes, an Exact list and the continue token work.
        async with raw_get(
            world, CM_PATH, watch="1", labelSelector=sel("h-history"), resourceVersion=rv(first)
        ) as resp:
            events = await read_events(resp, 3)
        assert [e["object"]["metadata"]["name"] for e in events] == ["h-1", "h-2", "h-3"]
        exact = await core.list_namespaced_config_map(
            NS, label_selector=sel("h-history"), resource_version=rv(first), resource_version_match="Exact"
        )
        assert [i.metadata.name for i in exact.items] == ["h-0"]
        rest = await core.list_namespaced_config_map(
            NS, label_selector=sel("h-history"), limit=2, _continue=page.metadata._continue
        )
        assert [i.metadata.name for i in rest.items] == ["h-2", "h-3"]

        # Six more writes push those revisions out of the history.
        recent = first
        for i in range(4, 10):
            recent = await core.create_namespaced_config_map(NS, cm(f"h-{i}", "h-history"))
        async with raw_get(
            world, CM_PATH, watch="1", labelSelector=sel("h-history"), resourceVersion=rv(first)
        ) as resp:
            error = await read_event(resp)
            assert await read_line(resp) == b""
        assert error["type"] == "ERROR"
        assert (error["object"]["code"], error["object"]["reason"]) == (410, "Expired")
        expired_lists: list[dict[str, Any]] = [
            {"resource_version": rv(first), "resource_version_match": "Exact"},
            {"limit": 2, "_continue": page.metadata._continue},
        ]
        for options in expired_lists:
            with pytest.raises(ApiException) as raised:
                await core.list_namespaced_config_map(NS, label_selector=sel("h-history"), **options)
            assert raised.value.status == 410
            assert status_body(raised.value)["reason"] == "Expired"
        # A recent revision is still fine.
        async with raw_get(
            world,
            CM_PATH,
            watch="1",
            labelSelector=sel("h-history"),
            resourceVersion=rv(recent),
            timeoutSeconds="1",
        ) as resp:
            assert await read_to_end(resp) == []


@pytest.mark.emulator_only("its own hooks (faults, compaction, dropped watches, request log)")
async def test_hook_compaction_expires_continue_tokens(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    for i in range(3):
        await core.create_namespaced_config_map(NS, cm(f"h-page-{i}", "h-page"))
    page = await core.list_namespaced_config_map(NS, label_selector=sel("h-page"), limit=1)
    assert page.metadata._continue
    # Before compaction the token works (and serves the first page's snapshot).
    await core.create_namespaced_config_map(NS, cm("h-page-3", "h-page"))
    rest = await core.list_namespaced_config_map(
        NS, label_selector=sel("h-page"), limit=10, _continue=page.metadata._continue
    )
    assert [i.metadata.name for i in rest.items] == ["h-page-1", "h-page-2"]
    assert rest.metadata.resource_version == page.metadata.resource_version
    await core.patch_namespaced_config_map("h-page-0", NS, {"data": {"v": "2"}})
    world.compact()
    with pytest.raises(ApiException) as raised:
        await core.list_namespaced_config_map(
            NS, label_selector=sel("h-page"), limit=1, _continue=page.metadata._continue
        )
    assert raised.value.status == 410
    body = status_body(raised.value)
    assert body["reason"] == "Expired"
    assert body["code"] == 410
    assert body["message"].startswith(
        "The provided continue parameter is too old to display a consistent list"
    )


@pytest.mark.emulator_only("its own hooks (faults, compaction, dropped watches, request log)")
async def test_hook_compaction_expires_exact_lists(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    a = await core.create_namespaced_config_map(NS, cm("h-exact-a", "h-exact"))
    await core.create_namespaced_config_map(NS, cm("h-exact-b", "h-exact"))
    at_a = await core.list_namespaced_config_map(
        NS, label_selector=sel("h-exact"), resource_version=rv(a), resource_version_match="Exact"
    )
    assert [i.metadata.name for i in at_a.items] == ["h-exact-a"]
    assert at_a.metadata.resource_version == rv(a)
    world.compact()
    with pytest.raises(ApiException) as raised:
        await core.list_namespaced_config_map(
            NS, label_selector=sel("h-exact"), resource_version=rv(a), resource_version_match="Exact"
        )
    assert raised.value.status == 410
    assert status_body(raised.value)["reason"] == "Expired"


# -- hooks: faults ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("code", "reason"), [(409, "Conflict"), (500, "InternalError"), (504, "Timeout")])
@pytest.mark.emulator_only("its own hooks (faults, compaction, dropped watches, request log)")
async def test_hook_fault_status_as_seen_by_client(
    world: World, kube: client.ApiClient, code: int, reason: str
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_config_map(NS, cm("h-fault", "h-fault"))
    fault = world.inject(Fault(verb="get", path=r"/configmaps/h-fault$", code=code, message="boom"))
    with pytest.raises(ApiException) as raised:
        await core.read_namespaced_config_map("h-fault", NS)
    assert raised.value.status == code
    assert status_body(raised.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "boom",
        "reason": reason,
        "code": code,
    }
    assert fault.hits == 1
    # One hit by default: the next call goes through.
    assert (await core.read_namespaced_config_map("h-fault", NS)).metadata.name == "h-fault"


@pytest.mark.emulator_only("its own hooks (faults, compaction, dropped watches, request log)")
async def test_hook_fault_429_with_retry_after(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    world.inject(Fault(verb="list", path=r"/configmaps$", code=429, retry_after=3, message="slow down"))
    with pytest.raises(ApiException) as raised:
        await core.list_namespaced_config_map(NS)
    assert raised.value.status == 429
    assert raised.value.headers["Retry-After"] == "3"
    body = status_body(raised.value)
    assert (body["reason"], body["code"], body["details"]) == (
        "TooManyRequests",
        429,
        {"retryAfterSeconds": 3},
    )


@pytest.mark.emulator_only("its own hooks (faults, compaction, dropped watches, request log)")
async def test_hook_fault_skip_times_and_latency(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    world.inject(Fault(verb="create", path=r"/configmaps$", code=500, skip=1, times=2))
    await core.create_namespaced_config_map(NS, cm("h-skip-0", "h-skip"))  # skipped
    for name in ("h-skip-1", "h-skip-2"):
        with pytest.raises(ApiException) as raised:
            await core.create_namespaced_config_map(NS, cm(name, "h-skip"))
        assert raised.value.status == 500
    await core.create_namespaced_config_map(NS, cm("h-skip-3", "h-skip"))  # exhausted
    names = [
        i.metadata.name
        for i in (await core.list_namespaced_config_map(NS, label_selector=sel("h-skip"))).items
    ]
    assert names == ["h-skip-0", "h-skip-3"]

    world.inject(Fault(verb="list", path=r"/configmaps$", latency=0.3))
    loop = asyncio.get_running_loop()
    started = loop.time()
    listed = await core.list_namespaced_config_map(NS, label_selector=sel("h-skip"))
    assert loop.time() - started >= 0.3
    assert len(listed.items) == 2


# -- hooks: dropping watches -----------------------------------------------------------------------------


@pytest.mark.emulator_only("its own hooks (faults, compaction, dropped watches, request log)")
async def test_hook_drop_watches_cleanly_client_resumes_missing_nothing(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    seen: list[tuple[str, str]] = []

    async def watch_forever() -> None:
        async with watch.Watch() as w:
            async for event in w.stream(core.list_namespaced_config_map, NS, label_selector=sel("h-drop")):
                seen.append((event["type"], event["object"].metadata.name))

    task = asyncio.create_task(watch_forever())
    try:
        await core.create_namespaced_config_map(NS, cm("h-a", "h-drop"))
        b = await core.create_namespaced_config_map(NS, cm("h-b", "h-drop"))
        await eventually(lambda: len(seen) == 2, what="first two events")
        before = len(world.requests)
        assert world.drop_watches() >= 1
        # Written while the client reconnects: it resumes from the last RV it saw.
        await core.create_namespaced_config_map(NS, cm("h-c", "h-drop"))
        await core.delete_namespaced_config_map("h-a", NS)
        await eventually(lambda: len(seen) == 4, what="events after the drop")
        assert seen == [("ADDED", "h-a"), ("ADDED", "h-b"), ("ADDED", "h-c"), ("DELETED", "h-a")]
        assert not task.done()
        # The log records a request when it ends: end the re-watch too, then look at it.
        world.drop_watches()
        await eventually(
            lambda: [r.query for r in world.requests[before:] if r.verb == "watch"][1:],
            what="the re-watch logged",
        )
        rewatch = [r for r in world.requests[before:] if r.verb == "watch"]
        assert "resourceVersion" not in rewatch[0].query  # the original watch
        assert f"resourceVersion={rv(b)}" in rewatch[1].query  # resumed after h-b
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@pytest.mark.emulator_only("its own hooks (faults, compaction, dropped watches, request log)")
async def test_hook_drop_watches_abruptly(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    seen: list[tuple[str, str]] = []
    w = watch.Watch()

    async def watch_until_broken() -> None:
        async for event in w.stream(core.list_namespaced_config_map, NS, label_selector=sel("h-abrupt")):
            seen.append((event["type"], event["object"].metadata.name))

    task = asyncio.create_task(watch_until_broken())
    try:
        await core.create_namespaced_config_map(NS, cm("h-a", "h-abrupt"))
        await eventually(lambda: len(seen) == 1, what="first event")
        assert world.drop_watches(abrupt=True) >= 1
        # A reset connection is not a clean end of stream: kubernetes_asyncio raises instead of re-watching.
        with pytest.raises(aiohttp.ClientPayloadError):
            await asyncio.wait_for(task, 5)
        await core.create_namespaced_config_map(NS, cm("h-b", "h-abrupt"))
        # Re-watching from the last resourceVersion seen misses nothing.
        resumed = await collect(
            w,
            core.list_namespaced_config_map,
            NS,
            n=1,
            label_selector=sel("h-abrupt"),
            resource_version=w.resource_version,
        )
        assert [(e["type"], e["object"].metadata.name) for e in resumed] == [("ADDED", "h-b")]
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientPayloadError):
            await task
        await w.close()


# -- hooks: the request log ------------------------------------------------------------------------------


@pytest.mark.emulator_only("its own hooks (faults, compaction, dropped watches, request log)")
async def test_hook_request_log(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    crs = client.CustomObjectsApi(kube)
    before = len(world.requests)
    await core.create_namespaced_config_map(NS, cm("h-log", "h-log"))
    await core.patch_namespaced_config_map("h-log", NS, {"data": {"v": "1"}})
    await crs.create_namespaced_custom_object(ARS_GROUP, ARS_VERSION, NS, ARS_PLURAL, ars("h-log", "h-log"))
    await crs.patch_namespaced_custom_object(
        ARS_GROUP,
        ARS_VERSION,
        NS,
        ARS_PLURAL,
        "h-log",
        {"spec": {"minRunners": 1}},
        _content_type="application/merge-patch+json",
    )
    with pytest.raises(ApiException):
        await core.read_namespaced_config_map("h-missing", NS)
    await core.list_namespaced_config_map(NS, label_selector=sel("h-log"), limit=5)
    logged = [(r.method, r.path, r.verb, r.status) for r in world.requests[before:]]
    assert logged == [
        ("POST", CM_PATH, "create", 201),
        ("PATCH", f"{CM_PATH}/h-log", "patch", 200),
        ("POST", ARS_PATH, "create", 201),
        ("PATCH", f"{ARS_PATH}/h-log", "patch", 200),
        ("GET", f"{CM_PATH}/h-missing", "get", 404),
        ("GET", CM_PATH, "list", 200),
    ]
    # The content types the client chose (kubernetes_asyncio picks strategic merge for a core dict patch).
    assert [r.content_type for r in world.requests[before : before + 4]] == [
        "application/json",
        "application/strategic-merge-patch+json",
        "application/json",
        "application/merge-patch+json",
    ]
    assert "labelSelector=test%3Dh-log" in world.requests[-1].query
    assert "limit=5" in world.requests[-1].query
    # Also served over HTTP for an emulator in another process.
    async with raw_get(world, "/_sim/requests") as resp:
        served = await resp.json()
    assert served[-1]["verb"] == "list"
    assert served[-1]["status"] == 200
