"""What the simulated kubelet (``sim.kubelet``) needs of its API server: the node API.

A kubelet reads little and writes less: it lists and watches the pods bound to its node, reads what their
containers and volumes name (Secrets, ConfigMaps, PersistentVolumeClaims), writes their ``pods/status``,
makes the final delete of a pod it stopped, records Events about them, registers its Node (and renews its
Lease) and asks for service-account tokens bound to its pods. ``NodeApi`` is exactly that, async, so the
same kubelet runs in two worlds:

* ``sim.inprocessapi.InProcessNodeApi`` calls the emulator's ``sim.apiserver.ApiServer`` in process
  (no HTTP, no copies: the emulated world keeps its speed);
* ``sim.node.httpapi.HttpNodeApi`` sends the same requests over HTTP(S) to any API server, as the Node
  authorizer lets a kubelet (a real control plane, ``sim.controlplane``).

Both report a refusal as ``sim.errors.ApiError`` (its ``code`` the HTTP status). Reads a pod worker makes
between two writes are synchronous: ``pod`` answers from the pods the watch has delivered, and
``objects(pod)`` gathers once what the pod refers to into an ``Objects`` view (the in-process one is the
store itself).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any, Protocol

from sim.store import Obj, ObjectKey

LEASE_NAMESPACE = "kube-node-lease"
LEASE_SECONDS = 40


class Objects(Protocol):
    """Objects read by key ``(group, plural, namespace, name)``: a store, or what a pod refers to."""

    def get(self, key: ObjectKey, /) -> Obj | None: ...


class NodeApi(Protocol):
    """The API server as one node's kubelet sees it."""

    def clock(self) -> datetime:
        """The API server's time (the emulator's may be a test's clock)."""
        ...

    def pod(self, namespace: str, name: str) -> Obj | None:
        """The pod as last delivered by ``pods`` (or written back by ``write_pod_status``); None if gone."""
        ...

    def pods(self, node: str) -> AsyncIterator[tuple[str, Obj]]:
        """``(event type, pod)`` for the pods bound to ``node``: each one there first (ADDED), then every
        change (ADDED, MODIFIED, DELETED) until cancelled. A pod deleted while nobody watched is
        delivered DELETED when it is noticed (after a relist)."""
        ...

    async def objects(self, pod: Obj) -> Objects:
        """What ``pod``'s containers and volumes read, as it is now: the Secrets, ConfigMaps and
        PersistentVolumeClaims it names in its namespace, the PersistentVolumes those claims are bound
        to, and ``default/kubernetes``'s Endpoints (where the API server is reached). A missing object is
        simply not there."""
        ...

    async def write_pod_status(self, pod: Obj, status: dict[str, Any]) -> Obj:
        """Replace ``pod``'s status (``pods/status``), on the pod of ``pod``'s uid only: 404 when it is
        gone, 409 when another pod of that name took its place. Returns the pod as stored."""
        ...

    async def delete_pod(self, namespace: str, name: str, uid: str) -> None:
        """The kubelet's final delete: grace period 0, precondition ``uid`` (404 / 409 as the server says)."""
        ...

    async def create_event(self, namespace: str, event: Obj) -> None:
        """Create a core/v1 Event."""
        ...

    async def patch_event(self, namespace: str, name: str, patch: dict[str, Any]) -> None:
        """Merge-patch an Event this node created (its count and lastTimestamp)."""
        ...

    async def register_node(self, node: Obj) -> Obj:
        """Create the Node, or bring the status of the one already there up to date."""
        ...

    async def renew_lease(self, node: Obj, seconds: int) -> None:
        """Create or renew the node's Lease in ``kube-node-lease``, held for ``seconds``."""
        ...

    async def request_token(self, namespace: str, account: str, request: Obj) -> Obj:
        """A TokenRequest for ``account``; the answer carries ``status.token`` and its expiry."""
        ...


def referenced(pod: Obj) -> set[tuple[str, str]]:
    """``(plural, name)`` of the Secrets, ConfigMaps and PersistentVolumeClaims ``pod`` names: in its
    containers' env and envFrom, its volumes (projected sources too) and its image pull secrets."""
    spec = pod.get("spec") or {}
    found: set[tuple[str, str]] = set()
    for entry in spec.get("imagePullSecrets") or []:
        found.add(("secrets", str(entry.get("name") or "")))
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for env in container.get("env") or []:
            source = (env or {}).get("valueFrom") or {}
            for key, plural in (("secretKeyRef", "secrets"), ("configMapKeyRef", "configmaps")):
                if isinstance(source.get(key), dict):
                    found.add((plural, str(source[key].get("name") or "")))
        for env in container.get("envFrom") or []:
            for key, plural in (("secretRef", "secrets"), ("configMapRef", "configmaps")):
                if isinstance((env or {}).get(key), dict):
                    found.add((plural, str(env[key].get("name") or "")))
    for volume in spec.get("volumes") or []:
        if isinstance(volume.get("secret"), dict):
            found.add(("secrets", str(volume["secret"].get("secretName") or "")))
        if isinstance(volume.get("configMap"), dict):
            found.add(("configmaps", str(volume["configMap"].get("name") or "")))
        if isinstance(volume.get("persistentVolumeClaim"), dict):
            found.add(("persistentvolumeclaims", str(volume["persistentVolumeClaim"].get("claimName") or "")))
        if isinstance(volume.get("ephemeral"), dict):  # its pod's claim (sim.ephemeralvolumes.claim_name)
            pod_name = (pod.get("metadata") or {}).get("name")
            found.add(("persistentvolumeclaims", f"{pod_name}-{volume.get('name')}"))
        for source in (volume.get("projected") or {}).get("sources") or []:
            if isinstance(source.get("secret"), dict):
                found.add(("secrets", str(source["secret"].get("name") or "")))
            if isinstance(source.get("configMap"), dict):
                found.add(("configmaps", str(source["configMap"].get("name") or "")))
    return {(plural, name) for plural, name in found if name}
