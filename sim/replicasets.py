"""The simulated ReplicaSet controller (kube-controller-manager's ``replicaset`` controller).

``ReplicaSetController`` keeps the number of active pods of every ReplicaSet at ``spec.replicas``:

* it claims pods as upstream's ControllerRefManager does: active pods whose controller reference is
  the set and that match its selector are its own; an owned pod that stopped matching is released (its
  reference patched away) and an orphan that matches is adopted (a controller reference patched in),
  unless the set is being deleted;
* too few: it creates the missing pods from the template (``generateName: <set>-``, so names are
  ``<set>-<5 random characters>``, with a controller reference that has ``blockOwnerDeletion``),
  recording ``SuccessfulCreate`` (or ``FailedCreate`` and a ``ReplicaFailure`` condition, and tries
  again after a back-off);
* too many: it deletes the surplus in upstream's ``ActivePodsWithRanks`` order - unscheduled before
  scheduled, Pending before Unknown before Running, not ready before ready, lower
  ``controller.kubernetes.io/pod-deletion-cost`` first, more pods of the same owner on its node first,
  the more recently ready (in logarithmic buckets), more restarts, then the newer (logarithmic buckets);
* status: ``replicas`` (active pods), ``fullyLabeledReplicas`` (pods carrying every template label),
  ``readyReplicas``, ``availableReplicas`` (ready for longer than ``minReadySeconds``) and
  ``observedGeneration``, computed from the pods seen before this sync's creations and deletions (as
  upstream), zero counts omitted as Go's ``omitempty`` does. With ``minReadySeconds`` it syncs again when
  the next ready pod becomes available.

Pods are deleted with their own grace period (the kubelet stops them); a set being deleted only has its
status updated (the garbage collector removes its pods).

Known limits: no burst limit or slow-start batches (everything missing is created in one sync, stopping
at the first refusal); the ``terminatingReplicas`` status field (alpha in 1.34) is not written.
"""

from __future__ import annotations

import functools
import logging
import math
from datetime import datetime
from typing import Any

from sim import errors, podcontrol, recording
from sim.apiserver import STRATEGIC, ApiServer, format_time
from sim.store import Event, Obj, ObjectKey
from sim.workqueue import QueueController, meta, served_kind

log = logging.getLogger("arcsm.sim.replicasets")

COMPONENT = "replicaset-controller"
REPLICASETS = ("apps", "replicasets")
PODS = ("", "pods")
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}


def _deletion_cost(pod: Obj) -> int:
    try:
        return int((meta(pod).get("annotations") or {}).get(DELETION_COST, "0"))
    except ValueError:
        return 0


def _log_rank_diff(t1: datetime, t2: datetime, now: datetime) -> int:
    """``logarithmicRankDiff``: the difference of the log2 buckets of two ages in nanoseconds."""

    def bucket(t: datetime) -> int:
        age = (now - t).total_seconds() * 1e9
        return int(math.log2(age)) if age > 0 else -1

    return bucket(t1) - bucket(t2)


def _less(a: Obj, rank_a: int, b: Obj, rank_b: int, now: datetime) -> bool:
    """``ActivePodsWithRanks.Less``: whether ``a`` goes before ``b`` when scaling down."""
    node_a = str((a.get("spec") or {}).get("nodeName") or "")
    node_b = str((b.get("spec") or {}).get("nodeName") or "")
    if node_a != node_b and (not node_a or not node_b):
        return not node_a
    phase_a = _PHASE_ORDER.get(podcontrol.phase(a), 0)
    phase_b = _PHASE_ORDER.get(podcontrol.phase(b), 0)
    if phase_a != phase_b:
        return phase_a < phase_b
    ready_a, ready_b = podcontrol.is_ready(a), podcontrol.is_ready(b)
    if ready_a != ready_b:
        return not ready_a
    cost_a, cost_b = _deletion_cost(a), _deletion_cost(b)
    if cost_a != cost_b:
        return cost_a < cost_b
    if rank_a != rank_b:
        return rank_a > rank_b
    if ready_a and ready_b:
        since_a, since_b = podcontrol.ready_since(a), podcontrol.ready_since(b)
        if since_a != since_b:
            if since_a is None or since_b is None:
                return since_a is None
            diff = _log_rank_diff(since_a, since_b, now)
            if diff != 0:
                return diff < 0
            return str(meta(a).get("uid")) < str(meta(b).get("uid"))
    restarts_a, restarts_b = podcontrol.restart_count(a), podcontrol.restart_count(b)
    if restarts_a != restarts_b:
        return restarts_a > restarts_b
    created_a = podcontrol.parse_time(meta(a).get("creationTimestamp"))
    created_b = podcontrol.parse_time(meta(b).get("creationTimestamp"))
    if created_a != created_b and created_a is not None and created_b is not None:
        diff = _log_rank_diff(created_a, created_b, now)
        if diff != 0:
            return diff < 0
        return str(meta(a).get("uid")) < str(meta(b).get("uid"))
    return False


