"""A dict world for the EphemeralRunnerSet machine: it builds snapshots and applies decisions' effects.

Inputs: an EphemeralRunnerSet body (``make_ers``) and runners added through the helpers that stand in for
the EphemeralRunner controller and the listener (``add_runner``, ``set_runner``, ``listener_patch``).
Outputs: ``snapshot()`` for ``decide``, and after ``apply(decision)`` the world as the API server and the
executor would leave it: creates (AlreadyExists for a taken name), deletes (a runner keeps a
``deletionTimestamp`` until ``settle()``, because its finalizers are the EphemeralRunner controller's
business), status and metadata merge patches (with resourceVersion preconditions), proxy Secret writes,
and ``ReleaseRunner`` against a fake Actions service whose answers per runner id are set in ``busy`` and
``failing``. The results land in ``results`` by effect key, as the executor records them.

Not modelled: watch lag (a test builds lagged snapshots by hand), generation bumps by anything but
``listener_patch``/``publish``, and the clock (timestamps come from a counter).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from statemachines import effects, ephemeralrunnersets, kinds, naming
from statemachines.decisions import Decision
from statemachines.snapshots import Snapshot

NS = "default"
NAME = "arc"
REF = effects.ObjectRef("EphemeralRunnerSet", NS, NAME)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
CONFIG_URL = "https://github.com/org"


def make_ers(
    *,
    rev: int = 1,
    app: int | None = None,
    replicas: int = 0,
    patch_id: int = 0,
    phase: str | None = "Running",
    proxy: bool = False,
    finalizer: bool = True,
    generation: int = 1,
) -> dict[str, Any]:
    runner_spec: dict[str, Any] = {
        "githubConfigUrl": CONFIG_URL,
        "githubConfigSecret": "creds",
        "runnerScaleSetId": 7,
        "spec": {"containers": [{"name": "runner", "image": "runner:1"}]},
    }
    if proxy:
        runner_spec["proxy"] = {"https": {"url": "http://proxy:3128", "credentialSecretRef": "proxy-creds"}}
    status: dict[str, Any] = {}
    if phase is not None:
        status = {
            "currentReplicas": 0,
            "pendingEphemeralRunners": 0,
            "runningEphemeralRunners": 0,
            "failedEphemeralRunners": 0,
            "phase": phase,
            "appliedActionableRevision": rev if app is None else app,
        }
    return {
        "apiVersion": kinds.API_VERSION,
        "kind": "EphemeralRunnerSet",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "uid": "ers-uid",
            "generation": generation,
            "resourceVersion": "1",
            "finalizers": [ephemeralrunnersets.FINALIZER] if finalizer else [],
            "labels": {
                naming.LABEL_SCALE_SET_NAME: NAME,
                naming.LABEL_SCALE_SET_NAMESPACE: NS,
                naming.LABEL_COMPONENT: "runner-set",
            },
            "annotations": {naming.ANNOTATION_RUNNER_GROUP_NAME: "default"},
        },
        "spec": {
            "replicas": replicas,
            "patchID": patch_id,
            "actionableRevision": rev,
            "ephemeralRunnerSpec": runner_spec,
        },
        "status": status,
    }


def make_runner(
    name: str,
    *,
    phase: str = "",
    runner_id: int = 0,
    job: bool = False,
    revision: int | None = 1,
    patch_id: int | None = 1,
    created: int = 0,
    deleting: bool = False,
) -> dict[str, Any]:
    annotations: dict[str, str] = {}
    if revision is not None:
        annotations[naming.ANNOTATION_ACTIONABLE_REVISION] = str(revision)
    if patch_id is not None:
        annotations[naming.ANNOTATION_PATCH_ID] = str(patch_id)
    meta: dict[str, Any] = {
        "name": name,
        "namespace": NS,
        "uid": f"uid-{name}",
        "creationTimestamp": f"2026-01-01T00:{created // 60:02d}:{created % 60:02d}Z",
        "annotations": annotations,
        "finalizers": [naming.FINALIZER_EPHEMERAL_RUNNER, naming.FINALIZER_RUNNER_REGISTRATION],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T01:00:00Z"
    status: dict[str, Any] = {"phase": phase}
    if runner_id:
        status["runnerId"] = runner_id
        status["runnerName"] = name
    if job:
        status["jobId"] = f"job-{name}"
    return {"kind": "EphemeralRunner", "metadata": meta, "spec": {}, "status": status}


def merge(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping):
            current = out.get(key)
            out[key] = merge(current if isinstance(current, Mapping) else {}, value)
        else:
            out[key] = value
    return out


@dataclass
class World:
    ers: dict[str, Any] | None
    runners: dict[str, dict[str, Any]] = field(default_factory=dict)
    proxy_secret: dict[str, Any] | None = None
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    busy: set[int] = field(default_factory=set)  # RemoveRunner answers JobStillRunning
    failing: set[int] = field(default_factory=set)  # RemoveRunner answers 500
    remove_calls: list[int] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    conflicts: int = 0
    requeues: list[float] = field(default_factory=list)
    events: list[effects.EmitEvent] = field(default_factory=list)
    status_writes: int = 0
    tick: int = 100
    next_runner_id: int = 100
    history: list[Decision] = field(default_factory=list)
    now: datetime = NOW

    # -- the snapshot and the executor ------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        return Snapshot(
            subject=REF,
            obj=copy.deepcopy(self.ers),
            now=self.now,
            related={ephemeralrunnersets.PROXY_SECRET: copy.deepcopy(self.proxy_secret)},
            children=tuple(copy.deepcopy(r) for r in self.runners.values()),
            results=copy.deepcopy(self.results),
        )

    def step(self) -> Decision:
        decision = ephemeralrunnersets.decide(self.snapshot())
        self.apply(decision)
        self.history.append(decision)
        return decision

    def steps(self, n: int) -> list[Decision]:
        return [self.step() for _ in range(n)]

    def apply(self, decision: Decision) -> None:
        for effect in decision.effects:
            self._apply(effect)

    def _apply(self, effect: effects.Effect) -> None:
        if isinstance(effect, effects.CreateObject):
            self._create(effect)
        elif isinstance(effect, effects.DeleteObject):
            self._delete(effect.target, effect.uid)
        elif isinstance(effect, effects.MergePatch):
            self._patch(effect)
        elif isinstance(effect, effects.ReleaseRunner):
            self._release(effect)
        elif isinstance(effect, effects.WriteProxySecret):
            self.proxy_secret = {
                "metadata": {"name": effect.target.name, "uid": "proxy-uid", **effect.metadata}
            }
        elif isinstance(effect, effects.RequeueAfter):
            self.requeues.append(effect.seconds)
        elif isinstance(effect, effects.EmitEvent):
            self.events.append(effect)
        else:  # pragma: no cover - a new effect type needs a rule here
            raise AssertionError(f"unexpected effect {effect!r}")

    def _create(self, effect: effects.CreateObject) -> None:
        assert effect.target.kind == "EphemeralRunner"
        name = effect.target.name
        if name in self.runners:
            return  # AlreadyExists counts as success
        body = copy.deepcopy(dict(effect.body))
        self.tick += 1
        stamp = f"2026-01-01T02:{self.tick // 60:02d}:{self.tick % 60:02d}Z"
        body["metadata"].update(uid=f"uid-{name}", creationTimestamp=stamp)
        body["status"] = {}
        self.runners[name] = body
        self.created.append(name)

    def _delete(self, target: effects.ObjectRef, uid: str) -> None:
        if target.kind == "Secret":
            self.proxy_secret = None
            return
        runner = self.runners.get(target.name)
        if runner is None or (uid and runner["metadata"]["uid"] != uid):
            return  # NotFound / precondition failed
        runner["metadata"]["deletionTimestamp"] = "2026-01-01T03:00:00Z"

    def _patch(self, effect: effects.MergePatch) -> None:
        assert effect.target == REF and self.ers is not None
        if effect.resource_version and effect.resource_version != self.ers["metadata"]["resourceVersion"]:
            self.conflicts += 1
            return
        if effect.subresource == "status":
            assert set(effect.patch) == {"status"}
            self.status_writes += 1
        else:
            assert set(effect.patch) == {"metadata"}
        self.ers = merge(self.ers, effect.patch)
        self._bump()

    def _release(self, effect: effects.ReleaseRunner) -> None:
        assert effect.subject == REF
        self.remove_calls.append(effect.runner_id)
        if effect.runner_id in self.failing:
            body: dict[str, Any] = {"ok": False, "error": "ServiceUnavailable", "message": "500"}
        elif effect.runner_id in self.busy:
            body = {"ok": False, "error": "JobStillRunning", "message": "job still running"}
            body["at"] = self.now.isoformat().replace("+00:00", "Z")
        else:
            self._delete(effect.target, effect.uid)
            body = {"ok": True}
        self.results[effect.key] = body

    def _bump(self) -> None:
        assert self.ers is not None
        self.ers["metadata"]["resourceVersion"] = str(int(self.ers["metadata"]["resourceVersion"]) + 1)

    # -- the other actors ---------------------------------------------------------------------------------

    def settle(self) -> None:
        """The EphemeralRunner controller finishes every deletion: deleting runners disappear."""
        for name in [n for n, r in self.runners.items() if r["metadata"].get("deletionTimestamp")]:
            del self.runners[name]

    def add_runner(self, name: str, **kwargs: Any) -> dict[str, Any]:
        runner = make_runner(name, **kwargs)
        self.runners[name] = runner
        return runner

    def set_runner(self, name: str, **status: Any) -> None:
        """The EphemeralRunner controller (or the listener) writes the runner's status."""
        self.runners[name]["status"].update(status)

    def register_all(self) -> None:
        """Every new runner registers and starts: runner id assigned, phase Running."""
        for runner in self.runners.values():
            if not runner["status"].get("runnerId"):
                self.next_runner_id += 1
                runner["status"].update(runnerId=self.next_runner_id, runnerName=runner["metadata"]["name"])
            if not runner["status"].get("phase"):
                runner["status"]["phase"] = "Running"

    def listener_patch(self, *, replicas: int, patch_id: int) -> None:
        """The listener (or the parked ARS) merge-patches the spec: a spec write bumps the generation."""
        self._spec_write({"replicas": replicas, "patchID": patch_id})

    def publish(self, rev: int) -> None:
        """The ARS publishes a runner spec at revision ``rev``."""
        self._spec_write({"actionableRevision": rev})

    def _spec_write(self, spec: Mapping[str, Any]) -> None:
        assert self.ers is not None
        self.ers["spec"].update(spec)
        self.ers["metadata"]["generation"] += 1
        self._bump()

    # -- reading the world --------------------------------------------------------------------------------

    @property
    def obj(self) -> dict[str, Any]:
        """The set itself (a test that deletes it uses ``ers`` directly)."""
        assert self.ers is not None
        return self.ers

    @property
    def status(self) -> Mapping[str, Any]:
        assert self.ers is not None
        return self.ers.get("status") or {}

    @property
    def live(self) -> list[str]:
        """Runners not being deleted."""
        return sorted(n for n, r in self.runners.items() if not r["metadata"].get("deletionTimestamp"))

    def phases(self) -> dict[str, str]:
        return {n: r["status"].get("phase", "") for n, r in self.runners.items()}


def effects_of(decision: Decision, kind: type[effects.Effect]) -> list[Any]:
    return [e for e in decision.effects if isinstance(e, kind)]


def names(items: Iterable[Any]) -> list[str]:
    return [e.target.name for e in items]
