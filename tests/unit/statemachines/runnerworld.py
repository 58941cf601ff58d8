"""A dict world for the EphemeralRunner machine: it builds snapshots and applies decisions' effects.

Inputs: an EphemeralRunner body (``make_runner``); the test plays the kubelet (``run_pod``) and scripts the
answers of the API server (``create_errors`` per kind) and the Actions service (``jit_errors``,
``remove_errors``, ``registered``). Outputs: ``snapshot()`` for ``decide``, and after ``apply`` the world
as the API server and the executor leave it: creates (AlreadyExists counts as success), deletes (an object
with finalizers keeps a ``deletionTimestamp``), merge patches (status and metadata, resourceVersion
preconditions), the JIT Secret (with the runner id and name annotations the executor writes; a Secret of
another owner is AlreadyExists, as the executor answers), Actions calls (recorded in ``calls``) and every
result under its effect key with the world's time as ``at``.

Not modelled: watch lag (a test hides an object by hand), and the clock moves only through ``advance``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from statemachines import effects, ephemeralrunners, kinds, naming, patches, pods
from statemachines.decisions import Decision
from statemachines.snapshots import Settings, Snapshot

NS = "default"
NAME = "arc-runner-bcdfg"
REF = effects.ObjectRef("EphemeralRunner", NS, NAME)
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
SCALE_SET_ID = 7
SETTINGS = Settings(build_version="0.13.0")


def make_runner(
    *,
    finalizers: list[str] | None = None,
    status: Mapping[str, Any] | None = None,
    containers: list[dict[str, Any]] | None = None,
    proxy: bool = False,
    created: datetime = NOW,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "githubConfigUrl": "https://github.com/org",
        "githubConfigSecret": "creds",
        "runnerScaleSetId": SCALE_SET_ID,
        "metadata": {"labels": {"team": "ci"}, "annotations": {"note": "template"}},
        "spec": {
            "restartPolicy": "Never",
            "containers": containers
            if containers is not None
            else [{"name": "runner", "image": "runner:2", "env": [{"name": "A", "value": "1"}]}],
        },
    }
    if proxy:
        spec["proxy"] = {"http": {"url": "http://proxy:3128"}, "noProxy": ["internal"]}
        spec["proxySecretRef"] = "arc-xyz-runner-proxy"
    return {
        "apiVersion": kinds.API_VERSION,
        "kind": "EphemeralRunner",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "uid": "er-uid",
            "generation": 1,
            "resourceVersion": "1",
            "creationTimestamp": pods.format_time(created),
            "finalizers": list(ephemeralrunners.FINALIZERS) if finalizers is None else finalizers,
            "labels": {naming.LABEL_COMPONENT: "runner", "team": "ops"},
            "annotations": {naming.ANNOTATION_PATCH_ID: "3"},
            "ownerReferences": [{"kind": "EphemeralRunnerSet", "name": "arc", "uid": "ers-uid"}],
        },
        "spec": spec,
        "status": dict(status or {}),
    }


@dataclass
class RunnerWorld:
    objects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    now: datetime = NOW
    calls: list[effects.ActionsCall] = field(default_factory=list)
    requeues: list[float] = field(default_factory=list)
    matching_deletes: list[effects.DeleteMatching] = field(default_factory=list)
    # Scripted answers, consumed in order: {"error": ..., "message": ...}.
    create_errors: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    jit_errors: list[dict[str, Any]] = field(default_factory=list)
    remove_errors: list[dict[str, Any]] = field(default_factory=list)
    # The Actions service's runners by name: (id, scale set id).
    registered: dict[str, tuple[int, int]] = field(default_factory=dict)
    next_runner_id: int = 100
    _serial: int = 1

    @classmethod
    def with_runner(cls, runner: dict[str, Any] | None = None) -> RunnerWorld:
        world = cls()
        world.objects[("EphemeralRunner", NAME)] = runner if runner is not None else make_runner()
        return world

    # -- reading -----------------------------------------------------------------------------------------

    def get(self, kind: str, name: str = NAME) -> dict[str, Any] | None:
        return self.objects.get((kind, name))

    @property
    def runner(self) -> dict[str, Any]:
        runner = self.get("EphemeralRunner")
        assert runner is not None
        return runner

    def snapshot(self, **hide: bool) -> Snapshot:
        """The snapshot the controller would build; ``hide`` (pod=True, secret=True) fakes watch lag."""
        related = {
            "pod": None if hide.get("pod") else self.get("Pod"),
            "secret": None if hide.get("secret") else self.get("Secret"),
        }
        return Snapshot(
            subject=REF,
            obj=copy.deepcopy(self.get("EphemeralRunner")),
            now=self.now,
            settings=SETTINGS,
            related=copy.deepcopy(related),
            results=copy.deepcopy(self.results),
        )

    # -- the clock and the kubelet -------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def run_pod(
        self, phase: str, *, exit_code: int | None = None, ready: bool = False, running: bool = True
    ) -> None:
        pod = self.get("Pod")
        assert pod is not None, "no pod to run"
        state: dict[str, Any] = {"waiting": {"reason": "ContainerCreating"}}
        if exit_code is not None:
            state = {
                "terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error"}
            }
        elif running:
            state = {"running": {"startedAt": pods.format_time(self.now)}}
        pod["status"] = {
            "phase": phase,
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": self._time()}
            ],
            "containerStatuses": [{"name": "runner", "state": state}],
        }
        self._touch(pod)

    # -- applying a decision ------------------------------------------------------------------------------

    def step(self, **hide: bool) -> Decision:
        decision = ephemeralrunners.decide(self.snapshot(**hide))
        self.apply(decision)
        return decision

    def apply(self, decision: Decision) -> None:
        for effect in decision.effects:
            result = self._perform(effect)
            if result is not None:
                self.results[effect.key] = {**result, "at": pods.format_time(self.now)}

    def _perform(self, effect: effects.Effect) -> dict[str, Any] | None:
        if isinstance(effect, effects.CreateObject):
            return self._create(effect.target, effect.body)
        if isinstance(effect, effects.MergePatch):
            return self._patch(effect)
        if isinstance(effect, effects.DeleteObject):
            return self._delete(effect.target)
        if isinstance(effect, effects.CreateJitConfigSecret):
            return self._jit(effect)
        if isinstance(effect, effects.ActionsCall):
            return self._call(effect)
        if isinstance(effect, effects.RequeueAfter):
            self.requeues.append(effect.seconds)
        elif isinstance(effect, effects.DeleteMatching):
            self.matching_deletes.append(effect)
        return None

    def _time(self) -> str:
        return pods.format_time(self.now)

    def _touch(self, obj: dict[str, Any]) -> None:
        self._serial += 1
        obj["metadata"]["resourceVersion"] = str(self._serial)

    def _create(self, target: effects.ObjectRef, body: Mapping[str, Any]) -> dict[str, Any]:
        scripted = self.create_errors.get(target.kind) or []
        if scripted:
            return {"ok": False, **scripted.pop(0)}
        if (target.kind, target.name) in self.objects:
            return {"ok": True}
        obj = copy.deepcopy(dict(body))
        self._serial += 1
        obj["metadata"] = {
            **obj.get("metadata", {}),
            "uid": f"{target.kind.lower()}-uid-{self._serial}",
            "creationTimestamp": self._time(),
        }
        self._touch(obj)
        self.objects[(target.kind, target.name)] = obj
        return {"ok": True}

    def _patch(self, effect: effects.MergePatch) -> dict[str, Any]:
        obj = self.objects.get((effect.target.kind, effect.target.name))
        if obj is None:
            return {"ok": False, "error": "NotFound"}
        if effect.resource_version and effect.resource_version != obj["metadata"].get("resourceVersion"):
            return {"ok": False, "error": "Conflict"}
        if effect.subresource == "status":
            obj["status"] = patches.apply(obj.get("status"), effect.patch.get("status") or {})
        else:
            patched = patches.apply(obj, {k: v for k, v in effect.patch.items() if k != "status"})
            obj.clear()
            obj.update(patched)
        self._touch(obj)
        if obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers"):
            del self.objects[(effect.target.kind, effect.target.name)]
        return {"ok": True}

    def _delete(self, target: effects.ObjectRef) -> dict[str, Any]:
        obj = self.objects.get((target.kind, target.name))
        if obj is None:
            return {"ok": True}
        if obj["metadata"].get("finalizers"):
            obj["metadata"].setdefault("deletionTimestamp", self._time())
            self._touch(obj)
        else:
            del self.objects[(target.kind, target.name)]
        return {"ok": True}

    def _jit(self, effect: effects.CreateJitConfigSecret) -> dict[str, Any]:
        existing = self.get("Secret", effect.target.name)
        owners = [ref.get("uid") for ref in (existing or {}).get("metadata", {}).get("ownerReferences") or []]
        if existing is not None and effect.owner.get("uid") not in owners:
            return {"ok": False, "error": "AlreadyExists", "message": f"belongs to another owner ({owners})"}
        if existing is not None:
            annotations = existing["metadata"].get("annotations") or {}
            return {
                "ok": True,
                "runnerId": int(annotations.get(naming.ANNOTATION_JIT_RUNNER_ID, 0)),
                "runnerName": annotations.get(naming.ANNOTATION_JIT_RUNNER_NAME, ""),
            }
        if self.jit_errors:
            return {"ok": False, **self.jit_errors.pop(0)}
        if effect.runner_name in self.registered:
            return {"ok": False, "error": "RunnerExists", "message": "AgentExistsException"}
        runner_id = self.next_runner_id
        self.next_runner_id += 1
        self.registered[effect.runner_name] = (runner_id, effect.scale_set_id)
        annotations = {
            **dict(effect.metadata.get("annotations") or {}),
            naming.ANNOTATION_JIT_RUNNER_ID: str(runner_id),
            naming.ANNOTATION_JIT_RUNNER_NAME: effect.runner_name,
        }
        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": effect.target.name,
                "namespace": effect.target.namespace,
                "labels": dict(effect.metadata.get("labels") or {}),
                "annotations": annotations,
                "ownerReferences": [dict(effect.owner)],
            },
        }
        self._create(effect.target, body)
        return {"ok": True, "runnerId": runner_id, "runnerName": effect.runner_name}

    def _call(self, call: effects.ActionsCall) -> dict[str, Any]:
        self.calls.append(call)
        if call.op is effects.ActionsOp.REMOVE_RUNNER:
            if self.remove_errors:
                return {"ok": False, **self.remove_errors.pop(0)}
            gone = [n for n, (rid, _) in self.registered.items() if rid == call.args["runnerId"]]
            for name in gone:
                del self.registered[name]
            return {"ok": True} if gone else {"ok": False, "error": "RunnerNotFound"}
        if call.op is effects.ActionsOp.GET_RUNNER_BY_NAME:
            found = self.registered.get(str(call.args["name"]))
            runner = (
                None
                if found is None
                else {"id": found[0], "name": call.args["name"], "runnerScaleSetId": found[1]}
            )
            return {"ok": True, "runner": runner}
        return {"ok": True}
