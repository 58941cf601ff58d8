"""The scheduler's volume checks (kube-scheduler's VolumeBinding plugin), for ``sim.scheduling``.

``check(api, pod, node)`` says whether a pod's PersistentVolumeClaims let it be bound to ``node`` now:

* a claim that does not exist, is being deleted or is Lost makes the pod unschedulable with the
  plugin's message (``persistentvolumeclaim "data" not found``, ``... is being deleted``, ``... bound
  to non-existent persistentvolume "pv"``), as does a claim of a missing StorageClass or an unbound
  claim whose class binds Immediately (``pod has unbound immediate PersistentVolumeClaims``): the pod
  stays Pending and gets ``PodScheduled=False`` with reason ``Unschedulable`` and the scheduler's
  message ``0/1 nodes are available: <why>. preemption: 0/1 nodes are available: 1 Preemption is not
  helpful for scheduling.``, plus a ``FailedScheduling`` event (``report_unschedulable``);
* an unbound claim of a ``WaitForFirstConsumer`` class gets the annotation
  ``volume.kubernetes.io/selected-node: <node>`` (PreBind) and the pod waits, unbound and without a
  condition, until the claim is Bound (``sim.claimbinding`` and ``sim.provisioning`` see to it);
* when every claim is Bound the pod may be bound.

Generic ephemeral volumes wait for their claim named ``<pod>-<volume>``, which ``sim.ephemeralvolumes``
creates; a claim of that name the pod does not own makes it unschedulable (``PVC ns/name was not created
for pod ns/pod (pod is not owner)``).

Known limits: one node, so volume node affinity and capacity are not checked; a pod waiting on its
claims is never given up on (kube-scheduler's bind timeout is ten minutes).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim import ephemeralvolumes, recording
from sim.apiserver import MERGE, ApiServer, format_time
from sim.claimbinding import CLAIMS, CLASSES, SELECTED_NODE, class_of, phase
from sim.podcontrol import controlled_by
from sim.store import Obj
from sim.workqueue import meta

COMPONENT = "default-scheduler"
# Storage types whose changes may make a waiting pod schedulable.
WATCHED = (CLAIMS, ("", "persistentvolumes"), CLASSES)


@dataclass(frozen=True)
class Verdict:
    bind: bool  # every claim is Bound: the pod may be bound
    unschedulable: str = ""  # why it cannot be (PodScheduled=False); "" while it only waits


def claim_names(pod: Obj) -> list[str]:
    """The claims a pod mounts (generic ephemeral volumes as ``<pod>-<volume>``)."""
    names = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if isinstance(volume.get("persistentVolumeClaim"), dict):
            names.append(str(volume["persistentVolumeClaim"].get("claimName") or ""))
        elif isinstance(volume.get("ephemeral"), dict):
            names.append(ephemeralvolumes.claim_name(pod, volume))
    return names


def check(api: ApiServer, pod: Obj, node: str) -> Verdict:
    namespace = str(meta(pod)["namespace"])
    claims: list[Obj] = []
    ephemeral = set(ephemeralvolumes.claim_templates(pod))
    for name in claim_names(pod):
        claim = api.store.get((*CLAIMS, namespace, name))
        if claim is None:
            return Verdict(False, f'persistentvolumeclaim "{name}" not found')
        if name in ephemeral and not controlled_by(claim, pod):
            pod_name = f"{namespace}/{meta(pod)['name']}"
            return Verdict(
                False, f"PVC {namespace}/{name} was not created for pod {pod_name} (pod is not owner)"
            )
        if phase(claim) == "Lost":
            volume = (claim.get("spec") or {}).get("volumeName") or ""
            return Verdict(
                False, f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume "{volume}"'
            )
        if meta(claim).get("deletionTimestamp"):
            return Verdict(False, f'persistentvolumeclaim "{name}" is being deleted')
        claims.append(claim)
    # Filter first, over every claim; only a pod that will wait gets its claims' node chosen (PreBind).
    unbound = [claim for claim in claims if phase(claim) != "Bound"]
    for claim in unbound:
        class_name = class_of(claim)
        storage_class = api.store.get((*CLASSES, "", class_name)) if class_name else None
        if class_name and storage_class is None:
            return Verdict(False, f'storageclass.storage.k8s.io "{class_name}" not found')
        if (storage_class or {}).get("volumeBindingMode") != "WaitForFirstConsumer":
            return Verdict(False, "pod has unbound immediate PersistentVolumeClaims")
    kind = api.registry.get("", "v1", "persistentvolumeclaims")
    assert kind is not None
    for claim in unbound:
        if (meta(claim).get("annotations") or {}).get(SELECTED_NODE) != node:
            patch = {"metadata": {"annotations": {SELECTED_NODE: node}, "uid": meta(claim)["uid"]}}
            api.patch(kind, namespace, meta(claim)["name"], patch, MERGE)
    return Verdict(not unbound)


def fit_error(why: str, nodes: int = 1) -> str:
    """``FitError.Error()`` for a PreFilter rejection, with the preemption plugin's verdict appended."""
    return (
        f"0/{nodes} nodes are available: {why}. preemption: 0/{nodes} nodes are available: "
        f"{nodes} Preemption is not helpful for scheduling."
    )


def report_unschedulable(api: ApiServer, pod: Obj, why: str) -> None:
    """``PodScheduled=False`` (reason Unschedulable) and a ``FailedScheduling`` event, once per message."""
    message = fit_error(why)
    status = dict(pod.get("status") or {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    current = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
    if current is not None and current.get("status") == "False" and current.get("message") == message:
        return
    conditions.append(
        {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": current["lastTransitionTime"]
            if current is not None and current.get("status") == "False"
            else format_time(api.clock()),
            "reason": "Unschedulable",
            "message": message,
        }
    )
    kind = api.registry.get("", "v1", "pods")
    assert kind is not None
    m = meta(pod)
    api.update(
        kind,
        m["namespace"],
        m["name"],
        {**pod, "status": {**status, "conditions": conditions}},
        subresource="status",
    )
    recording.record(api, pod, recording.WARNING, "FailedScheduling", message, component=COMPONENT)
