"""The simulated dynamic provisioner: local-path volumes backed by directories the world owns.

``LocalPathProvisioner`` plays what an external provisioner such as rancher's local-path-provisioner
(the one kind clusters ship) does, for the StorageClasses naming ``PROVISIONER``:

* ``storage_class()`` is the class a world creates at start: ``standard``, annotated
  ``storageclass.kubernetes.io/is-default-class: "true"``, reclaim policy Delete and
  ``volumeBindingMode: WaitForFirstConsumer`` - a local-path volume lives on one node, so, as kind's
  ``standard`` class does, it is made only once a pod using the claim is scheduled and its node
  chosen (``volume.kubernetes.io/selected-node``). A class of this provisioner with ``Immediate``
  binding gets its volumes as soon as the claim is handed over.
* A pending claim that ``sim.claimbinding`` handed to this provisioner (the annotation
  ``volume.kubernetes.io/storage-provisioner``) gets a directory ``<root>/pvc-<uid>_<namespace>_<name>``
  and a PersistentVolume ``pvc-<claim uid>``: the requested capacity, the claim's access modes and
  volume mode, the class's reclaim policy, a ``claimRef`` to the claim, a ``hostPath`` source at the
  directory and node affinity to the node, annotated ``pv.kubernetes.io/provisioned-by``; events
  ``Provisioning`` and ``ProvisioningSucceeded`` on the claim. The binder then binds the two.
* A Released volume it provisioned with reclaim policy Delete: its directory is removed, then the
  volume is deleted (its ``pv-protection`` finalizer is the binder's to drop).
* ``claim_path(namespace, name)`` is where a claim's data lives on the host, for a kubelet that mounts
  it into process containers: the directory of the volume a Bound claim is bound to (its ``hostPath``
  or ``local`` path), else None.

``root`` is set by the world (``use(root)``) to a directory under its temporary state directory,
which the world removes when it stops.

Known limits: capacity is not enforced (a directory holds whatever is written to it); no
``allowedTopologies``, no volume expansion, no ``Block`` volumes (a Block claim gets a directory too);
a volume is made for the first node the scheduler picks, as upstream, and never moved.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from sim import errors, persistentvolumes, recording, scheduling
from sim.apiserver import ApiServer
from sim.claimbinding import (
    CLAIMS,
    CLASSES,
    PROVISIONED_BY,
    SELECTED_NODE,
    STORAGE_PROVISIONER,
    VOLUMES,
    phase,
)
from sim.store import Event, Obj, ObjectKey
from sim.workqueue import QueueController, meta, served_kind

log = logging.getLogger("arcsm.sim.provisioning")

PROVISIONER = "sim.arcsm.io/local-path"
DEFAULT_CLASS = "standard"


def storage_class(name: str = DEFAULT_CLASS, *, binding: str = "WaitForFirstConsumer") -> Obj:
    """A StorageClass of this provisioner (the world's default one by default)."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "annotations": {persistentvolumes.DEFAULT_CLASS_ANNOTATION: "true"}},
        "provisioner": PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": binding,
    }


