"""The simulated PersistentVolume controller (kube-controller-manager's ``persistentvolume`` binder) and
the PVC and PV protection controllers.

``VolumeBinder`` binds claims to volumes and tracks their phases as upstream's
``pv_controller.go`` does:

* a volume without ``claimRef`` becomes Available; a pending claim is bound to the volume whose
  ``claimRef`` names it (one its provisioner made for it), else to the smallest Available volume of its
  class (``""`` for none) with the access modes, volume mode and capacity it asks for. Binding writes,
  in upstream's order: the volume's ``claimRef`` (and ``pv.kubernetes.io/bound-by-controller: "yes"``
  when the controller set it), the volume's phase Bound, the claim's ``spec.volumeName`` with
  ``pv.kubernetes.io/bind-completed: "yes"`` (and ``bound-by-controller`` when the controller chose
  the volume), then the claim's status: phase Bound, its ``accessModes`` and the volume's ``capacity``;
* a claim whose class has ``volumeBindingMode: WaitForFirstConsumer`` is not bound until the scheduler
  has chosen a node for a pod that uses it (the annotation ``volume.kubernetes.io/selected-node``,
  written by ``sim.volumebinding``); it gets one ``WaitForFirstConsumer`` event meanwhile;
* a claim nothing matches, of a class with a provisioner, is handed to that provisioner: the
  annotations ``volume.kubernetes.io/storage-provisioner`` (and its beta twin) and an
  ``ExternalProvisioning`` event (``sim.provisioning`` makes the volume);
* a volume whose claim is gone becomes Released (Retain keeps it so; Delete is its provisioner's to
  act on); a bound claim whose volume is gone becomes Lost;
* PVC protection: a deleted claim keeps its ``kubernetes.io/pvc-protection`` finalizer while a pod
  that is scheduled and not terminal uses it; PV protection: a deleted volume keeps
  ``kubernetes.io/pv-protection`` while it is Bound.

Volume phase changes set ``status.lastPhaseTransitionTime``.

Known limits: no label selectors on claims, no volume node affinity checks (there is one node), no
in-tree volume plugins (a Delete volume nobody provisioned stays Released), no Recycle, no expansion.
"""

from __future__ import annotations

import logging
from typing import Any

from sim import errors, persistentvolumes, pods, recording
from sim.apiserver import MERGE, ApiServer, format_time
from sim.store import Event, Obj, ObjectKey
from sim.workqueue import QueueController, meta, served_kind

log = logging.getLogger("arcsm.sim.volumes")

COMPONENT = "persistentvolume-controller"
CLAIMS = ("", "persistentvolumeclaims")
VOLUMES = ("", "persistentvolumes")
CLASSES = ("storage.k8s.io", "storageclasses")
PODS = ("", "pods")
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def phase(obj: Obj | None) -> str:
    return str(((obj or {}).get("status") or {}).get("phase") or "")


def class_of(claim: Obj) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation, else ``spec.storageClassName``."""
    annotations = meta(claim).get("annotations") or {}
    if persistentvolumes.BETA_CLASS_ANNOTATION in annotations:
        return str(annotations[persistentvolumes.BETA_CLASS_ANNOTATION])
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def requested(claim: Obj) -> Any:
    return (((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")


def delay_binding(api: ApiServer, claim: Obj) -> bool:
    """``IsDelayBindingMode``: the claim's class binds on first consumer."""
    name = class_of(claim)
    storage_class = api.store.get((*CLASSES, "", name)) if name else None
    return (storage_class or {}).get("volumeBindingMode") == "WaitForFirstConsumer"


def claim_users(api: ApiServer, claim: Obj) -> list[Obj]:
    """Pods that are scheduled, not terminal, and mount ``claim`` (what PVC protection waits for)."""
    name = meta(claim)["name"]
    users = []
    for pod in api.store.items(PODS, meta(claim)["namespace"]):
        spec = pod.get("spec") or {}
        if not spec.get("nodeName") or phase(pod) in ("Succeeded", "Failed"):
            continue
        if any(
            (v.get("persistentVolumeClaim") or {}).get("claimName") == name for v in spec.get("volumes") or []
        ):
            users.append(pod)
    return users


def _quantity(value: Any) -> Any:
    try:
        return pods.parse_quantity(value)[0]
    except pods.QuantityError:
        return None