def pods_to_delete(pods: list[Obj], related: list[Obj], count: int, now: datetime) -> list[Obj]:
    """``getPodsToDelete``: the first ``count`` of ``pods`` in scale-down order; ``related`` are the
    active pods of every set with the same owner (they rank pods by how many share a node)."""
    on_node: dict[str, int] = {}
    for pod in related:
        if podcontrol.is_active(pod):
            node = str((pod.get("spec") or {}).get("nodeName") or "")
            on_node[node] = on_node.get(node, 0) + 1
    ranked = [(pod, on_node.get(str((pod.get("spec") or {}).get("nodeName") or ""), 0)) for pod in pods]

    def compare(x: tuple[Obj, int], y: tuple[Obj, int]) -> int:
        if _less(x[0], x[1], y[0], y[1], now):
            return -1
        if _less(y[0], y[1], x[0], x[1], now):
            return 1
        return 0

    ranked.sort(key=functools.cmp_to_key(compare))
    return [pod for pod, _ in ranked[:count]]


def _omit_zero(status: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in status.items() if not (k in keys and not v)}


class ReplicaSetController(QueueController[ObjectKey]):
    """Runs the pods of every ReplicaSet (run as a world controller)."""

    logger = log
    what = "replicasets: syncing"
    ignored_codes = frozenset({404, 409})

    def seed(self, api: ApiServer) -> None:
        for rs in api.store.items(REPLICASETS):
            self._queue.add((*REPLICASETS, meta(rs)["namespace"], meta(rs)["name"]))

    def on_event(self, event: Event) -> None:
        if event.key[:2] == REPLICASETS:
            if event.type != "DELETED":
                self._queue.add(event.key)
            return
        if event.key[:2] != PODS:
            return
        namespace = event.key[2]
        for pod in (event.prev, event.obj):
            ref = podcontrol.controller_ref(pod)
            if ref is not None and ref.get("kind") == "ReplicaSet":
                self._queue.add((*REPLICASETS, namespace, str(ref.get("name") or "")))
        if event.type != "DELETED" and podcontrol.controller_ref(event.obj) is None:
            self._queue_adopters(namespace, event.obj)

    def _queue_adopters(self, namespace: str, pod: Obj) -> None:
        """An orphan pod: the sets whose selector matches it may adopt it."""
        if self._api is None or not podcontrol.is_active(pod):
            return
        labels = podcontrol.labels_of(pod)
        for rs in self._api.store.items(REPLICASETS, namespace):
            selector = podcontrol.selector_of(rs)
            if selector is not None and not selector.empty and selector.matches(labels):
                self._queue.add((*REPLICASETS, namespace, meta(rs)["name"]))

    # -- one sync -------------------------------------------------------------------------------------

    def handle(self, api: ApiServer, key: ObjectKey) -> None:
        rs = api.store.get(key)
        if rs is None:
            return
        namespace = key[2]
        now = api.clock()
        active = self._claim(
            api, rs, [p for p in api.store.items(PODS, namespace) if podcontrol.is_active(p)]
        )
        error: errors.ApiError | None = None
        if not meta(rs).get("deletionTimestamp"):
            error = self._manage(api, rs, active, now)
        if error is None:
            self.forget(key)
        else:
            self.retry(key)  # e.g. the namespace's default ServiceAccount is not there yet
        self._update_status(api, rs, active, error, now)

    def _claim(self, api: ApiServer, rs: Obj, pods: list[Obj]) -> list[Obj]:
        """``ClaimPods``: the set's own pods, adopting matching orphans and releasing mismatches."""
        selector = podcontrol.selector_of(rs)
        deleting = bool(meta(rs).get("deletionTimestamp"))
        uid = meta(rs)["uid"]
        pod_kind = served_kind(api, *PODS)
        owned: list[Obj] = []
        for pod in pods:
            ref = podcontrol.controller_ref(pod)
            matches = (
                selector is not None and not selector.empty and selector.matches(podcontrol.labels_of(pod))
            )
            pmeta = meta(pod)
            if ref is not None:
                if ref.get("uid") != uid:
                    continue
                if matches or deleting:
                    owned.append(pod)
                    continue
                patch = {
                    "metadata": {"ownerReferences": [{"$patch": "delete", "uid": uid}], "uid": pmeta["uid"]}
                }
                api.patch(pod_kind, pmeta["namespace"], pmeta["name"], patch, STRATEGIC)
                continue
            if deleting or not matches or podcontrol.is_terminating(pod):
                continue
            patch = {
                "metadata": {"ownerReferences": [podcontrol.new_controller_ref(rs)], "uid": pmeta["uid"]}
            }
            adopted = api.patch(pod_kind, pmeta["namespace"], pmeta["name"], patch, STRATEGIC).body
            owned.append(adopted)
        return owned

    def _manage(self, api: ApiServer, rs: Obj, active: list[Obj], now: datetime) -> errors.ApiError | None:
        """Create or delete pods towards ``spec.replicas``; the first refused create, if any."""
        spec = rs.get("spec") or {}
        diff = len(active) - int(spec.get("replicas") or 0)
        pod_kind = served_kind(api, *PODS)
        namespace = meta(rs)["namespace"]
        if diff < 0:
            template = spec.get("template") or {}
            for _ in range(-diff):
                try:
                    created = api.create(pod_kind, namespace, podcontrol.pod_from_template(template, rs)).body
                except errors.ApiError as err:
                    if err.code == 403 and "being terminated" in err.message:
                        return None  # the namespace is going away: nothing to report
                    recording.record(
                        api,
                        rs,
                        recording.WARNING,
                        "FailedCreate",
                        f"Error creating: {err.message}",
                        component=COMPONENT,
                    )
                    return err
                recording.record(
                    api,
                    rs,
                    recording.NORMAL,
                    "SuccessfulCreate",
                    f"Created pod: {meta(created)['name']}",
                    component=COMPONENT,
                )
        elif diff > 0:
            for pod in pods_to_delete(active, self._related(api, rs), diff, now):
                pmeta = meta(pod)
                try:
                    api.delete(pod_kind, namespace, pmeta["name"], {"preconditions": {"uid": pmeta["uid"]}})
                except errors.ApiError as err:
                    if err.code in (404, 409):
                        continue
                    return err
                recording.record(
                    api,
                    rs,
                    recording.NORMAL,
                    "SuccessfulDelete",
                    f"Deleted pod: {pmeta['name']}",
                    component=COMPONENT,
                )
        return None

    def _related(self, api: ApiServer, rs: Obj) -> list[Obj]:
        """``getIndirectlyRelatedPods``: pods of every set controlled by the same owner as ``rs``."""
        owner = podcontrol.controller_ref(rs)
        namespace = meta(rs)["namespace"]
        sets = [rs]
        if owner is not None:
            sets = [
                other
                for other in api.store.items(REPLICASETS, namespace)
                if (podcontrol.controller_ref(other) or {}).get("uid") == owner.get("uid")
            ]
        uids = {meta(s)["uid"] for s in sets}
        return [
            p
            for p in api.store.items(PODS, namespace)
            if (podcontrol.controller_ref(p) or {}).get("uid") in uids
        ]

    def _update_status(
        self, api: ApiServer, rs: Obj, active: list[Obj], error: errors.ApiError | None, now: datetime
    ) -> None:
        spec = rs.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        labeled = sum(
            1 for p in active if all(podcontrol.labels_of(p).get(k) == v for k, v in template_labels.items())
        )
        ready = [p for p in active if podcontrol.is_ready(p)]
        waits = [podcontrol.available_in(p, min_ready, now) for p in ready]
        available = sum(1 for w in waits if w == 0.0)
        old: dict[str, Any] = dict(rs.get("status") or {})
        conditions = [c for c in old.get("conditions") or [] if c.get("type") != "ReplicaFailure"]
        failure = next((c for c in old.get("conditions") or [] if c.get("type") == "ReplicaFailure"), None)
        if error is not None:
            diff = len(active) - int(spec.get("replicas") or 0)
            conditions.append(
                failure
                or {
                    "type": "ReplicaFailure",
                    "status": "True",
                    "lastTransitionTime": format_time(now),
                    "reason": "FailedCreate" if diff < 0 else "FailedDelete",
                    "message": error.message,
                }
            )
        status = _omit_zero(
            {
                "replicas": len(active),
                "fullyLabeledReplicas": labeled,
                "readyReplicas": len(ready),
                "availableReplicas": available,
                "observedGeneration": meta(rs).get("generation"),
                "conditions": conditions,
            },
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
            "conditions",
        )
        if status != old:
            rmeta = meta(rs)
            current = api.store.get((*REPLICASETS, rmeta["namespace"], rmeta["name"]))
            if current is not None and meta(current).get("uid") == rmeta["uid"]:
                api.update(
                    served_kind(api, *REPLICASETS),
                    rmeta["namespace"],
                    rmeta["name"],
                    {**current, "status": status},
                    subresource="status",
                )
        pending = [w for w in waits if w is not None and w > 0]
        if pending:
            rmeta = meta(rs)
            # Timestamps have whole seconds: look again just after the earliest pod should be available.
            self.add_after((*REPLICASETS, rmeta["namespace"], rmeta["name"]), min(pending) + 0.05)