class LocalPathProvisioner(QueueController[ObjectKey]):
    """Provisions and deletes the volumes of ``PROVISIONER`` (run as a world controller)."""

    logger = log
    what = "provisioning: syncing"
    ignored_codes = frozenset({404, 409})

    def __init__(self, *, node: str = scheduling.NODE) -> None:
        super().__init__()
        self.node = node
        self.root: Path | None = None

    def use(self, root: Path) -> None:
        """Keep volumes under ``root`` (created if missing)."""
        root.mkdir(parents=True, exist_ok=True)
        self.root = root

    def seed(self, api: ApiServer) -> None:
        for type_key in (CLAIMS, VOLUMES):
            for obj in api.store.items(type_key):
                self._queue.add((*type_key, meta(obj).get("namespace", ""), meta(obj)["name"]))

    def on_event(self, event: Event) -> None:
        if event.key[:2] in (CLAIMS, VOLUMES) and event.type != "DELETED":
            self._queue.add(event.key)

    # -- the hook for the kubelet ---------------------------------------------------------------------

    def claim_path(self, namespace: str, name: str) -> Path | None:
        """The host directory of claim ``namespace/name`` once it is Bound; None before (or without one)."""
        if self._api is None:
            return None
        claim = self._api.store.get((*CLAIMS, namespace, name))
        if claim is None or phase(claim) != "Bound":
            return None
        volume = self._api.store.get((*VOLUMES, "", str((claim.get("spec") or {}).get("volumeName") or "")))
        spec = (volume or {}).get("spec") or {}
        source = spec.get("hostPath") or spec.get("local") or {}
        return Path(source["path"]) if source.get("path") else None

    # -- sync ----------------------------------------------------------------------------------------

    def handle(self, api: ApiServer, key: ObjectKey) -> None:
        obj = api.store.get(key)
        if obj is None:
            return
        if key[:2] == CLAIMS:
            self._maybe_provision(api, obj)
        else:
            self._maybe_delete(api, obj)

    def _class_of(self, api: ApiServer, claim: Obj) -> Obj | None:
        name = str((claim.get("spec") or {}).get("storageClassName") or "")
        storage_class = api.store.get((*CLASSES, "", name)) if name else None
        return storage_class if (storage_class or {}).get("provisioner") == PROVISIONER else None

    def _maybe_provision(self, api: ApiServer, claim: Obj) -> None:
        m = meta(claim)
        annotations = m.get("annotations") or {}
        storage_class = self._class_of(api, claim)
        if (
            storage_class is None
            or self.root is None
            or m.get("deletionTimestamp")
            or phase(claim) != "Pending"
            or (claim.get("spec") or {}).get("volumeName")
            or annotations.get(STORAGE_PROVISIONER) != PROVISIONER
        ):
            return
        selected = annotations.get(SELECTED_NODE)
        if storage_class.get("volumeBindingMode") == "WaitForFirstConsumer" and not selected:
            return
        name = f"pvc-{m['uid']}"
        if api.store.get((*VOLUMES, "", name)) is not None:
            return
        recording.record(
            api,
            claim,
            recording.NORMAL,
            "Provisioning",
            f'External provisioner is provisioning volume for claim "{m["namespace"]}/{m["name"]}"',
            component=PROVISIONER,
        )
        directory = self.root / f"{name}_{m['namespace']}_{m['name']}"
        directory.mkdir(parents=True, exist_ok=True)
        try:
            api.create(
                served_kind(api, *VOLUMES), "", self._volume(claim, storage_class, name, directory, selected)
            )
        except errors.ApiError as err:
            shutil.rmtree(directory, ignore_errors=True)
            message = (
                f"failed to provision volume with StorageClass {meta(storage_class)['name']!r}: {err.message}"
            )
            recording.record(
                api, claim, recording.WARNING, "ProvisioningFailed", message, component=PROVISIONER
            )
            return
        message = f"Successfully provisioned volume {name}"
        recording.record(
            api, claim, recording.NORMAL, "ProvisioningSucceeded", message, component=PROVISIONER
        )

    def _volume(self, claim: Obj, storage_class: Obj, name: str, directory: Path, node: str | None) -> Obj:
        m = meta(claim)
        spec = claim.get("spec") or {}
        storage: Any = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {PROVISIONED_BY: PROVISIONER}},
            "spec": {
                "capacity": {"storage": storage},
                "accessModes": list(spec.get("accessModes") or []),
                "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
                "storageClassName": meta(storage_class)["name"],
                "volumeMode": spec.get("volumeMode") or "Filesystem",
                "claimRef": {
                    "kind": "PersistentVolumeClaim",
                    "namespace": m["namespace"],
                    "name": m["name"],
                    "uid": m["uid"],
                    "apiVersion": "v1",
                    "resourceVersion": m["resourceVersion"],
                },
                "hostPath": {"path": str(directory), "type": "DirectoryOrCreate"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": [node or self.node],
                                    }
                                ]
                            }
                        ]
                    }
                },
            },
        }

    def _maybe_delete(self, api: ApiServer, volume: Obj) -> None:
        m = meta(volume)
        spec = volume.get("spec") or {}
        if (
            (m.get("annotations") or {}).get(PROVISIONED_BY) != PROVISIONER
            or phase(volume) != "Released"
            or spec.get("persistentVolumeReclaimPolicy") != "Delete"
            or m.get("deletionTimestamp")
        ):
            return
        path = Path(str((spec.get("hostPath") or {}).get("path") or ""))
        if self.root is not None and path.is_relative_to(self.root) and path != self.root:
            shutil.rmtree(path, ignore_errors=True)
        api.delete(served_kind(api, *VOLUMES), "", m["name"], {"preconditions": {"uid": m["uid"]}})