class VolumeBinder(QueueController[ObjectKey]):
    """Binds claims and volumes and guards them while in use (run as a world controller)."""

    logger = log
    what = "volumes: syncing"
    ignored_codes = frozenset({404, 409})

    def __init__(self) -> None:
        super().__init__()
        self._told: set[tuple[str, str]] = set()  # (claim uid, reason) of events already recorded

    def seed(self, api: ApiServer) -> None:
        for type_key in (CLAIMS, VOLUMES):
            for obj in api.store.items(type_key):
                self._queue.add((*type_key, meta(obj).get("namespace", ""), meta(obj)["name"]))

    def on_event(self, event: Event) -> None:
        type_key = event.key[:2]
        if type_key in (CLAIMS, VOLUMES):
            self._queue.add(event.key)
            if type_key == CLAIMS:
                # The volumes naming the claim see it appear, change or go.
                volume = ((event.obj.get("spec") or {}).get("volumeName")) or ""
                if volume:
                    self._queue.add((*VOLUMES, "", volume))
            else:
                ref = (event.obj.get("spec") or {}).get("claimRef") or {}
                if ref.get("name"):
                    self._queue.add((*CLAIMS, str(ref.get("namespace") or ""), str(ref["name"])))
        elif type_key == PODS and event.type != "ADDED":
            # A pod stopping or going away may release a claim being deleted.
            for volume in (event.obj.get("spec") or {}).get("volumes") or []:
                name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
                if name:
                    self._queue.add((*CLAIMS, event.key[2], str(name)))
        elif type_key == CLASSES and self._api is not None:
            # A class appeared or changed: pending claims of it may be provisioned now.
            for claim in self._api.store.items(CLAIMS):
                if phase(claim) != "Bound":
                    self._queue.add((*CLAIMS, meta(claim)["namespace"], meta(claim)["name"]))

    # -- sync ----------------------------------------------------------------------------------------------

    def handle(self, api: ApiServer, key: ObjectKey) -> None:
        obj = api.store.get(key)
        if obj is None:
            if key[:2] == CLAIMS:
                self._release_volumes_of(api, key)
            return
        if key[:2] == CLAIMS:
            self._sync_claim(api, obj)
        else:
            self._sync_volume(api, obj)

    def _told_once(self, obj: Obj, reason: str) -> bool:
        """True the first time ``reason`` is reported for ``obj``."""
        mark = (str(meta(obj)["uid"]), reason)
        if mark in self._told:
            return False
        self._told.add(mark)
        return True

    # -- claims --------------------------------------------------------------------------------------

    def _sync_claim(self, api: ApiServer, claim: Obj) -> None:
        m = meta(claim)
        if m.get("deletionTimestamp"):
            self._protect_claim(api, claim)
            return
        volume_name = (claim.get("spec") or {}).get("volumeName")
        if phase(claim) == "Bound" or (volume_name and (m.get("annotations") or {}).get(BIND_COMPLETED)):
            volume = api.store.get((*VOLUMES, "", str(volume_name or "")))
            if volume is None:
                self._claim_status(api, claim, "Lost", None)
                if self._told_once(claim, "ClaimLost"):
                    recording.record(
                        api,
                        claim,
                        recording.WARNING,
                        "ClaimLost",
                        "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
                        component=COMPONENT,
                    )
            elif phase(claim) != "Bound":
                self._bind(api, volume, claim)
            return
        if volume_name:
            volume = api.store.get((*VOLUMES, "", str(volume_name)))
            if volume is not None and not self._taken(volume, claim):
                self._bind(api, volume, claim)
            return
        delayed = delay_binding(api, claim)
        selected = (m.get("annotations") or {}).get(SELECTED_NODE)
        volume = self._best_match(api, claim, pre_bound_only=delayed and not selected)
        if volume is not None:
            self._bind(api, volume, claim)
            return
        if delayed and not selected:
            if self._told_once(claim, "WaitForFirstConsumer"):
                recording.record(
                    api,
                    claim,
                    recording.NORMAL,
                    "WaitForFirstConsumer",
                    "waiting for first consumer to be created before binding",
                    component=COMPONENT,
                )
            return
        self._provision(api, claim)

    def _provision(self, api: ApiServer, claim: Obj) -> None:
        """``provisionClaim``: hand the claim to its class's (external) provisioner."""
        class_name = class_of(claim)
        if not class_name:
            if self._told_once(claim, "FailedBinding"):
                message = "no persistent volumes available for this claim and no storage class is set"
                recording.record(api, claim, recording.NORMAL, "FailedBinding", message, component=COMPONENT)
            return
        storage_class = api.store.get((*CLASSES, "", class_name))
        if storage_class is None:
            if self._told_once(claim, "ProvisioningFailed"):
                message = f'storageclass.storage.k8s.io "{class_name}" not found'
                recording.record(
                    api, claim, recording.WARNING, "ProvisioningFailed", message, component=COMPONENT
                )
            return
        provisioner = str(storage_class.get("provisioner") or "")
        annotations = dict(meta(claim).get("annotations") or {})
        if annotations.get(STORAGE_PROVISIONER) != provisioner:
            annotations[STORAGE_PROVISIONER] = provisioner
            annotations[BETA_STORAGE_PROVISIONER] = provisioner
            patch = {"metadata": {"annotations": annotations, "uid": meta(claim)["uid"]}}
            claim = api.patch(
                served_kind(api, *CLAIMS), meta(claim)["namespace"], meta(claim)["name"], patch, MERGE
            ).body
        if self._told_once(claim, "ExternalProvisioning"):
            message = (
                f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or "
                "manually by the system administrator. If volume creation is delayed, please verify that the "
                "provisioner is running and correctly registered."
            )
            recording.record(
                api, claim, recording.NORMAL, "ExternalProvisioning", message, component=COMPONENT
            )

    def _protect_claim(self, api: ApiServer, claim: Obj) -> None:
        """PVC protection: drop the finalizer once no running pod uses the claim."""
        finalizers = list(meta(claim).get("finalizers") or [])
        if persistentvolumes.PVC_PROTECTION not in finalizers or claim_users(api, claim):
            return
        remaining = [f for f in finalizers if f != persistentvolumes.PVC_PROTECTION]
        patch = {"metadata": {"finalizers": remaining or None, "uid": meta(claim)["uid"]}}
        api.patch(served_kind(api, *CLAIMS), meta(claim)["namespace"], meta(claim)["name"], patch, MERGE)

    def _taken(self, volume: Obj, claim: Obj) -> bool:
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        if not ref:
            return False
        return not (
            ref.get("name") == meta(claim)["name"]
            and ref.get("namespace") == meta(claim)["namespace"]
            and ref.get("uid") in (None, "", meta(claim)["uid"])
        )

    def _best_match(self, api: ApiServer, claim: Obj, *, pre_bound_only: bool) -> Obj | None:
        """``findBestMatchForClaim``: a volume pre-bound to the claim, else the smallest that fits."""
        fitting: list[tuple[Any, str, Obj]] = []
        spec = claim.get("spec") or {}
        want = _quantity(requested(claim))
        modes = set(spec.get("accessModes") or [])
        for volume in api.store.items(VOLUMES):
            vspec = volume.get("spec") or {}
            if meta(volume).get("deletionTimestamp"):
                continue
            ref = vspec.get("claimRef") or {}
            if ref:
                if not self._taken(volume, claim):
                    return volume
                continue
            if pre_bound_only or phase(volume) != "Available":
                continue
            size = _quantity((vspec.get("capacity") or {}).get("storage"))
            if (
                str(vspec.get("storageClassName") or "") != class_of(claim)
                or not modes <= set(vspec.get("accessModes") or [])
                or (vspec.get("volumeMode") or "Filesystem") != (spec.get("volumeMode") or "Filesystem")
                or size is None
                or want is None
                or size < want
            ):
                continue
            fitting.append((size, meta(volume)["name"], volume))
        return min(fitting, key=lambda f: (f[0], f[1]))[2] if fitting else None

    # -- binding -------------------------------------------------------------------------------------

    def _bind(self, api: ApiServer, volume: Obj, claim: Obj) -> None:
        """``bind``: volume claimRef, volume phase, claim volumeName and annotations, claim status."""
        volume_kind, claim_kind = served_kind(api, *VOLUMES), served_kind(api, *CLAIMS)
        cmeta = meta(claim)
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        if ref.get("uid") != cmeta["uid"]:
            annotations = {**(meta(volume).get("annotations") or {}), BOUND_BY_CONTROLLER: "yes"}
            claim_ref = {
                "kind": "PersistentVolumeClaim",
                "namespace": cmeta["namespace"],
                "name": cmeta["name"],
                "uid": cmeta["uid"],
                "apiVersion": "v1",
                "resourceVersion": cmeta["resourceVersion"],
            }
            body = {
                **volume,
                "metadata": {**volume["metadata"], "annotations": annotations},
                "spec": {**(volume.get("spec") or {}), "claimRef": claim_ref},
            }
            volume = api.update(volume_kind, "", meta(volume)["name"], body).body
        volume = self._volume_phase(api, volume, "Bound")
        annotations = dict(cmeta.get("annotations") or {})
        spec = dict(claim.get("spec") or {})
        if spec.get("volumeName") != meta(volume)["name"]:
            spec["volumeName"] = meta(volume)["name"]
            annotations[BOUND_BY_CONTROLLER] = "yes"
        annotations[BIND_COMPLETED] = "yes"
        if annotations != (cmeta.get("annotations") or {}) or spec != claim.get("spec"):
            body = {**claim, "metadata": {**claim["metadata"], "annotations": annotations}, "spec": spec}
            claim = api.update(claim_kind, cmeta["namespace"], cmeta["name"], body).body
        self._claim_status(api, claim, "Bound", volume)

    def _claim_status(self, api: ApiServer, claim: Obj, new_phase: str, volume: Obj | None) -> None:
        status: dict[str, Any] = {**(claim.get("status") or {}), "phase": new_phase}
        if volume is not None:
            vspec = volume.get("spec") or {}
            status["accessModes"] = list(vspec.get("accessModes") or [])
            status["capacity"] = dict(vspec.get("capacity") or {})
        if status != claim.get("status"):
            cmeta = meta(claim)
            api.update(
                served_kind(api, *CLAIMS),
                cmeta["namespace"],
                cmeta["name"],
                {**claim, "status": status},
                subresource="status",
            )

    def _volume_phase(self, api: ApiServer, volume: Obj, new_phase: str) -> Obj:
        status = dict(volume.get("status") or {})
        if status.get("phase") == new_phase:
            return volume
        status["phase"] = new_phase
        status["lastPhaseTransitionTime"] = format_time(api.clock())
        body = {**volume, "status": status}
        return api.update(
            served_kind(api, *VOLUMES), "", meta(volume)["name"], body, subresource="status"
        ).body

    # -- volumes -------------------------------------------------------------------------------------

    def _sync_volume(self, api: ApiServer, volume: Obj) -> None:
        m = meta(volume)
        if m.get("deletionTimestamp"):
            self._protect_volume(api, volume)
            return
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        if not ref:
            if phase(volume) in ("", "Pending", "Released"):
                self._volume_phase(api, volume, "Available")
            return
        claim = api.store.get((*CLAIMS, str(ref.get("namespace") or ""), str(ref.get("name") or "")))
        if claim is not None and ref.get("uid") in (None, "", meta(claim)["uid"]):
            if phase(volume) != "Bound" and (claim.get("spec") or {}).get("volumeName") in (
                None,
                "",
                m["name"],
            ):
                self._queue.add((*CLAIMS, meta(claim)["namespace"], meta(claim)["name"]))
            return
        if phase(volume) in ("Released", "Failed"):
            return
        if phase(volume) == "Bound" or ref.get("uid"):
            # The claim is gone (or replaced): the volume is released to its reclaim policy.
            self._volume_phase(api, volume, "Released")
        else:
            # Pre-bound to a claim that does not exist yet.
            self._volume_phase(api, volume, "Available")

    def _release_volumes_of(self, api: ApiServer, key: ObjectKey) -> None:
        for volume in api.store.items(VOLUMES):
            ref = (volume.get("spec") or {}).get("claimRef") or {}
            if ref.get("namespace") == key[2] and ref.get("name") == key[3]:
                self._queue.add((*VOLUMES, "", meta(volume)["name"]))

    def _protect_volume(self, api: ApiServer, volume: Obj) -> None:
        """PV protection: drop the finalizer once the volume is not Bound."""
        finalizers = list(meta(volume).get("finalizers") or [])
        if persistentvolumes.PV_PROTECTION not in finalizers or phase(volume) == "Bound":
            return
        remaining = [f for f in finalizers if f != persistentvolumes.PV_PROTECTION]
        patch = {"metadata": {"finalizers": remaining or None, "uid": meta(volume)["uid"]}}
        try:
            api.patch(served_kind(api, *VOLUMES), "", meta(volume)["name"], patch, MERGE)
        except errors.ApiError as err:
            if err.code not in (404, 409):
                raise
