"""The node API (``sim.nodeapi``) of the emulated world: the kubelet calls ``sim.apiserver.ApiServer`` in
process, as the emulator's other controllers do.

No HTTP and no copies: ``pod`` and ``objects`` read the store itself, a pod status write is the
``update`` of ``pods/status`` a request would make, and the pod watch is a listener on the store. Going
over HTTP instead (``sim.node.httpapi`` against the emulator's own loopback port) would cost every status
write, Event and watch event a request, a JSON round trip and the server's admission chain, for nothing a
test could tell apart: the HTTP path is exercised on the real control plane.

The emulator has no node lifecycle controller and no ``kube-node-lease`` namespace: a Lease renewal
is not asked for here (``sim.kubelet.Kubelet`` renews only with ``lease_seconds``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from sim import errors, tokenrequests
from sim.apiserver import MERGE, ApiServer
from sim.kinds import Kind
from sim.nodeapi import LEASE_NAMESPACE, Objects
from sim.store import Event, Obj
from sim.workqueue import served_kind

MANAGER = "kubelet"


class InProcessNodeApi:
    """``sim.nodeapi.NodeApi`` over the emulator's API server, in process."""

    def __init__(self, api: ApiServer) -> None:
        self.api = api

    def _kind(self, group: str, plural: str) -> Kind:
        return served_kind(self.api, group, plural)

    def clock(self) -> datetime:
        return self.api.clock()

    def pod(self, namespace: str, name: str) -> Obj | None:
        return self.api.store.get(("", "pods", namespace, name))

    async def pods(self, node: str) -> AsyncIterator[tuple[str, Obj]]:
        queue: asyncio.Queue[Event] = asyncio.Queue()

        def on_event(event: Event) -> None:
            if event.key[:2] == ("", "pods"):
                queue.put_nowait(event)

        store = self.api.store
        store.add_listener(on_event)
        try:
            for pod in store.items(("", "pods")):
                if _node_of(pod) == node:
                    yield "ADDED", pod
            while True:
                event = await queue.get()
                # Pods are bound once; a deletion is passed on whatever node it named (the kubelet
                # knows the pods it serves).
                if event.type == "DELETED" or _node_of(event.obj) == node:
                    yield event.type, event.obj
        finally:
            store.remove_listener(on_event)

    async def objects(self, pod: Obj) -> Objects:
        return self.api.store

    async def write_pod_status(self, pod: Obj, status: dict[str, Any]) -> Obj:
        meta = pod.get("metadata") or {}
        namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        stored = self.pod(namespace, name)
        if stored is None:
            raise errors.not_found("pods", "", name)
        if (stored.get("metadata") or {}).get("uid") != meta.get("uid"):
            why = f"Precondition failed: UID in precondition: {meta.get('uid')}, UID in object meta: "
            raise errors.conflict("pods", "", name, why + str(stored["metadata"].get("uid")))
        body = {**stored, "status": status}
        kind = self._kind("", "pods")
        return self.api.update(kind, namespace, name, body, subresource="status").body

    async def delete_pod(self, namespace: str, name: str, uid: str) -> None:
        options = {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}}
        self.api.delete(self._kind("", "pods"), namespace, name, options)

    async def create_event(self, namespace: str, event: Obj) -> None:
        self.api.create(self._kind("", "events"), namespace, event)

    async def patch_event(self, namespace: str, name: str, patch: dict[str, Any]) -> None:
        self.api.patch(self._kind("", "events"), namespace, name, patch, MERGE)

    async def register_node(self, node: Obj) -> Obj:
        kind = self._kind("", "nodes")
        try:
            return self.api.create(kind, "", node, manager=MANAGER).body
        except errors.ApiError as err:
            if err.code != 409:
                raise
        name = str(node["metadata"]["name"])
        existing = self.api.get(kind, "", name)
        body = {**existing, "status": node["status"]}
        return self.api.update(kind, "", name, body, subresource="status").body

    async def renew_lease(self, node: Obj, seconds: int) -> None:
        raise errors.not_found("namespaces", "", LEASE_NAMESPACE)

    async def request_token(self, namespace: str, account: str, request: Obj) -> Obj:
        return tokenrequests.create_token(self.api, namespace, account, request).body


def _node_of(pod: Obj) -> str:
    spec = pod.get("spec")
    return str(spec.get("nodeName") or "") if isinstance(spec, dict) else ""
