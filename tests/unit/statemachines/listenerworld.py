"""A dict world for the AutoscalingListener machine: it builds snapshots and applies decisions' effects.

Inputs: an AutoscalingListener body (``make_listener``), its AutoscalingRunnerSet (present unless removed)
and the credentials Secret; the test plays the kubelet (``run``, ``end``, ``evict``). Outputs:
``snapshot()`` for ``decide``, and after ``apply`` the world as the API server and the executor leave it:
creates (AlreadyExists counts as success), deletes (an object with finalizers keeps a
``deletionTimestamp``; a pod goes at once, as if its kubelet were quick), merge patches, the config Secret
(its metadata as the effect says) and the proxy Secret (the executor's integrity hash over the proxy
block), with every result under its effect key and the world's time as ``at``. Requeues and Events are
recorded.

Not modelled: watch lag, Secret data, and the clock moves only through ``advance``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from statemachines import autoscalinglisteners, effects, kinds, naming, patches, pods
from statemachines.decisions import Decision
from statemachines.snapshots import Settings, Snapshot

AL_NS = "arc-systems"
AL_NAME = "arc-bcdfghjk-listener"
ARS_NS = "team"
REF = effects.ObjectRef("AutoscalingListener", AL_NS, AL_NAME)
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
SETTINGS = Settings(
    controller_namespace=AL_NS, listener_metrics_addr=":8080", listener_metrics_endpoint="/metrics"
)


def make_listener(
    *, proxy: bool = False, template: dict[str, Any] | None = None, finalizers: list[str] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "githubConfigUrl": "https://github.com/org",
        "githubConfigSecret": "creds",
        "runnerScaleSetId": 7,
        "autoscalingRunnerSetNamespace": ARS_NS,
        "autoscalingRunnerSetName": "arc",
        "ephemeralRunnerSetName": "arc",
        "maxRunners": 10,
        "minRunners": 1,
        "image": "arcsm:1.0",
        "imagePullSecrets": [{"name": "pull"}],
        "metrics": {"counters": {"gha_started_jobs_total": {"labels": ["repository"]}}},
        "serviceAccountMetadata": {"annotations": {"iam": "role-1"}},
    }
    if proxy:
        spec["proxy"] = {"https": {"url": "http://proxy:3128", "credentialSecretRef": "proxy-creds"}}
    if template is not None:
        spec["template"] = template
    return {
        "apiVersion": kinds.API_VERSION,
        "kind": "AutoscalingListener",
        "metadata": {
            "name": AL_NAME,
            "namespace": AL_NS,
            "uid": "al-uid",
            "generation": 1,
            "resourceVersion": "1",
            "finalizers": [autoscalinglisteners.FINALIZER] if finalizers is None else finalizers,
            "labels": {
                naming.LABEL_SCALE_SET_NAME: "arc",
                naming.LABEL_COMPONENT: "runner-scale-set-listener",
            },
            "annotations": {naming.ANNOTATION_INTEGRITY_HASH: "al-hash"},
        },
        "spec": spec,
    }


# Where the machine finds each related object: (kind, namespace, name).
RELATED = {
    autoscalinglisteners.ARS: ("AutoscalingRunnerSet", ARS_NS, "arc"),
    autoscalinglisteners.SERVICE_ACCOUNT: ("ServiceAccount", AL_NS, AL_NAME),
    autoscalinglisteners.ROLE: ("Role", ARS_NS, AL_NAME),
    autoscalinglisteners.ROLE_BINDING: ("RoleBinding", ARS_NS, AL_NAME),
    autoscalinglisteners.CONFIG_SECRET: ("Secret", AL_NS, f"{AL_NAME}-config"),
    autoscalinglisteners.PROXY_SECRET: ("Secret", AL_NS, f"{AL_NAME}-proxy"),
    autoscalinglisteners.POD: ("Pod", AL_NS, AL_NAME),
    autoscalinglisteners.CREDENTIALS_SECRET: ("Secret", ARS_NS, "creds"),
}


@dataclass
class ListenerWorld:
    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    now: datetime = NOW
    requeues: list[float] = field(default_factory=list)
    events: list[effects.EmitEvent] = field(default_factory=list)
    _serial: int = 1

    @classmethod
    def with_listener(cls, listener: dict[str, Any] | None = None) -> ListenerWorld:
        world = cls()
        world.put(listener if listener is not None else make_listener())
        world.put({"kind": "AutoscalingRunnerSet", "metadata": {"name": "arc", "namespace": ARS_NS}})
        world.put({"kind": "Secret", "metadata": {"name": "creds", "namespace": ARS_NS}})
        return world

    def put(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        meta.setdefault("uid", f"{obj['kind'].lower()}-uid-{self._serial}")
        self._touch(obj)
        self.objects[(obj["kind"], meta["namespace"], meta["name"])] = obj

    def get(self, key: str) -> dict[str, Any] | None:
        return self.objects.get(RELATED[key])

    @property
    def listener(self) -> dict[str, Any] | None:
        return self.objects.get(("AutoscalingListener", AL_NS, AL_NAME))

    def snapshot(self) -> Snapshot:
        return Snapshot(
            subject=REF,
            obj=copy.deepcopy(self.listener),
            now=self.now,
            settings=SETTINGS,
            related={key: copy.deepcopy(self.objects.get(where)) for key, where in RELATED.items()},
            results=copy.deepcopy(self.results),
        )

    def step(self) -> Decision:
        decision = autoscalinglisteners.decide(self.snapshot())
        self.apply(decision)
        return decision

    def settle(self, limit: int = 20) -> list[Decision]:
        """Decide and apply until a pass has nothing to do (or ``limit`` passes)."""
        taken = []
        for _ in range(limit):
            decision = self.step()
            taken.append(decision)
            if decision.is_noop:
                return taken
        raise AssertionError(f"not settled after {limit} passes: {[d.note for d in taken]}")

    # -- the clock and the kubelet -------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def _pod(self) -> dict[str, Any]:
        pod = self.get(autoscalinglisteners.POD)
        assert pod is not None, "no listener pod"
        return pod

    def run(self) -> None:
        pod = self._pod()
        state = {"running": {"startedAt": pods.format_time(self.now)}}
        pod["status"] = {"phase": "Running", "containerStatuses": [{"name": "listener", "state": state}]}
        self._touch(pod)

    def end(self, exit_code: int = 1) -> None:
        pod = self._pod()
        started = pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
        terminated = {"exitCode": exit_code, "startedAt": started, "finishedAt": pods.format_time(self.now)}
        pod["status"] = {
            "phase": "Failed",
            "containerStatuses": [{"name": "listener", "state": {"terminated": terminated}}],
        }
        self._touch(pod)

    def evict(self) -> None:
        pod = self._pod()
        pod["status"] = {**pod["status"], "phase": "Failed", "reason": "Evicted"}
        self._touch(pod)

    # -- applying a decision ------------------------------------------------------------------------------

    def apply(self, decision: Decision) -> None:
        for effect in decision.effects:
            result = self._perform(effect)
            if result is not None:
                self.results[effect.key] = {**result, "at": pods.format_time(self.now)}

    def _perform(self, effect: effects.Effect) -> dict[str, Any] | None:
        if isinstance(effect, effects.CreateObject):
            return self._create(effect.target, dict(effect.body))
        if isinstance(effect, effects.MergePatch):
            return self._patch(effect)
        if isinstance(effect, effects.DeleteObject):
            return self._delete(effect.target)
        if isinstance(effect, effects.CreateListenerConfigSecret | effects.WriteProxySecret):
            return self._secret(effect)
        if isinstance(effect, effects.RequeueAfter):
            self.requeues.append(effect.seconds)
        elif isinstance(effect, effects.EmitEvent):
            self.events.append(effect)
        return None

    def _key(self, target: effects.ObjectRef) -> tuple[str, str, str]:
        return (target.kind, target.namespace, target.name)

    def _touch(self, obj: dict[str, Any]) -> None:
        self._serial += 1
        obj["metadata"]["resourceVersion"] = str(self._serial)

    def _create(self, target: effects.ObjectRef, body: dict[str, Any]) -> dict[str, Any]:
        if self._key(target) in self.objects:
            return {"ok": True}
        obj = copy.deepcopy(body)
        obj["metadata"]["creationTimestamp"] = pods.format_time(self.now)
        obj["metadata"].pop("uid", None)
        self.put(obj)
        return {"ok": True}

    def _patch(self, effect: effects.MergePatch) -> dict[str, Any]:
        obj = self.objects.get(self._key(effect.target))
        if obj is None:
            return {"ok": False, "error": "NotFound"}
        if effect.resource_version and effect.resource_version != obj["metadata"]["resourceVersion"]:
            return {"ok": False, "error": "Conflict"}
        patched = patches.apply(obj, effect.patch)
        obj.clear()
        obj.update(patched)
        self._touch(obj)
        if obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers"):
            del self.objects[self._key(effect.target)]
        return {"ok": True}

    def _delete(self, target: effects.ObjectRef) -> dict[str, Any]:
        obj = self.objects.get(self._key(target))
        if obj is not None and obj["metadata"].get("finalizers"):
            obj["metadata"].setdefault("deletionTimestamp", pods.format_time(self.now))
            self._touch(obj)
        elif obj is not None:
            del self.objects[self._key(target)]
        return {"ok": True}

    def _secret(
        self, effect: effects.CreateListenerConfigSecret | effects.WriteProxySecret
    ) -> dict[str, Any]:
        metadata = copy.deepcopy(dict(effect.metadata))
        if isinstance(effect, effects.WriteProxySecret):
            annotations = metadata.setdefault("annotations", {})
            annotations[naming.ANNOTATION_INTEGRITY_HASH] = naming.stable_hash(effect.proxy)
        body = {
            "kind": "Secret",
            "metadata": {
                "name": effect.target.name,
                "namespace": effect.target.namespace,
                "ownerReferences": [dict(effect.owner)],
                **metadata,
            },
        }
        existing = self.objects.get(self._key(effect.target))
        if existing is not None and isinstance(effect, effects.WriteProxySecret):
            existing["metadata"].update(body["metadata"])
            self._touch(existing)
            return {"ok": True}
        return self._create(effect.target, body)
