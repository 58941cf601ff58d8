"""The simulated ephemeral volume controller (kube-controller-manager's ``ephemeral-volume-controller``).

A pod's generic ephemeral volume (``volumes[].ephemeral.volumeClaimTemplate``) is a PersistentVolumeClaim
named ``<pod>-<volume>`` that lives as long as the pod: for each such volume of a pod that is not being
deleted, ``EphemeralVolumes`` creates the claim from the template (its labels, annotations and spec) with
the pod as its controller owner (``blockOwnerDeletion``), so the garbage collector removes it with the pod.
The scheduler waits for the claim to exist and be bound (``sim.volumebinding``); the volume binder and the
provisioner do the rest. A claim of that name that the pod does not own is left alone, as upstream does,
with a Warning Event on the pod; the pod then stays Pending.

Known limits: the controller's ``ephemeral_volume_create_*`` metrics and its event for a claim that
cannot be created for another reason are not simulated.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from sim import errors, recording
from sim.apiserver import ApiServer
from sim.claimbinding import CLAIMS
from sim.podcontrol import controlled_by, new_controller_ref
from sim.store import Event, Obj, ObjectKey
from sim.workqueue import QueueController, meta

log = logging.getLogger("arcsm.sim.ephemeralvolumes")

PODS = ("", "pods")
COMPONENT = "ephemeral-volume-controller"


def claim_name(pod: Obj, volume: Mapping[str, Any]) -> str:
    """The claim of a generic ephemeral volume: ``<pod>-<volume>``."""
    return f"{meta(pod)['name']}-{volume.get('name')}"


def claim_templates(pod: Obj) -> dict[str, dict[str, Any]]:
    """The claim each ephemeral volume of ``pod`` needs, by claim name."""
    found = {}
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        template = (
            (volume.get("ephemeral") or {}).get("volumeClaimTemplate") if isinstance(volume, dict) else None
        )
        if isinstance(template, dict):
            found[claim_name(pod, volume)] = template
    return found


class EphemeralVolumes(QueueController[ObjectKey]):
    """Creates the claims of pods' generic ephemeral volumes (run as a world controller)."""

    logger = log
    what = "ephemeral volumes: pod"
    ignored_codes = frozenset({404})

    def seed(self, api: ApiServer) -> None:
        for pod in api.store.items(PODS):
            self._queue.add((*PODS, meta(pod)["namespace"], meta(pod)["name"]))

    def on_event(self, event: Event) -> None:
        if event.key[:2] == PODS and event.type == "ADDED":
            self._queue.add(event.key)
        elif event.key[:2] == CLAIMS and event.type == "DELETED":
            # A claim deleted under a pod that still needs it is made again, as upstream's does on sync.
            for ref in meta(event.obj).get("ownerReferences") or []:
                if ref.get("kind") == "Pod" and ref.get("controller"):
                    self._queue.add((*PODS, event.key[2], str(ref.get("name"))))

    def handle(self, api: ApiServer, key: ObjectKey) -> None:
        pod = api.store.get(key)
        if pod is None or meta(pod).get("deletionTimestamp"):
            return
        namespace = str(meta(pod)["namespace"])
        claims = api.registry.get("", "v1", "persistentvolumeclaims")
        assert claims is not None
        for name, template in claim_templates(pod).items():
            existing = api.store.get((*CLAIMS, namespace, name))
            if existing is not None:
                if not controlled_by(existing, pod):
                    pod_name = f"{namespace}/{meta(pod)['name']}"
                    message = f"PVC {namespace}/{name} was not created for pod {pod_name} (pod is not owner)"
                    recording.record(
                        api, pod, recording.WARNING, "FailedBinding", message, component=COMPONENT
                    )
                continue
            template_meta = template.get("metadata") or {}
            body = {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": dict(template_meta.get("labels") or {}),
                    "annotations": dict(template_meta.get("annotations") or {}),
                    "ownerReferences": [new_controller_ref(pod)],
                },
                "spec": dict(template.get("spec") or {}),
            }
            try:
                api.create(claims, namespace, body)
            except errors.ApiError as err:
                if err.code != 409:  # made meanwhile: the next event of it settles this
                    raise
