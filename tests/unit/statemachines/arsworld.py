"""A hand-run world for the AutoscalingRunnerSet machine: objects as dicts, effects applied to them.

Each ``World.step()`` is one reconcile of the ARS (the spec's R1..Rn): it builds the snapshot from the
world, runs the pure ``decide``, and applies the decision's effects the way the API server and a fake
Actions service would (merge patches with generation bumps on spec changes, finalizer-blocked deletes,
results keyed by effect key). Nothing here knows what the machine should do; tests assert on the
world and on the recorded decisions. The EphemeralRunnerSet and listener controllers are not run: a
test plays them by writing the status or objects they would write.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from statemachines import autoscalingrunnersets as ars
from statemachines import claims, desired, effects, kinds, naming, patches
from statemachines.decisions import Decision, Transition
from statemachines.effects import ActionsCall, ActionsOp, ObjectRef
from statemachines.snapshots import Settings, Snapshot

NOW = datetime(2026, 1, 1, tzinfo=UTC)
NS = "default"
NAME = "arc"
SETTINGS = Settings(controller_namespace="arc-systems", listener_image="arcsm:test", build_version="0.1.0")
ARS_REF = ObjectRef(desired.KIND_ARS, NS, NAME)
ERS_REF = ObjectRef(desired.KIND_ERS, NS, NAME)

Key = tuple[str, str, str]


def runner_template(image: str = "ghcr.io/actions/actions-runner:2.320.0", **spec: Any) -> dict[str, Any]:
    return {
        "spec": {
            "containers": [{"name": "runner", "image": image, "command": ["/home/runner/run.sh"]}],
            **spec,
        }
    }


def new_ars(**spec: Any) -> dict[str, Any]:
    """A fresh ARS as the Helm chart creates it (no finalizer, no status)."""
    body: dict[str, Any] = {
        "githubConfigUrl": "https://github.com/org",
        "githubConfigSecret": "creds",
        "template": runner_template(),
    }
    body.update(spec)
    return {
        "apiVersion": kinds.API_VERSION,
        "kind": desired.KIND_ARS,
        "metadata": {"name": NAME, "namespace": NS, "labels": {naming.LABEL_VERSION: "0.1.0"}},
        "spec": body,
    }


@dataclass
class FakeActions:
    """The Actions service: runner groups by name, scale sets by id; every call recorded."""

    groups: dict[str, int] = field(default_factory=lambda: {"Default": 1, "blue": 7, "green": 8})
    scale_sets: dict[int, dict[str, Any]] = field(default_factory=dict)
    calls: list[ActionsCall] = field(default_factory=list)
    failing: dict[ActionsOp, str] = field(default_factory=dict)  # op -> error class, until cleared
    failure_message: str = "injected"  # the message of a failing call's result
    next_id: int = 41

    def group_name(self, group_id: int) -> str:
        return next(name for name, gid in self.groups.items() if gid == group_id)

    def answer(self, call: ActionsCall) -> dict[str, Any]:
        self.calls.append(call)
        if call.op in self.failing:
            return {"ok": False, "error": self.failing[call.op], "message": self.failure_message}
        args = call.args
        if call.op is ActionsOp.GET_RUNNER_GROUP_BY_NAME:
            name = str(args["name"])
            if name not in self.groups:
                return {"ok": False, "error": "RunnerGroupNotFound", "message": name}
            return {"ok": True, "runnerGroup": {"id": self.groups[name], "name": name}}
        if call.op is ActionsOp.GET_RUNNER_SCALE_SET:
            found = [
                s
                for s in self.scale_sets.values()
                if s["name"] == args["name"] and s["runnerGroupId"] == args["runnerGroupId"]
            ]
            return {"ok": True, "scaleSet": copy.deepcopy(found[0]) if found else None}
        if call.op is ActionsOp.CREATE_RUNNER_SCALE_SET:
            self.next_id += 1
            group_id = int(args["runnerGroupId"])
            self.scale_sets[self.next_id] = {
                "id": self.next_id,
                "name": args["name"],
                "runnerGroupId": group_id,
                "runnerGroupName": self.group_name(group_id),
                "labels": [{"name": label, "type": "System"} for label in args["labels"]],
            }
            return {"ok": True, "scaleSet": copy.deepcopy(self.scale_sets[self.next_id])}
        if call.op is ActionsOp.UPDATE_RUNNER_SCALE_SET:
            scale_set = self.scale_sets[int(args["scaleSetId"])]
            if "runnerGroupId" in args:
                scale_set["runnerGroupId"] = int(args["runnerGroupId"])
                scale_set["runnerGroupName"] = self.group_name(int(args["runnerGroupId"]))
            if "name" in args:
                scale_set["name"] = args["name"]
            return {"ok": True, "scaleSet": copy.deepcopy(scale_set)}
        if call.op is ActionsOp.GET_RUNNER_SCALE_SET_BY_ID:
            found = self.scale_sets.get(int(args["scaleSetId"]))
            return {"ok": True, "scaleSet": copy.deepcopy(found)}
        if call.op is ActionsOp.DELETE_RUNNER_SCALE_SET:
            if self.scale_sets.pop(int(args["scaleSetId"]), None) is None:
                return {"ok": False, "error": "NotFound", "message": "no such scale set"}
            return {"ok": True}
        raise AssertionError(f"unexpected call {call.op}")

    def ops(self) -> list[ActionsOp]:
        return [c.op for c in self.calls]


@dataclass
class World:
    objects: dict[Key, dict[str, Any]] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    actions: FakeActions = field(default_factory=FakeActions)
    settings: Settings = SETTINGS
    decisions: list[Decision] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    # Kinds whose creates an admission webhook rejects, kinds whose deletes fail (500), objects whose
    # patches fail.
    reject_creates: set[str] = field(default_factory=set)
    fail_deletes: set[str] = field(default_factory=set)
    fail_patches: set[ObjectRef] = field(default_factory=set)  # e.g. a conflict on every attempt
    counter: int = 0
    now: datetime = NOW  # the decision clock (Snapshot.now); a test moves it
    # Another scale set of the same claim, as the controller finds it (``claims.PEER``); None: none.
    peer: dict[str, Any] | None = None

    # -- objects --------------------------------------------------------------------------------------

    def _next(self) -> int:
        self.counter += 1
        return self.counter

    def add(self, body: dict[str, Any]) -> dict[str, Any]:
        obj = copy.deepcopy(body)
        meta = obj.setdefault("metadata", {})
        meta["uid"] = f"uid-{self._next()}"
        meta["resourceVersion"] = str(self._next())
        meta["generation"] = 1
        meta["creationTimestamp"] = "2026-01-01T00:00:00Z"
        self.objects[(obj["kind"], meta["namespace"], meta["name"])] = obj
        return obj

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects.get((kind, namespace, name))

    def find(self, ref: ObjectRef) -> dict[str, Any] | None:
        return self.get(ref.kind, ref.namespace, ref.name)

    @property
    def ars(self) -> dict[str, Any]:
        found = self.get(desired.KIND_ARS, NS, NAME)
        assert found is not None
        return found

    @property
    def ers(self) -> dict[str, Any] | None:
        return self.get(desired.KIND_ERS, NS, NAME)

    @property
    def listener(self) -> dict[str, Any] | None:
        """The listener naming this ARS in its spec (found by reference, so a renamed one is found too)."""
        for (kind, _, _), obj in self.objects.items():
            spec = obj.get("spec") or {}
            if kind == desired.KIND_LISTENER and spec.get("autoscalingRunnerSetName") == NAME:
                return obj
        return None

    def edit(self, ref: ObjectRef, patch: dict[str, Any]) -> None:
        """A user's (or another controller's) merge patch, with the API server's bookkeeping."""
        self._patch(ref, patch, "")

    def set_status(self, ref: ObjectRef, **status: Any) -> None:
        self._patch(ref, {"status": status}, "status")

    # -- one reconcile --------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        obj = self.get(desired.KIND_ARS, NS, NAME)
        related: dict[str, Any] = {ars.ERS: self.ers, ars.LISTENER: self.listener, claims.PEER: self.peer}
        annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
        for annotation, kind in ars.DEPENDENTS:
            if annotation in annotations:
                related[annotation] = self.get(kind, NS, annotations[annotation])
        return Snapshot(
            subject=ARS_REF,
            obj=copy.deepcopy(obj),
            now=self.now,
            settings=self.settings,
            related=copy.deepcopy(related),
            results=dict(self.results),
        )

    def step(self) -> Decision:
        snapshot = self.snapshot()
        decision = ars.decide(snapshot)
        self.snapshots.append(snapshot)
        self.decisions.append(decision)
        for effect in decision.effects:
            self.apply(effect)
        return decision

    def settle(self, limit: int = 30) -> list[Decision]:
        """Reconcile until a pass decides nothing (the watch would stay quiet); every decision taken."""
        taken: list[Decision] = []
        for _ in range(limit):
            decision = self.step()
            if decision.is_noop:
                return taken
            taken.append(decision)
        raise AssertionError(f"no quiet pass after {limit}: last {self.decisions[-1].as_json()}")

    # -- effects --------------------------------------------------------------------------------------

    def apply(self, effect: effects.Effect) -> None:
        if isinstance(effect, effects.MergePatch) and effect.target not in self.fail_patches:
            self._patch(effect.target, dict(effect.patch), effect.subresource, effect.resource_version)
        elif isinstance(effect, effects.CreateObject):
            self._create(effect)
        elif isinstance(effect, effects.DeleteObject):
            self._delete(effect.target)
        elif isinstance(effect, ActionsCall):
            self.results[effect.key] = self.actions.answer(effect)

    def _create(self, effect: effects.CreateObject) -> None:
        if self.find(effect.target) is not None or effect.target.kind in self.reject_creates:
            return
        body = copy.deepcopy(dict(effect.body))
        body.pop("status", None)
        self.add(body)

    def _delete(self, ref: ObjectRef) -> None:
        obj = self.find(ref)
        if obj is None or ref.kind in self.fail_deletes:
            return
        meta = obj["metadata"]
        if not meta.get("finalizers"):
            del self.objects[(ref.kind, ref.namespace, ref.name)]
        elif not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
            meta["generation"] += 1
            meta["resourceVersion"] = str(self._next())

    def _patch(self, ref: ObjectRef, patch: dict[str, Any], subresource: str, rv: str = "") -> None:
        obj = self.find(ref)
        if obj is None or (rv and rv != obj["metadata"]["resourceVersion"]):
            return
        if subresource == "status":
            obj["status"] = patches.apply(obj.get("status"), patch.get("status") or {})
        else:
            patch.pop("status", None)
            before = copy.deepcopy(obj.get("spec"))
            updated = patches.apply(obj, patch)
            obj.clear()
            obj.update(updated)
            if obj.get("spec") != before:
                obj["metadata"]["generation"] += 1
        obj["metadata"]["resourceVersion"] = str(self._next())
        if obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers"):
            del self.objects[(ref.kind, ref.namespace, ref.name)]

    # -- what happened --------------------------------------------------------------------------------

    def transitions(self) -> list[Transition]:
        return [t for d in self.decisions for t in d.transitions]

    def status_writes(self) -> list[dict[str, Any]]:
        return [
            dict(e.patch["status"])
            for d in self.decisions
            for e in d.effects
            if isinstance(e, effects.MergePatch) and e.target == ARS_REF and e.subresource == "status"
        ]

    def effects_of(self, kind: type[effects.Effect]) -> list[Any]:
        return [e for d in self.decisions for e in d.effects if isinstance(e, kind)]

    @property
    def phase(self) -> str:
        return str((self.ars.get("status") or {}).get("phase", ""))

    @property
    def generations(self) -> tuple[int, int]:
        """The ARS's ``(generation, observedGeneration)``."""
        return self.ars["metadata"]["generation"], int(
            (self.ars.get("status") or {}).get("observedGeneration", 0)
        )

    @property
    def revisions(self) -> tuple[int, int]:
        """The ERS's ``(actionableRevision, appliedActionableRevision)``."""
        return ars.revisions_of(self.ers)


