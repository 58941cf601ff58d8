"""The node API (``sim.nodeapi``) over HTTP(S): the kubelet as a client of any API server.

``HttpNodeApi`` sends a kubelet's requests through ``sim.node.kubeapi.KubeApi`` (JSON, authenticated as
``system:node:NAME`` by a client certificate on a real control plane), and asks only what the Node
authorizer allows a kubelet: its own Node and Lease, the pods bound to it (listed and watched with
``fieldSelector=spec.nodeName=NODE``) and their ``pods/status``, the Secrets, ConfigMaps and
PersistentVolumeClaims those pods name and the PersistentVolumes those claims are bound to, Events, and
tokens of their service accounts bound to them.

The pods the watch delivers are kept (``pod``), and a status write's answer replaces the one kept unless
the watch has delivered a newer one, so a pod worker reads its pod between two writes without a request.
A status write is a merge patch of the whole ``status`` carrying the pod's uid in ``metadata``, which
kube-apiserver refuses (409) for another pod of that name, as the kubelet's status manager does. A watch
that ends or fails is resumed from the last resourceVersion, or after a relist (410, or the API server
restarting), which reports the pods gone meanwhile as DELETED. A request the API server does not answer
(it is down or restarting) is sent again until it does, so a restart never ends a pod worker.

The API server's address for the ``kubernetes`` Service's variables in a container's environment is
where this client reaches it: ``objects`` answers ``default/kubernetes``'s Endpoints with it (kube-apiserver
runs without an endpoint reconciler here, and a node has no kube-proxy to route the Service).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiohttp

from sim import errors, nodeapi
from sim.node.kubeapi import ApiError, KubeApi
from sim.store import Obj, ObjectKey
from sim.timestamps import format_micro_time

log = logging.getLogger("arcsm.sim.kubelet")

T = TypeVar("T")
RELIST_DELAY = 0.5  # seconds before listing again after a watch failed
RETRY_FIRST, RETRY_MOST = 0.2, 2.0  # seconds between the tries of a request the API server did not answer


async def _call(request: Callable[[], Awaitable[T]], what: str = "a request") -> T:
    """The answer of ``request``, with the server's refusal as ``sim.errors.ApiError``. A request the API
    server did not answer (it is down, restarting, or did not answer in time) is sent again until it
    answers, as a kubelet's status manager keeps trying: a pod's containers keep running meanwhile."""
    delay = RETRY_FIRST
    while True:
        try:
            return await request()
        except ApiError as exc:
            raise errors.ApiError(exc.status, exc.reason, str(exc)) from None
        except (aiohttp.ClientError, TimeoutError, json.JSONDecodeError) as exc:  # a cut or missing answer
            log.debug(
                "kubelet: the API server did not answer %s (%s); asking again in %.1f s", what, exc, delay
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MOST)


def _version(obj: Obj) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _key(pod: Obj) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


class HttpNodeApi:
    """``sim.nodeapi.NodeApi`` through ``KubeApi``."""

    def __init__(self, api: KubeApi) -> None:
        self.api = api
        self._pods: dict[tuple[str, str], Obj] = {}

    def clock(self) -> datetime:
        return datetime.now(UTC)

    def pod(self, namespace: str, name: str) -> Obj | None:
        return self._pods.get((namespace, name))

    def _keep(self, pod: Obj) -> None:
        key = _key(pod)
        kept = self._pods.get(key)
        same = kept is not None and (kept.get("metadata") or {}).get("uid") == pod["metadata"].get("uid")
        if not same or kept is None or _version(pod) >= _version(kept):
            self._pods[key] = pod

    def _drop(self, pod: Obj) -> None:
        key = _key(pod)
        kept = self._pods.get(key)
        if kept is not None and kept["metadata"].get("uid") == pod["metadata"].get("uid"):
            del self._pods[key]

    async def pods(self, node: str) -> AsyncIterator[tuple[str, Obj]]:
        selector = {"fieldSelector": f"spec.nodeName={node}"}
        version = ""
        while True:
            try:
                if not version:
                    listed = await self.api.get("/api/v1/pods", selector)
                    present = {_key(p): p for p in listed.get("items") or []}
                    for key, kept in list(self._pods.items()):
                        uid = kept["metadata"].get("uid")
                        if key not in present or present[key]["metadata"].get("uid") != uid:
                            self._drop(kept)
                            yield "DELETED", kept
                    for pod in present.values():
                        self._keep(pod)
                        yield "ADDED", pod
                    version = str(listed["metadata"]["resourceVersion"])
                async for event in self.api.watch("/api/v1/pods", {**selector, "resourceVersion": version}):
                    kind, obj = str(event.get("type")), event.get("object") or {}
                    if kind == "ERROR":
                        raise ApiError("WATCH", "/api/v1/pods", int(obj.get("code") or 500), obj)
                    version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                    if kind == "BOOKMARK":
                        continue
                    if kind == "DELETED":
                        self._drop(obj)
                    else:
                        self._keep(obj)
                    yield kind, obj
            except Exception as exc:
                # A kubelet keeps watching whatever went wrong: list again (410, a restarted server).
                log.debug("kubelet: the pod watch of %s ended (%s); listing again", node, exc)
                version = ""
                await asyncio.sleep(RELIST_DELAY)

    async def objects(self, pod: Obj) -> nodeapi.Objects:
        namespace = _key(pod)[0]
        found: dict[ObjectKey, Obj] = {}
        for plural, name in sorted(nodeapi.referenced(pod)):
            obj = await self._read(f"/api/v1/namespaces/{namespace}/{plural}/{name}")
            if obj is not None:
                found[("", plural, namespace, name)] = obj
            # The volume a claim is bound to, where the claim is mounted from (the Node authorizer's graph
            # lets a node read it through its pod and the claim).
            volume = str(((obj or {}).get("spec") or {}).get("volumeName") or "")
            if plural == "persistentvolumeclaims" and volume:
                bound = await self._read(f"/api/v1/persistentvolumes/{volume}")
                if bound is not None:
                    found[("", "persistentvolumes", "", volume)] = bound
        found[("", "endpoints", "default", "kubernetes")] = self._api_endpoints()
        return found

    async def _read(self, path: str) -> Obj | None:
        try:
            return await _call(lambda: self.api.get(path))
        except errors.ApiError as exc:  # not there, or not yet known to the Node authorizer's graph
            if exc.code not in (403, 404):
                raise
            return None

    def _api_endpoints(self) -> Obj:
        url = urlsplit(self.api.url)
        port = url.port or (443 if url.scheme == "https" else 80)
        subset = {"addresses": [{"ip": url.hostname or ""}], "ports": [{"name": "https", "port": port}]}
        return {"metadata": {"name": "kubernetes", "namespace": "default"}, "subsets": [subset]}

    async def write_pod_status(self, pod: Obj, status: dict[str, Any]) -> Obj:
        namespace, name = _key(pod)
        patch = {"metadata": {"uid": pod["metadata"]["uid"]}, "status": status}
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/status"
        stored = await _call(lambda: self.api.patch(path, patch), f"the status of pod {namespace}/{name}")
        self._keep(stored)
        return stored

    async def delete_pod(self, namespace: str, name: str, uid: str) -> None:
        options = {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}}
        await _call(lambda: self.api.delete(f"/api/v1/namespaces/{namespace}/pods/{name}", options))

    async def create_event(self, namespace: str, event: Obj) -> None:
        body = {"apiVersion": "v1", "kind": "Event", **event}
        await _call(lambda: self.api.create(f"/api/v1/namespaces/{namespace}/events", body))

    async def patch_event(self, namespace: str, name: str, patch: dict[str, Any]) -> None:
        await _call(lambda: self.api.patch(f"/api/v1/namespaces/{namespace}/events/{name}", patch))

    async def register_node(self, node: Obj) -> Obj:
        name = node["metadata"]["name"]
        try:
            await _call(lambda: self.api.create("/api/v1/nodes", node))
        except errors.ApiError as err:  # 409: registered before, its status is brought up to date
            if err.code != 409:
                raise
        return await _call(lambda: self.api.patch(f"/api/v1/nodes/{name}/status", {"status": node["status"]}))

    async def renew_lease(self, node: Obj, seconds: int) -> None:
        meta = node["metadata"]
        leases = f"/apis/coordination.k8s.io/v1/namespaces/{nodeapi.LEASE_NAMESPACE}/leases"
        spec = {
            "holderIdentity": meta["name"],
            "leaseDurationSeconds": seconds,
            "renewTime": format_micro_time(self.clock()),
        }
        try:
            await _call(lambda: self.api.patch(f"{leases}/{meta['name']}", {"spec": spec}))
            return
        except errors.ApiError as err:
            if err.code != 404:
                raise
        owner = {"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta["uid"]}
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": meta["name"],
                "namespace": nodeapi.LEASE_NAMESPACE,
                "ownerReferences": [owner],
            },
            "spec": spec,
        }
        await _call(lambda: self.api.create(leases, body))

    async def request_token(self, namespace: str, account: str, request: Obj) -> Obj:
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", **request}
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token"
        return await _call(lambda: self.api.create(path, body))
