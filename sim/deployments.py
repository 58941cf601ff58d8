"""The simulated Deployment controller (kube-controller-manager's ``deployment`` controller).

``DeploymentController`` rolls every Deployment out through ReplicaSets, as upstream's ``sync.go``,
``rolling.go``, ``recreate.go`` and ``progress.go`` do; ``sim.replicasets`` then runs their pods.

* The new ReplicaSet is the oldest owned set whose template equals the Deployment's, ignoring the
  ``pod-template-hash`` label; when there is none it is created as ``<deployment>-<hash>`` with the
  hash as label and selector term, a controller reference, ``minReadySeconds`` and the annotations
  ``deployment.kubernetes.io/revision`` (the highest old revision + 1; a set reused by a rollback gets
  the next one and ``revision-history``), ``desired-replicas`` and ``max-replicas`` (replicas +
  maxSurge), plus the Deployment's own annotations but kubectl's last-applied configuration. A name
  taken by a set with another template is a hash collision: ``status.collisionCount`` goes up and the
  next sync hashes again. The Deployment gets the revision annotation too.
* RollingUpdate: ``maxSurge`` (rounded up) and ``maxUnavailable`` (rounded down) resolved from an
  integer or a percentage of ``spec.replicas``, 1 unavailable when both resolve to 0; the new set is
  scaled up while all sets together stay within replicas + maxSurge, old sets are scaled down (their
  unhealthy pods first, oldest set first) while the available pods stay above replicas - maxUnavailable.
* Recreate: old sets are scaled to 0, and only once none of their pods is running (non-terminal) is
  the new set created and scaled up, so old and new pods never run at once.
* A change of ``spec.replicas`` while sets disagree with it (their ``desired-replicas`` annotation)
  is a scaling event: the sets are scaled proportionally, leftovers to the largest; so is any sync of
  a paused Deployment, which rolls nothing out.
* Old sets scaled to zero beyond ``revisionHistoryLimit`` are deleted, oldest revision first, once the
  rollout is complete (or while paused).
* Status: ``observedGeneration``, ``replicas``, ``updatedReplicas``, ``readyReplicas``,
  ``availableReplicas``, ``unavailableReplicas``, ``collisionCount`` and the conditions
  ``Available`` (MinimumReplicasAvailable / MinimumReplicasUnavailable) and ``Progressing``
  (NewReplicaSetCreated, FoundNewReplicaSet, ReplicaSetUpdated, NewReplicaSetAvailable,
  ProgressDeadlineExceeded once ``progressDeadlineSeconds`` pass without progress, DeploymentPaused,
  DeploymentResumed, ReplicaSetCreateError), with upstream's messages and their
  ``lastUpdateTime``/``lastTransitionTime`` rules; so ``kubectl rollout status deployment/x`` works.
* Events ``ScalingReplicaSet`` ("Scaled up replica set x from 0 to 3"), ``ReplicaSetCreateError``.

Known limits: ReplicaSets are never adopted or released (only sets the Deployment created count); the
``deprecated.deployment.rollback.to`` annotation (``kubectl rollout undo`` of old kubectls) is not
honoured; ``terminatingReplicas`` (alpha in 1.34) is not written.
"""

from __future__ import annotations

import logging
from typing import Any

from sim import errors, podcontrol, recording, rollouts
from sim.apiserver import ApiServer, format_time
from sim.store import Event, Obj, ObjectKey
from sim.workqueue import QueueController, meta, served_kind

log = logging.getLogger("arcsm.sim.deployments")

COMPONENT = "deployment-controller"
DEPLOYMENTS = ("apps", "deployments")
REPLICASETS = ("apps", "replicasets")
PODS = ("", "pods")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
NOT_COPIED = frozenset(
    {
        LAST_APPLIED,
        rollouts.REVISION,
        rollouts.REVISION_HISTORY,
        rollouts.DESIRED_REPLICAS,
        rollouts.MAX_REPLICAS,
        ROLLBACK_TO,
    }
)
REVISION_HISTORY_CHARS = 2000


# -- the controller -------------------------------------------------------------------------------------


