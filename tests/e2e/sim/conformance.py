"""Helpers shared by the emulator conformance tests (tests/e2e/sim/test_conformance_*.py).

Inputs: kubernetes_asyncio API objects built on the ``kube`` fixture, or the ``world`` fixture for raw HTTP
(tests/conftest.py). Outputs: request bodies (AutoscalingRunnerSets, pods), the decoded ``Status`` body of
an ``ApiException``, raw HTTP answers and watch events. Nothing is mocked: every helper talks to the
emulator over real HTTP, through kubernetes_asyncio or aiohttp.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World
from tests import worlds
from tests.helpers import eventually

NS = "default"
GROUP, VERSION, ARS = "actions.github.com", "v1alpha1", "autoscalingrunnersets"
MERGE = "application/merge-patch+json"
# Containers that keep running until stopped (busybox's default shell would exit at once).
SLEEP = ["sleep", "3600"]
MINIMAL_ARS_SPEC: dict[str, Any] = {
    "githubConfigUrl": "https://github.com/example",
    "githubConfigSecret": "gh",
}


# -- object builders ----------------------------------------------------------------------------------


def ars(name: str | None = None, *, spec: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    """A minimal AutoscalingRunnerSet (the CRD requires no spec field); ``spec`` replaces the minimal spec."""
    meta: dict[str, Any] = {} if name is None else {"name": name}
    meta.update(metadata)
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "AutoscalingRunnerSet",
        "metadata": meta,
        "spec": copy.deepcopy(MINIMAL_ARS_SPEC if spec is None else spec),
    }


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def rv(obj: Any) -> int:
    """The resourceVersion of a raw (dict) or typed object, as an int."""
    if isinstance(obj, dict):
        return int(obj["metadata"]["resourceVersion"])
    return int(obj.metadata.resource_version)


# -- AutoscalingRunnerSets through CustomObjectsApi ---------------------------------------------------


async def create_ars(
    custom: client.CustomObjectsApi, name: str, *, spec: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    created: dict[str, Any] = await custom.create_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, ars(name, spec=spec, **meta)
    )
    return created


async def get_ars(custom: client.CustomObjectsApi, name: str) -> dict[str, Any]:
    obj: dict[str, Any] = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, ARS, name)
    return obj


async def patch_ars(
    custom: client.CustomObjectsApi, name: str, body: Any, content_type: str = MERGE
) -> dict[str, Any]:
    obj: dict[str, Any] = await custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, name, body, _content_type=content_type
    )
    return obj


async def ars_events(
    custom: client.CustomObjectsApi,
    name: str,
    since: str,
    until: Callable[[str, dict[str, Any]], bool],
    within: float = 5.0,
) -> list[tuple[str, dict[str, Any]]]:
    """Watch ARS ``name`` from resourceVersion ``since`` until ``until(type, object)``; return the events."""
    seen: list[tuple[str, dict[str, Any]]] = []
    async with asyncio.timeout(within), watch.Watch() as w:
        async for event in w.stream(
            custom.list_namespaced_custom_object,
            GROUP,
            VERSION,
            NS,
            ARS,
            field_selector=f"metadata.name={name}",
            resource_version=since,
        ):
            seen.append((event["type"], event["raw_object"]))
            if until(event["type"], event["raw_object"]):
                break
    return seen


# -- namespace setup ----------------------------------------------------------------------------------


async def default_sa_ready(core: client.CoreV1Api, namespace: str = NS) -> None:
    """Pods need the ``default`` ServiceAccount the ServiceAccount controller creates."""

    async def ready() -> bool:
        try:
            await core.read_namespaced_service_account("default", namespace)
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    await eventually(ready, what=f"ServiceAccount {namespace}/default")


# -- errors and Status bodies -------------------------------------------------------------------------


def status_body(exc: ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.body)
    return body


def failure(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Status body of an error, in the field order kube-apiserver writes it."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


async def api_error(coro: Any) -> ApiException:
    """The ApiException the awaitable ``coro`` raises."""
    with pytest.raises(ApiException) as caught:
        await coro
    return caught.value


async def error_status(call: Any) -> dict[str, Any]:
    """The Status body of the ApiException ``call`` (an awaitable) raises; its ``code`` is the HTTP status."""
    exc = await api_error(call)
    body = status_body(exc)
    assert body["code"] == exc.status
    return body


# -- raw HTTP -----------------------------------------------------------------------------------------


async def raw(world: World, method: str, path: str, body: Any = None, **params: str) -> tuple[int, Any]:
    """One JSON request over plain HTTP: (status, decoded body; the text of a plain-text answer)."""
    async with (
        aiohttp.ClientSession() as session,
        session.request(
            method, world.url + path, json=body, params=params or None, ssl=worlds.client_ssl(world)
        ) as resp,
    ):
        if resp.content_type != "application/json":
            return resp.status, await resp.text()
        return resp.status, await resp.json()


@contextlib.asynccontextmanager
async def raw_response(
    world: World, method: str, path: str, body: Any = None, content_type: str = "application/json"
) -> AsyncIterator[aiohttp.ClientResponse]:
    """One request over plain HTTP, the body (if any) JSON sent as ``content_type``; the response is open
    (not read) inside the block."""
    data = None if body is None else json.dumps(body)
    headers = {} if body is None else {"Content-Type": content_type}
    async with (
        aiohttp.ClientSession() as session,
        session.request(
            method, world.url + path, data=data, headers=headers, ssl=worlds.client_ssl(world)
        ) as resp,
    ):
        yield resp
