"""The simulated StatefulSet controller (kube-controller-manager's ``statefulset`` controller).

``StatefulSetController`` gives every StatefulSet one pod per ordinal, as upstream's
``stateful_set_control.go`` and ``stateful_pod_control.go`` do:

* Pods are ``<set>-<ordinal>`` (from ``spec.ordinals.start``, default 0), made from the template of
  their revision, with the labels ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index``
  and ``controller-revision-hash``, ``hostname`` = the pod name and ``subdomain`` = ``spec.serviceName``,
  a controller reference (``generateName: <set>-`` stays, as upstream leaves it), and one volume per
  ``volumeClaimTemplates`` entry pointing at the claim ``<template>-<set>-<ordinal>``. The claims are
  created before the pod (labelled with the template's labels and the set's ``matchLabels``) and are
  never deleted by the controller; the ``persistentVolumeClaimRetentionPolicy`` (default Retain/Retain)
  decides their owner references: ``whenDeleted: Delete`` makes the set an owner (the garbage collector
  deletes them with it), ``whenScaled: Delete`` makes the pod an owner once its ordinal is scaled away.
* OrderedReady (``monotonic``): a pod is created only once every lower ordinal is Running, Ready and
  available (``minReadySeconds``), the sync stops at a terminating or unready pod, and scale-down
  deletes the highest ordinal first, one at a time, each after its successors are gone. Parallel:
  everything at once. Failed or Succeeded pods are deleted, and made anew once gone.
* Revisions (``sim.revisions``): the update revision is the ControllerRevision of the current
  template (an equal older one is renumbered, as a rollback; a new one is created otherwise);
  ``status.currentRevision`` stays until a rolling update completes. Pods below
  ``rollingUpdate.partition`` are created at the current revision, the others at the update revision.
* RollingUpdate: from the highest ordinal down to the partition, the first pod of another revision is
  deleted (it is then made anew at the update revision), waiting for each to be healthy before the next.
  OnDelete: pods change revision only when someone deletes them.
* Status: ``observedGeneration``, ``replicas`` (created pods), ``readyReplicas``, ``availableReplicas``,
  ``currentReplicas``, ``updatedReplicas``, ``currentRevision``, ``updateRevision`` and
  ``collisionCount`` (so ``kubectl rollout status statefulset/x`` works); revisions beyond
  ``revisionHistoryLimit`` that no pod uses are deleted.
* Events ``SuccessfulCreate``/``FailedCreate`` (claims and pods) and ``SuccessfulDelete``; a claim or
  pod that cannot be created (or a claim still being deleted) is tried again after a back-off.

Known limits: orphan pods are not adopted and pods are never released; a pod whose identity labels or
volumes drift from its set is not repaired (upstream updates it in place); the alpha
``rollingUpdate.maxUnavailable`` is not honoured (it is dropped on write, as the gate is off in 1.34);
a stale claim (one owned by an earlier pod of the same name) is not detected.
"""

from __future__ import annotations

import copy
import logging
import re
from datetime import datetime
from typing import Any

from sim import errors, podcontrol, recording, revisions
from sim.apiserver import MERGE, ApiServer
from sim.store import Event, Obj, ObjectKey
from sim.workqueue import QueueController, meta, served_kind

log = logging.getLogger("arcsm.sim.statefulsets")

COMPONENT = "statefulset-controller"
STATEFULSETS = ("apps", "statefulsets")
PODS = ("", "pods")
CLAIMS = ("", "persistentvolumeclaims")
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def ordinal_of(pod: Obj, set_name: str) -> int | None:
    """``getParentNameAndOrdinal``: the ordinal of a pod of the set named ``set_name``."""
    match = _ORDINAL.match(str(meta(pod).get("name") or ""))
    if match is None or match.group(1) != set_name:
        return None
    return int(match.group(2))


def claim_name(template: Obj, set_name: str, ordinal: int) -> str:
    return f"{meta(template).get('name')}-{set_name}-{ordinal}"


def is_running_and_ready(pod: Obj) -> bool:
    return podcontrol.phase(pod) == "Running" and podcontrol.is_ready(pod)