class DeploymentController(QueueController[ObjectKey]):
    """Rolls out every Deployment through its ReplicaSets (run as a world controller)."""

    logger = log
    what = "deployments: syncing"
    ignored_codes = frozenset({404, 409})

    def seed(self, api: ApiServer) -> None:
        for d in api.store.items(DEPLOYMENTS):
            self._queue.add((*DEPLOYMENTS, meta(d)["namespace"], meta(d)["name"]))

    def on_event(self, event: Event) -> None:
        type_key, namespace = event.key[:2], event.key[2]
        if type_key == DEPLOYMENTS:
            if event.type != "DELETED":
                self._queue.add(event.key)
        elif type_key == REPLICASETS:
            for rs in (event.prev, event.obj):
                self._queue_owner(namespace, rs)
        elif type_key == PODS and self._api is not None:
            # Recreate waits for the old pods to be gone: their changes concern the Deployment.
            for pod in (event.prev, event.obj):
                ref = podcontrol.controller_ref(pod)
                if ref is not None and ref.get("kind") == "ReplicaSet":
                    self._queue_owner(namespace, self._api.store.get((*REPLICASETS, namespace, ref["name"])))

    def _queue_owner(self, namespace: str, rs: Obj | None) -> None:
        ref = podcontrol.controller_ref(rs)
        if ref is not None and ref.get("kind") == "Deployment":
            self._queue.add((*DEPLOYMENTS, namespace, str(ref.get("name") or "")))

    def handle(self, api: ApiServer, key: ObjectKey) -> None:
        d = api.store.get(key)
        if d is not None:
            _Sync(api, self, key).run()