def running_world(**spec: Any) -> World:
    """A world settled at Running: ARS at gen = obs = 2 (the name default), ERS at rev = app = 1, listener."""
    world = World()
    world.add(new_ars(**spec))
    world.settle()
    world.set_status(ERS_REF, appliedActionableRevision=1, phase="Running", currentReplicas=0)
    world.settle()
    assert world.phase == "Running", world.decisions[-1].as_json()
    world.decisions.clear()
    world.snapshots.clear()
    world.actions.calls.clear()
    return world


def _phase_after(snapshot: Snapshot, decision: Decision) -> str:
    writes = [
        e.patch["status"]
        for e in decision.effects
        if isinstance(e, effects.MergePatch) and e.target == ARS_REF and e.subresource == "status"
    ]
    return str(writes[-1]["phase"]) if writes else str(snapshot.status.get("phase", ""))


def assert_invariants(world: World) -> None:
    """The invariants of §4 that every recorded pass must keep, whatever the scenario.

    I1.1 observedGeneration ≤ generation in every state; I1.2 a Running write sets observedGeneration to
    the generation read; I1.3 a Pending write keeps it; I1.4 no integrity-hash on the ARS; I5.1 a pass
    that ends Outdated leaves no listener create and no runner set other than pinned; I6.3 no listener
    is created while the runner set is Outdated at its applied revision.
    """
    for snapshot, decision in zip(world.snapshots, world.decisions, strict=True):
        generation, observed = ars.generation(snapshot), ars.observed_generation(snapshot)
        assert observed <= generation, "I1.1"
        for effect in decision.effects:
            if isinstance(effect, effects.MergePatch) and effect.target == ARS_REF:
                status = effect.patch.get("status") or {}
                if status.get("phase") == "Running":
                    assert status["observedGeneration"] == generation, "I1.2"
                if status.get("phase") == "Pending":
                    assert status["observedGeneration"] == observed, "I1.3"
                annotations = (effect.patch.get("metadata") or {}).get("annotations") or {}
                assert naming.ANNOTATION_INTEGRITY_HASH not in annotations, "I1.4"
            if isinstance(effect, effects.CreateObject) and effect.target.kind == desired.KIND_LISTENER:
                assert not ars.runner_set_outdated_at_applied_revision(snapshot), "I6.3"
                assert _phase_after(snapshot, decision) != "Outdated", "I5.1"
    if world.get(desired.KIND_ARS, NS, NAME) is not None:
        generation, observed = world.generations
        assert observed <= generation, "I1.1"
        assert naming.ANNOTATION_INTEGRITY_HASH not in (world.ars["metadata"].get("annotations") or {}), (
            "I1.4"
        )