def is_healthy(pod: Obj) -> bool:
    return is_running_and_ready(pod) and not podcontrol.is_terminating(pod)


def template_of(revision: Obj) -> Obj:
    """The pod template a revision records (``ApplyRevision`` of its ``$patch: replace`` data)."""
    template = dict(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


class StatefulSetController(QueueController[ObjectKey]):
    """Runs the pods and claims of every StatefulSet (run as a world controller)."""

    logger = log
    what = "statefulsets: syncing"
    ignored_codes = frozenset({404, 409})

    def seed(self, api: ApiServer) -> None:
        for sts in api.store.items(STATEFULSETS):
            self._queue.add((*STATEFULSETS, meta(sts)["namespace"], meta(sts)["name"]))

    def on_event(self, event: Event) -> None:
        if event.key[:2] == STATEFULSETS:
            if event.type != "DELETED":
                self._queue.add(event.key)
        elif event.key[:2] == PODS:
            for pod in (event.prev, event.obj):
                ref = podcontrol.controller_ref(pod)
                if ref is not None and ref.get("kind") == "StatefulSet":
                    self._queue.add((*STATEFULSETS, event.key[2], str(ref.get("name") or "")))

    def handle(self, api: ApiServer, key: ObjectKey) -> None:
        sts = api.store.get(key)
        if sts is not None:
            _SetSync(api, self, sts).run()


class _SetSync:
    """One sync of one StatefulSet (``updateStatefulSet``)."""

    def __init__(self, api: ApiServer, controller: StatefulSetController, sts: Obj) -> None:
        self.api = api
        self.controller = controller
        self.sts = sts
        self.name = str(meta(sts)["name"])
        self.namespace = str(meta(sts)["namespace"])
        self.spec: dict[str, Any] = dict(sts.get("spec") or {})
        self.monotonic = self.spec.get("podManagementPolicy") != "Parallel"
        self.min_ready = int(self.spec.get("minReadySeconds") or 0)
        self.start = int((self.spec.get("ordinals") or {}).get("start") or 0)
        self.replicas = int(self.spec.get("replicas") or 0)
        self.pod_kind = served_kind(api, *PODS)
        self.claim_kind = served_kind(api, *CLAIMS)
        self.history = revisions.History(api, sts)
        self.failed = False  # a claim or pod could not be had: try again after a back-off

    def event(self, event_type: str, reason: str, message: str) -> None:
        recording.record(self.api, self.sts, event_type, reason, message, component=COMPONENT)

    # -- revisions -------------------------------------------------------------------------------------

    def sync_revisions(self) -> tuple[Obj, Obj, int]:
        """``getStatefulSetRevisions``: (current revision, update revision, collision count)."""
        owned = self.history.owned()
        status = self.sts.get("status") or {}
        collisions = int(status.get("collisionCount") or 0)
        number = revisions.revision_number(owned[-1]) + 1 if owned else 1
        draft = self.history.draft(number)
        equal = [r for r in owned if revisions.equal(r, draft)]
        if equal and meta(equal[-1])["name"] == meta(owned[-1])["name"]:
            update = owned[-1]
        elif equal:
            update = self.history.bump(equal[-1], number)
        else:
            update, collisions = self.history.create(draft, collisions)
        current = next((r for r in owned if meta(r)["name"] == status.get("currentRevision")), update)
        return current, update, collisions

    # -- pods and claims --------------------------------------------------------------------------------

    def owned_pods(self) -> list[Obj]:
        uid = meta(self.sts)["uid"]
        return [
            p
            for p in self.api.store.items(PODS, self.namespace)
            if (podcontrol.controller_ref(p) or {}).get("uid") == uid and ordinal_of(p, self.name) is not None
        ]

    def claims_for(self, ordinal: int) -> list[Obj]:
        """``getPersistentVolumeClaims``: the claims of the pod with ``ordinal``, as they are created."""
        match_labels = (self.spec.get("selector") or {}).get("matchLabels") or {}
        out = []
        for template in self.spec.get("volumeClaimTemplates") or []:
            claim = copy.deepcopy(template)
            cmeta = dict(claim.get("metadata") or {})
            cmeta["name"] = claim_name(template, self.name, ordinal)
            cmeta["namespace"] = self.namespace
            cmeta["labels"] = {**(cmeta.get("labels") or {}), **match_labels}
            claim.pop("status", None)
            out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", **claim, "metadata": cmeta})
        return out

    def new_pod(self, ordinal: int, revision: Obj) -> Obj:
        """``newVersionedStatefulSetPod`` for the template of ``revision``."""
        name = f"{self.name}-{ordinal}"
        pod = podcontrol.pod_from_template(template_of(revision), self.sts)
        pmeta = pod["metadata"]
        pmeta["name"] = name
        pmeta["namespace"] = self.namespace
        pmeta["labels"] = {
            **(pmeta.get("labels") or {}),
            POD_NAME_LABEL: name,
            POD_INDEX_LABEL: str(ordinal),
            revisions.POD_REVISION_LABEL: meta(revision)["name"],
        }
        spec = pod["spec"]
        spec["hostname"] = name
        if self.spec.get("serviceName"):
            spec["subdomain"] = self.spec["serviceName"]
        claim_volumes = [
            {
                "name": meta(t).get("name"),
                "persistentVolumeClaim": {"claimName": claim_name(t, self.name, ordinal)},
            }
            for t in self.spec.get("volumeClaimTemplates") or []
        ]
        names = {v["name"] for v in claim_volumes}
        spec["volumes"] = claim_volumes + [v for v in spec.get("volumes") or [] if v.get("name") not in names]
        if not spec["volumes"]:
            del spec["volumes"]
        return pod

    def create_claims(self, ordinal: int, pod_name: str) -> bool:
        """``createPersistentVolumeClaims``: the missing claims of a pod; False when one cannot be had."""
        ok = True
        for claim in self.claims_for(ordinal):
            cname = meta(claim)["name"]
            existing = self.api.store.get((*CLAIMS, self.namespace, cname))
            if existing is not None:
                if meta(existing).get("deletionTimestamp"):
                    ok = False  # upstream: "pvc ... is being deleted"; made anew once it is gone
                continue
            try:
                self.api.create(self.claim_kind, self.namespace, claim)
            except errors.ApiError as err:
                message = (
                    f"create Claim {cname} for Pod {pod_name} in StatefulSet {self.name} failed "
                    f"error: {err.message}"
                )
                self.event(recording.WARNING, "FailedCreate", message)
                ok = False
                continue
            message = f"create Claim {cname} Pod {pod_name} in StatefulSet {self.name} success"
            self.event(recording.NORMAL, "SuccessfulCreate", message)
        self.failed = self.failed or not ok
        return ok

    def create_pod(self, ordinal: int, revision: Obj) -> None:
        """``CreateStatefulPod``: claims first, then the pod."""
        pod = self.new_pod(ordinal, revision)
        name = pod["metadata"]["name"]
        if not self.create_claims(ordinal, name):
            return
        try:
            created = self.api.create(self.pod_kind, self.namespace, pod).body
        except errors.ApiError as err:
            if err.reason != "AlreadyExists":
                message = f"create Pod {name} in StatefulSet {self.name} failed error: {err.message}"
                self.event(recording.WARNING, "FailedCreate", message)
                self.failed = True
            return
        self.fix_claim_owners(created)
        self.event(
            recording.NORMAL, "SuccessfulCreate", f"create Pod {name} in StatefulSet {self.name} successful"
        )

    def delete_pod(self, pod: Obj) -> None:
        pmeta = meta(pod)
        try:
            self.api.delete(
                self.pod_kind, self.namespace, pmeta["name"], {"preconditions": {"uid": pmeta["uid"]}}
            )
        except errors.ApiError as err:
            if err.code not in (404, 409):
                raise
            return
        self.event(
            recording.NORMAL,
            "SuccessfulDelete",
            f"delete Pod {pmeta['name']} in StatefulSet {self.name} successful",
        )

    def fix_claim_owners(self, pod: Obj) -> None:
        """``UpdatePodClaimForRetentionPolicy``: the claims' owner references as the policy says."""
        policy = self.spec.get("persistentVolumeClaimRetentionPolicy") or {}
        ordinal = ordinal_of(pod, self.name)
        if ordinal is None:
            return
        scaled_away = not self.start <= ordinal < self.start + self.replicas
        set_owner = policy.get("whenDeleted") == "Delete" and not (
            policy.get("whenScaled") == "Delete" and scaled_away
        )
        pod_owner = policy.get("whenScaled") == "Delete" and scaled_away
        for claim in self.claims_for(ordinal):
            existing = self.api.store.get((*CLAIMS, self.namespace, meta(claim)["name"]))
            if existing is None or meta(existing).get("deletionTimestamp"):
                continue
            refs = [
                r
                for r in meta(existing).get("ownerReferences") or []
                if r.get("uid") not in (meta(self.sts)["uid"], meta(pod)["uid"])
            ]
            for wanted, owner, kind, version in (
                (set_owner, self.sts, "StatefulSet", "apps/v1"),
                (pod_owner, pod, "Pod", "v1"),
            ):
                if wanted:
                    refs.append(
                        {
                            "apiVersion": version,
                            "kind": kind,
                            "name": meta(owner)["name"],
                            "uid": meta(owner)["uid"],
                        }
                    )
            if refs != (meta(existing).get("ownerReferences") or []):
                patch = {"metadata": {"ownerReferences": refs or None, "uid": meta(existing)["uid"]}}
                self.api.patch(self.claim_kind, self.namespace, meta(existing)["name"], patch, MERGE)

    # -- the sync --------------------------------------------------------------------------------------

    def run(self) -> None:
        current, update, collisions = self.sync_revisions()
        if not meta(self.sts).get("deletionTimestamp"):
            self.reconcile(current, update)
        self.write_status(current, update, collisions)
        key = (*STATEFULSETS, self.namespace, self.name)
        if self.failed:
            self.controller.retry(key)
        else:
            self.controller.forget(key)
        live = {
            meta(current)["name"],
            meta(update)["name"],
            *(revisions.pod_revision(p) for p in self.owned_pods()),
        }
        self.history.truncate(live, int(self.spec.get("revisionHistoryLimit") or 0))

    def slots(self) -> tuple[dict[int, Obj], list[Obj]]:
        """The pods by ordinal within range, and the condemned ones (highest ordinal first)."""
        slots: dict[int, Obj] = {}
        condemned: list[tuple[int, Obj]] = []
        for pod in self.owned_pods():
            ordinal = ordinal_of(pod, self.name)
            assert ordinal is not None
            if self.start <= ordinal < self.start + self.replicas:
                slots[ordinal] = pod
            else:
                condemned.append((ordinal, pod))
        condemned.sort(key=lambda item: item[0], reverse=True)
        return slots, [pod for _, pod in condemned]

    def reconcile(self, current: Obj, update: Obj) -> None:
        slots, condemned = self.slots()
        ordinals = range(self.start, self.start + self.replicas)
        unhealthy = [slots[o] for o in ordinals if o in slots and not is_healthy(slots[o])]
        unhealthy += [p for p in condemned if not is_healthy(p)]
        first_unhealthy = meta(unhealthy[0])["uid"] if unhealthy else None
        for pod in [*slots.values(), *condemned]:
            self.fix_claim_owners(pod)
        stopped = False
        for ordinal in ordinals:
            if self.process_replica(ordinal, slots.get(ordinal), current, update) and self.monotonic:
                stopped = True
                break
        if not stopped:
            for pod in condemned:
                if self.process_condemned(pod, first_unhealthy) and self.monotonic:
                    stopped = True
                    break
        strategy = self.spec.get("updateStrategy") or {}
        if not stopped and strategy.get("type") == "RollingUpdate":
            self.rolling_update(update, int((strategy.get("rollingUpdate") or {}).get("partition") or 0))

    def process_replica(self, ordinal: int, pod: Obj | None, current: Obj, update: Obj) -> bool:
        """``processReplica``: True when the sync must stop here (in OrderedReady mode)."""
        if pod is None:
            self.create_pod(ordinal, self.revision_for(ordinal, current, update))
            return True
        if podcontrol.phase(pod) in ("Failed", "Succeeded"):
            if not podcontrol.is_terminating(pod):
                self.delete_pod(pod)
            return True
        if podcontrol.phase(pod) == "Pending":
            self.create_claims(ordinal, meta(pod)["name"])
        if podcontrol.is_terminating(pod) or not is_running_and_ready(pod):
            return True
        wait = podcontrol.available_in(pod, self.min_ready, self.api.clock())
        if wait:
            self.controller.add_after((*STATEFULSETS, self.namespace, self.name), wait + 0.05)
            return True
        return False

    def revision_for(self, ordinal: int, current: Obj, update: Obj) -> Obj:
        """Pods below the partition (or the current replicas, without a rollingUpdate) stay at the
        current revision."""
        strategy = self.spec.get("updateStrategy") or {}
        if strategy.get("type") != "RollingUpdate":
            return update
        rolling = strategy.get("rollingUpdate")
        if rolling is None:
            below = int((self.sts.get("status") or {}).get("currentReplicas") or 0)
        else:
            below = int(rolling.get("partition") or 0)
        return current if ordinal < self.start + below else update

    def process_condemned(self, pod: Obj, first_unhealthy: str | None) -> bool:
        """``processCondemned``: True when the sync must stop here (in OrderedReady mode)."""
        if podcontrol.is_terminating(pod):
            return True
        first = meta(pod)["uid"] == first_unhealthy
        settled = is_running_and_ready(pod) and podcontrol.is_available(pod, self.min_ready, self.api.clock())
        if self.monotonic and not first and not settled:
            return True
        self.delete_pod(pod)
        return True

    def rolling_update(self, update: Obj, partition: int) -> None:
        """Delete the highest pod at another revision, down to the partition, one healthy step at a time."""
        slots, _ = self.slots()
        for ordinal in range(self.start + self.replicas - 1, self.start + partition - 1, -1):
            pod = slots.get(ordinal)
            if pod is None:
                return
            if revisions.pod_revision(pod) != meta(update)["name"] and not podcontrol.is_terminating(pod):
                self.delete_pod(pod)
                return
            if not is_healthy(pod):
                return

    # -- status ----------------------------------------------------------------------------------------

    def write_status(self, current: Obj, update: Obj, collisions: int) -> None:
        now = self.api.clock()
        status = self.count(self.owned_pods(), current, update, now)
        status["observedGeneration"] = meta(self.sts).get("generation")
        status["collisionCount"] = collisions
        strategy = self.spec.get("updateStrategy") or {}
        if (
            strategy.get("type") == "RollingUpdate"
            and status["updatedReplicas"] == status["replicas"]
            and status["readyReplicas"] == status["replicas"]
        ):
            # completeRollingUpdate
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = status["updateRevision"]
        old = dict(self.sts.get("status") or {})
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        status = {
            k: v for k, v in status.items() if v or k in ("replicas", "availableReplicas", "collisionCount")
        }
        if status == old:
            return
        stored = self.api.store.get((*STATEFULSETS, self.namespace, self.name))
        if stored is None or meta(stored).get("uid") != meta(self.sts)["uid"]:
            return
        kind = served_kind(self.api, *STATEFULSETS)
        self.api.update(kind, self.namespace, self.name, {**stored, "status": status}, subresource="status")

    def count(self, pods: list[Obj], current: Obj, update: Obj, now: datetime) -> dict[str, Any]:
        """``updateStatus``: created, ready, available, current and updated pods."""
        created = [p for p in pods if podcontrol.phase(p)]
        ready = [p for p in pods if is_running_and_ready(p)]
        settled = [p for p in created if not podcontrol.is_terminating(p)]
        return {
            "replicas": len(created),
            "readyReplicas": len(ready),
            "availableReplicas": sum(1 for p in ready if podcontrol.is_available(p, self.min_ready, now)),
            "currentReplicas": sum(1 for p in settled if revisions.pod_revision(p) == meta(current)["name"]),
            "updatedReplicas": sum(1 for p in settled if revisions.pod_revision(p) == meta(update)["name"]),
            "currentRevision": meta(current)["name"],
            "updateRevision": meta(update)["name"],
        }