class _Sync:
    """One sync of one Deployment (``syncDeployment``). Every step reads the stored objects afresh, so a
    write made earlier in the sync is seen by the later steps."""

    def __init__(self, api: ApiServer, controller: DeploymentController, key: ObjectKey) -> None:
        self.api = api
        self.controller = controller
        self.key = key
        self.namespace = key[2]
        self.rs_kind = served_kind(api, *REPLICASETS)
        self.d_kind = served_kind(api, *DEPLOYMENTS)

    # -- reads -----------------------------------------------------------------------------------------

    @property
    def d(self) -> Obj:
        d = self.api.store.get(self.key)
        if d is None:
            raise errors.not_found("deployments", "apps", self.key[3])
        return d

    def now(self) -> str:
        return format_time(self.api.clock())

    def owned_sets(self) -> list[Obj]:
        """``getReplicaSetsForDeployment`` (without adoption), oldest first."""
        uid = meta(self.d)["uid"]
        sets = [
            rs
            for rs in self.api.store.items(REPLICASETS, self.namespace)
            if (podcontrol.controller_ref(rs) or {}).get("uid") == uid
        ]
        return sorted(sets, key=podcontrol.creation_key)

    def new_and_old(self) -> tuple[Obj | None, list[Obj]]:
        """``FindNewReplicaSet`` (the oldest set with the Deployment's template) and the old sets."""
        d = self.d
        sets = self.owned_sets()
        new = next((rs for rs in sets if rollouts.same_template(rs, d)), None)
        old = [rs for rs in sets if new is None or meta(rs)["uid"] != meta(new)["uid"]]
        return new, old

    # -- writes ----------------------------------------------------------------------------------------

    def write_status(self, status: dict[str, Any], annotations: dict[str, str] | None = None) -> None:
        d = self.d
        body = {**d, "status": rollouts.omit_empty(status)}
        if annotations is not None:
            body["metadata"] = {**d["metadata"], "annotations": annotations}
        self.api.update(self.d_kind, self.namespace, meta(d)["name"], body, subresource="status")

    def event(self, event_type: str, reason: str, message: str) -> None:
        recording.record(self.api, self.d, event_type, reason, message, component=COMPONENT)

    def scale_set(self, rs: Obj, new_scale: int, operation: str | None = None) -> bool:
        """``scaleReplicaSet``: size and replica annotations; True when the size changed."""
        d = self.d
        old_scale = rollouts.replicas(rs)
        annotations = dict(meta(rs).get("annotations") or {})
        wanted = {
            rollouts.DESIRED_REPLICAS: str(rollouts.replicas(d)),
            rollouts.MAX_REPLICAS: str(rollouts.replicas(d) + rollouts.max_surge(d)),
        }
        if old_scale == new_scale and all(annotations.get(k) == v for k, v in wanted.items()):
            return False
        annotations.update(wanted)
        body = {
            **rs,
            "metadata": {**rs["metadata"], "annotations": annotations},
            "spec": {**(rs.get("spec") or {}), "replicas": new_scale},
        }
        self.api.update(self.rs_kind, self.namespace, meta(rs)["name"], body)
        if old_scale == new_scale:
            return False
        operation = operation or ("up" if new_scale > old_scale else "down")
        self.event(
            recording.NORMAL,
            "ScalingReplicaSet",
            f"Scaled {operation} replica set {meta(rs)['name']} from {old_scale} to {new_scale}",
        )
        return True

    def scale_and_record(self, rs: Obj, new_scale: int) -> bool:
        """``scaleReplicaSetAndRecordEvent``."""
        if rollouts.replicas(rs) == new_scale:
            return False
        return self.scale_set(rs, new_scale)

    def fresh(self, rs: Obj | None) -> Obj | None:
        return None if rs is None else self.api.store.get((*REPLICASETS, self.namespace, meta(rs)["name"]))

    # -- syncDeployment ---------------------------------------------------------------------------------

    def run(self) -> None:
        d = self.d
        if meta(d).get("deletionTimestamp"):
            self.sync_status(*self.new_and_old())
        else:
            self.check_paused_conditions()
            if (d.get("spec") or {}).get("paused") or self.is_scaling_event():
                self.sync()
            elif rollouts.strategy(d).get("type") == "Recreate":
                self.rollout_recreate()
            else:
                self.rollout_rolling()

    def check_paused_conditions(self) -> None:
        d = self.d
        if (d.get("spec") or {}).get("progressDeadlineSeconds") is None:
            return
        status = dict(d.get("status") or {})
        cond = rollouts.condition(status, "Progressing")
        if cond is not None and cond.get("reason") == rollouts.TIMED_OUT:
            return
        paused_exists = cond is not None and cond.get("reason") == rollouts.PAUSED
        paused = bool((d.get("spec") or {}).get("paused"))
        if paused and not paused_exists:
            rollouts.set_condition(
                status, "Progressing", "Unknown", rollouts.PAUSED, "Deployment is paused", self.now()
            )
        elif not paused and paused_exists:
            rollouts.set_condition(
                status, "Progressing", "Unknown", rollouts.RESUMED, "Deployment is resumed", self.now()
            )
        else:
            return
        self.write_status(status)

    def is_scaling_event(self) -> bool:
        new, old = self.get_all_and_sync_revision(create=False)
        desired = rollouts.replicas(self.d)
        for rs in rollouts.active([*old, *([new] if new is not None else [])]):
            annotated = rollouts.annotation_int(rs, rollouts.DESIRED_REPLICAS)
            if annotated is not None and annotated != desired:
                return True
        return False

    def sync(self) -> None:
        """``sync``: a scaling event or a paused Deployment - scale, clean up when paused, status."""
        new, old = self.get_all_and_sync_revision(create=False)
        self.scale(new, old)
        if (self.d.get("spec") or {}).get("paused"):
            self.cleanup(old)
        new, old = self.get_all_and_sync_revision(create=False)
        self.sync_status(new, old)

    # -- the new ReplicaSet and revisions ---------------------------------------------------------------

    def get_all_and_sync_revision(self, *, create: bool) -> tuple[Obj | None, list[Obj]]:
        """``getAllReplicaSetsAndSyncRevision``: (new set, old sets), the new one created if asked."""
        new, old = self.new_and_old()
        new_revision = max((rollouts.revision(rs) for rs in old), default=0) + 1
        if new is not None:
            return self.sync_existing_new(new, new_revision), old
        if not create:
            return None, old
        return self.create_new(old, new_revision), old

    def copy_annotations(self, annotations: dict[str, str]) -> None:
        for k, v in (meta(self.d).get("annotations") or {}).items():
            if k not in NOT_COPIED:
                annotations[k] = v

    def sync_existing_new(self, rs: Obj, new_revision: int) -> Obj:
        d = self.d
        annotations = dict(meta(rs).get("annotations") or {})
        before = dict(annotations)
        self.copy_annotations(annotations)
        old_revision = annotations.get(rollouts.REVISION)
        if rollouts.revision(rs) < new_revision:
            annotations[rollouts.REVISION] = str(new_revision)
            if old_revision is not None:
                # Rolled back to this set: keep the revisions it served before.
                history = [r for r in annotations.get(rollouts.REVISION_HISTORY, "").split(",") if r] + [
                    old_revision
                ]
                while len(",".join(history)) > REVISION_HISTORY_CHARS and len(history) > 1:
                    history.pop(0)
                annotations[rollouts.REVISION_HISTORY] = ",".join(history)
        min_ready = (d.get("spec") or {}).get("minReadySeconds") or 0
        if annotations != before or ((rs.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
            spec = {**(rs.get("spec") or {}), "minReadySeconds": min_ready}
            if not min_ready:
                spec.pop("minReadySeconds")
            body = {**rs, "metadata": {**rs["metadata"], "annotations": annotations}, "spec": spec}
            return self.api.update(self.rs_kind, self.namespace, meta(rs)["name"], body).body
        d_annotations = dict(meta(d).get("annotations") or {})
        status = dict(d.get("status") or {})
        changed = d_annotations.get(rollouts.REVISION) != annotations.get(rollouts.REVISION, "")
        d_annotations[rollouts.REVISION] = annotations.get(rollouts.REVISION, "")
        if (d.get("spec") or {}).get("progressDeadlineSeconds") is not None and rollouts.condition(
            status, "Progressing"
        ) is None:
            rollouts.set_condition(
                status,
                "Progressing",
                "True",
                rollouts.FOUND_NEW_RS,
                f'Found new replica set "{meta(rs)["name"]}"',
                self.now(),
            )
            changed = True
        if changed:
            self.write_status(status, d_annotations)
        return rs

    def create_new(self, old: list[Obj], new_revision: int) -> Obj | None:
        d = self.d
        spec = d.get("spec") or {}
        status = dict(d.get("status") or {})
        collisions = status.get("collisionCount")
        template = dict(spec.get("template") or {})
        pod_hash = podcontrol.template_hash(template, collisions)
        tmeta = dict(template.get("metadata") or {})
        labels = {**(tmeta.get("labels") or {}), rollouts.HASH_LABEL: pod_hash}
        template = {**template, "metadata": {**tmeta, "labels": labels}}
        selector = dict(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), rollouts.HASH_LABEL: pod_hash}
        name = f"{meta(d)['name']}-{pod_hash}"
        rs_spec: dict[str, Any] = {"replicas": 0, "selector": selector, "template": template}
        if spec.get("minReadySeconds"):
            rs_spec["minReadySeconds"] = spec["minReadySeconds"]
        draft: Obj = {"metadata": {"name": name}, "spec": rs_spec}
        rs_spec["replicas"] = rollouts.new_set_replicas(d, [*old, draft], draft)
        annotations: dict[str, str] = {}
        self.copy_annotations(annotations)
        annotations[rollouts.REVISION] = str(new_revision)
        annotations[rollouts.DESIRED_REPLICAS] = str(rollouts.replicas(d))
        annotations[rollouts.MAX_REPLICAS] = str(rollouts.replicas(d) + rollouts.max_surge(d))
        body = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "labels": labels,
                "annotations": annotations,
                "ownerReferences": [podcontrol.new_controller_ref(d)],
            },
            "spec": rs_spec,
        }
        try:
            created = self.api.create(self.rs_kind, self.namespace, body).body
        except errors.ApiError as err:
            if err.reason == "AlreadyExists":
                return self.on_collision(name)
            if err.code == 403 and "being terminated" in err.message:
                return None
            self.controller.retry(self.key)
            message = f'Failed to create new replica set "{name}": {err.message}'
            if spec.get("progressDeadlineSeconds") is not None:
                rollouts.set_condition(
                    status, "Progressing", "False", rollouts.FAILED_RS_CREATE, message, self.now()
                )
                self.write_status(status)
            self.event(recording.WARNING, rollouts.FAILED_RS_CREATE, message)
            return None
        self.controller.forget(self.key)
        if rs_spec["replicas"] > 0:
            self.event(
                recording.NORMAL,
                "ScalingReplicaSet",
                f"Scaled up replica set {name} from 0 to {rs_spec['replicas']}",
            )
        d = self.d
        status = dict(d.get("status") or {})
        d_annotations = {**(meta(d).get("annotations") or {}), rollouts.REVISION: str(new_revision)}
        if spec.get("progressDeadlineSeconds") is not None:
            rollouts.set_condition(
                status,
                "Progressing",
                "True",
                rollouts.NEW_RS_CREATED,
                f'Created new replica set "{name}"',
                self.now(),
            )
        self.write_status(status, d_annotations)
        return created

    def on_collision(self, name: str) -> Obj | None:
        """The name is taken: our own set with an equal template after all, or a hash collision."""
        d = self.d
        existing = self.api.store.get((*REPLICASETS, self.namespace, name))
        if (
            existing is not None
            and podcontrol.controlled_by(existing, d)
            and rollouts.same_template(existing, d)
        ):
            return existing
        status = dict(d.get("status") or {})
        status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
        self.write_status(status)
        return None

    # -- strategies ----------------------------------------------------------------------------------------

    def rollout_rolling(self) -> None:
        new, old = self.get_all_and_sync_revision(create=True)
        if new is None:
            return
        if not (self.reconcile_new(new, old) or self.reconcile_old(new, old)):
            new, old = self.refreshed(new, old)
            if rollouts.complete(self.d, dict(self.d.get("status") or {})):
                self.cleanup(old)
        self.sync_rollout_status(*self.refreshed(new, old))

    def refreshed(self, new: Obj | None, old: list[Obj]) -> tuple[Obj | None, list[Obj]]:
        return self.fresh(new), [rs for rs in (self.fresh(o) for o in old) if rs is not None]

    def reconcile_new(self, new: Obj, old: list[Obj]) -> bool:
        d = self.d
        if rollouts.replicas(new) == rollouts.replicas(d):
            return False
        if rollouts.replicas(new) > rollouts.replicas(d):
            return self.scale_and_record(new, rollouts.replicas(d))
        return self.scale_and_record(new, rollouts.new_set_replicas(d, [*old, new], new))

    def reconcile_old(self, new: Obj, old: list[Obj]) -> bool:
        """``reconcileOldReplicaSets``: scale down unhealthy old pods, then old sets within maxUnavailable."""
        d = self.d
        new = self.fresh(new) or new
        old_active = [rs for rs in (self.fresh(o) for o in rollouts.active(old)) if rs is not None]
        if rollouts.spec_sum(old_active) == 0:
            return False
        all_count = rollouts.spec_sum([*old_active, new])
        min_available = rollouts.replicas(d) - rollouts.max_unavailable(d)
        new_unavailable = rollouts.replicas(new) - int(
            (new.get("status") or {}).get("availableReplicas") or 0
        )
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        cleaned = self.cleanup_unhealthy(sorted(old_active, key=podcontrol.creation_key), max_scaled_down)
        old_active = [rs for rs in (self.fresh(o) for o in old_active) if rs is not None]
        scaled = self.scale_down_old(new, sorted(old_active, key=podcontrol.creation_key))
        return cleaned + scaled > 0

    def cleanup_unhealthy(self, old: list[Obj], max_cleanup: int) -> int:
        total = 0
        for rs in old:
            if total >= max_cleanup:
                break
            size = rollouts.replicas(rs)
            available = int((rs.get("status") or {}).get("availableReplicas") or 0)
            if size == 0 or size == available:
                continue
            count = min(max_cleanup - total, size - available)
            self.scale_and_record(rs, size - count)
            total += count
        return total

    def scale_down_old(self, new: Obj, old: list[Obj]) -> int:
        d = self.d
        min_available = rollouts.replicas(d) - rollouts.max_unavailable(d)
        available = rollouts.sum_of([*old, self.fresh(new) or new], "availableReplicas")
        if available <= min_available:
            return 0
        to_scale_down = available - min_available
        total = 0
        for rs in old:
            if total >= to_scale_down:
                break
            if rollouts.replicas(rs) == 0:
                continue
            count = min(rollouts.replicas(rs), to_scale_down - total)
            self.scale_and_record(rs, rollouts.replicas(rs) - count)
            total += count
        return total

    def rollout_recreate(self) -> None:
        new, old = self.get_all_and_sync_revision(create=False)
        scaled_down = False
        for rs in rollouts.active(old):
            scaled_down = self.scale_and_record(rs, 0) or scaled_down
        if not scaled_down and not self.old_pods_running(*self.refreshed(new, old)):
            if new is None:
                new, old = self.get_all_and_sync_revision(create=True)
            if new is not None:
                self.scale_and_record(new, rollouts.replicas(self.d))
                new, old = self.refreshed(new, old)
                if rollouts.complete(self.d, dict(self.d.get("status") or {})):
                    self.cleanup(old)
        self.sync_rollout_status(*self.refreshed(new, old))

    def old_pods_running(self, new: Obj | None, old: list[Obj]) -> bool:
        """``oldPodsRunning``: an old set still reports pods, or one of its pods is not terminal."""
        if rollouts.sum_of(old, "replicas") > 0:
            return True
        old_uids = {meta(rs)["uid"] for rs in old}
        selector = podcontrol.selector_of(self.d)
        for pod in self.api.store.items(PODS, self.namespace):
            ref = podcontrol.controller_ref(pod)
            if ref is None or ref.get("uid") not in old_uids:
                continue
            if selector is not None and not selector.matches(podcontrol.labels_of(pod)):
                continue
            if podcontrol.phase(pod) not in ("Succeeded", "Failed"):
                return True
        return False

    # -- scaling events ------------------------------------------------------------------------------------

    def scale(self, new: Obj | None, old: list[Obj]) -> None:
        """``scale``: bring the sets to the Deployment's size, proportionally while several are active."""
        d = self.d
        desired = rollouts.replicas(d)
        everything = [*old, *([new] if new is not None else [])]
        live = rollouts.active(everything)
        if len(live) <= 1:
            target = live[0] if live else (new or (max(old, key=podcontrol.creation_key) if old else None))
            if target is not None and rollouts.replicas(target) != desired:
                self.scale_and_record(target, desired)
            return
        if new is not None and rollouts.saturated(d, new):
            for rs in rollouts.active(old):
                self.scale_and_record(rs, 0)
            return
        if not rollouts.is_rolling(d):
            return
        allowed = desired + rollouts.max_surge(d) if desired > 0 else 0
        to_add = allowed - rollouts.spec_sum(live)
        if to_add > 0:
            # ReplicaSetsBySizeNewer: larger first, newer first among equals.
            live.sort(key=lambda rs: podcontrol.creation_key(rs), reverse=True)
            live.sort(key=rollouts.replicas, reverse=True)
            operation = "up"
        else:
            # ReplicaSetsBySizeOlder: larger first, older first among equals.
            live.sort(key=podcontrol.creation_key)
            live.sort(key=rollouts.replicas, reverse=True)
            operation = "down"
        added = 0
        sizes: dict[str, int] = {}
        for rs in live:
            share = rollouts.proportion(d, rs, to_add, added) if to_add else 0
            sizes[meta(rs)["name"]] = rollouts.replicas(rs) + share
            added += share
        for i, rs in enumerate(live):
            name = meta(rs)["name"]
            if i == 0 and to_add:
                sizes[name] = max(sizes[name] + to_add - added, 0)
            self.scale_set(rs, sizes[name], operation)

    # -- cleanup and status ------------------------------------------------------------------------------

    def cleanup(self, old: list[Obj]) -> None:
        for rs in rollouts.surplus_sets(self.d, old):
            options = {"preconditions": {"uid": meta(rs)["uid"]}}
            self.api.delete(self.rs_kind, self.namespace, meta(rs)["name"], options)

    def sync_status(self, new: Obj | None, old: list[Obj]) -> None:
        """``syncDeploymentStatus``."""
        d = self.d
        status = rollouts.calculate_status(d, new, old, self.now())
        if rollouts.omit_empty(status) != rollouts.omit_empty(dict(d.get("status") or {})):
            self.write_status(status)

    def sync_rollout_status(self, new: Obj | None, old: list[Obj]) -> None:
        """``syncRolloutStatus``; with nothing to write, a check when the progress deadline passes."""
        d = self.d
        now = self.api.clock()
        status = rollouts.rollout_status(d, new, old, now, format_time(now))
        if rollouts.omit_empty(status) != rollouts.omit_empty(dict(d.get("status") or {})):
            self.write_status(status)
            return
        after = rollouts.progress_check_in(d, status, now)
        if after is not None:
            # A second more, as upstream, against clock skew between the timestamps and the timer.
            self.controller.add_after(self.key, after + 1.0)
