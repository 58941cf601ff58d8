"""What the simulated workload controllers share (kube-controller-manager's ``controller_utils.go``,
``podutil`` and ``history``): controller references, pods made from templates, pod readiness and
availability, template hashes and label selectors of stored objects.

Pure functions over stored objects (JSON-shaped dicts); nothing here writes.

* ``controller_ref`` / ``new_controller_ref`` - the ``ownerReferences`` entry with ``controller: true``
  (``blockOwnerDeletion: true`` on the ones the controllers write, as ``metav1.NewControllerRef``).
* ``pod_from_template`` - ``GetPodFromTemplate``: labels, annotations and finalizers of the template,
  ``generateName: <owner>-``, the controller reference and the template's spec.
* ``is_active``, ``is_ready``, ``ready_since``, ``available_in`` - ``IsPodActive``, ``IsPodReady`` and
  ``IsPodAvailable`` with ``minReadySeconds`` (a pod is available once its Ready condition has been True
  for longer than ``minReadySeconds``; ``available_in`` says how long until then).
* ``template_hash`` - the ``pod-template-hash`` / ControllerRevision hash: FNV-1a (32 bit) of the object
  with the collision count appended, its decimal digits mapped onto the name alphabet as
  ``rand.SafeEncodeString`` does, so values look like upstream's (``5d4f8c9b76``). Upstream hashes Go's
  ``spew`` dump of the typed struct; this hashes canonical JSON, so a template hashes to another value
  than on a real cluster (the format and the collision handling are the same).

Known limits: ``semantically_equal`` treats missing, null and empty lists and maps alike (as Go's
semantic equality does for nil and empty) but compares everything else exactly.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sim import selectors
from sim.store import Obj
from sim.workqueue import meta

NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def controller_ref(obj: Obj | None) -> dict[str, Any] | None:
    """The ownerReference with ``controller: true`` (``metav1.GetControllerOf``)."""
    for ref in meta(obj).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def controlled_by(obj: Obj | None, owner: Obj) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.get("uid") == meta(owner).get("uid")


def new_controller_ref(owner: Obj) -> dict[str, Any]:
    """``metav1.NewControllerRef``: a controller reference that blocks the owner's foreground deletion."""
    m = meta(owner)
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": m["name"],
        "uid": m["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pods_prefix(owner_name: str) -> str:
    """``getPodsPrefix``: ``<name>-`` (the dash makes generated names prettier)."""
    return f"{owner_name}-"


def pod_from_template(template: Mapping[str, Any], owner: Obj) -> Obj:
    """``GetPodFromTemplate``: a pod to create for ``owner`` (a ReplicaSet or a StatefulSet)."""
    tmeta = template.get("metadata") or {}
    pod_meta: Obj = {"generateName": pods_prefix(meta(owner)["name"])}
    for key in ("labels", "annotations", "finalizers"):
        if tmeta.get(key):
            pod_meta[key] = copy.deepcopy(tmeta[key])
    pod_meta["ownerReferences"] = [new_controller_ref(owner)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": copy.deepcopy(dict(template.get("spec") or {})),
    }


# -- pod states -----------------------------------------------------------------------------------------


def phase(pod: Obj) -> str:
    status = pod.get("status")
    return str(status.get("phase") or "") if isinstance(status, dict) else ""


def is_terminating(pod: Obj) -> bool:
    return bool(meta(pod).get("deletionTimestamp"))


def is_active(pod: Obj) -> bool:
    """``IsPodActive``: not Succeeded, not Failed, not being deleted."""
    return phase(pod) not in ("Succeeded", "Failed") and not is_terminating(pod)


def _condition(pod: Obj, ctype: str) -> dict[str, Any] | None:
    status = pod.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for cond in conditions or []:
        if isinstance(cond, dict) and cond.get("type") == ctype:
            return cond
    return None


def is_ready(pod: Obj) -> bool:
    cond = _condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return None


def ready_since(pod: Obj) -> datetime | None:
    """When the pod became Ready (its Ready condition's lastTransitionTime); None when it is not."""
    cond = _condition(pod, "Ready")
    if cond is None or cond.get("status") != "True":
        return None
    return parse_time(cond.get("lastTransitionTime"))


def available_in(pod: Obj, min_ready_seconds: int, now: datetime) -> float | None:
    """Seconds until the pod counts as available: 0 when it is, None when it is not even ready.

    ``IsPodAvailable``: ready, and ``minReadySeconds`` is 0 or the Ready condition is older than that.
    """
    if not is_ready(pod):
        return None
    if min_ready_seconds <= 0:
        return 0.0
    since = ready_since(pod)
    if since is None:
        return float(min_ready_seconds)
    remaining = (since - now).total_seconds() + min_ready_seconds
    # Available once the condition is strictly older than minReadySeconds.
    return 0.0 if remaining < 0 else max(remaining, 0.001)


def is_available(pod: Obj, min_ready_seconds: int, now: datetime) -> bool:
    return available_in(pod, min_ready_seconds, now) == 0.0


def restart_count(pod: Obj) -> int:
    """The highest restart count of the pod's containers."""
    status = pod.get("status")
    statuses = status.get("containerStatuses") if isinstance(status, dict) else None
    return max((int(c.get("restartCount") or 0) for c in statuses or [] if isinstance(c, dict)), default=0)


# -- selectors, hashes, equality ------------------------------------------------------------------------


def selector_of(obj: Obj) -> selectors.LabelSelector | None:
    """The workload's ``spec.selector`` (None: selects nothing)."""
    spec = obj.get("spec") or {}
    raw = spec.get("selector")
    return selectors.from_label_selector(raw) if isinstance(raw, Mapping) else None


def labels_of(obj: Obj | None) -> dict[str, str]:
    labels = meta(obj).get("labels")
    return dict(labels) if isinstance(labels, dict) else {}


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: every byte mapped onto the alphabet of generated names."""
    return "".join(NAME_ALPHABET[b % len(NAME_ALPHABET)] for b in text.encode())


def fnv32a(data: bytes) -> int:
    h = _FNV_OFFSET
    for b in data:
        h ^= b
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
    return h


def template_hash(obj: Any, collision_count: int | None = None) -> str:
    """``controller.ComputeHash``: the safe-encoded FNV-1a hash of ``obj`` and the collision count."""
    data = json.dumps(semantic(obj), sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += int(collision_count).to_bytes(4, "little", signed=False)
    return safe_encode(str(fnv32a(data)))


def semantic(value: Any) -> Any:
    """``value`` with nulls and empty lists and maps dropped (Go's nil and empty are alike)."""
    if isinstance(value, Mapping):
        out = {k: semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [semantic(v) for v in value]
    return value


def semantically_equal(a: Any, b: Any) -> bool:
    return bool(semantic(a) == semantic(b))


def creation_key(obj: Obj) -> tuple[str, str]:
    """Sort key of ``ReplicaSetsByCreationTimestamp`` and friends: creation time, then name."""
    m = meta(obj)
    return (str(m.get("creationTimestamp") or ""), str(m.get("name") or ""))
