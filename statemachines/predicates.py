"""Update predicates of the owned watches (spec §4.10, seed C6), each a projection of what a reconciler reads.

A predicate only ever saves work: it drops an update of an owned object when every field the owner's
machine reads is equal before and after, and delivers it otherwise. It applies to update events only;
creates, deletes and generic events always pass, and the primary watches keep every update (so a
machine's own status writes still wake it). Those rules belong to the caller; here are the three
projections and the three ``(old, new) -> deliver`` functions:

* ARS ← EphemeralRunnerSet: object metadata, the whole spec (semantic equality, §4.12), ``status.phase``
  and ``status.appliedActionableRevision``, [R] the four counters the ARS mirrors (§4.10 [F]), and the
  status, reason and message of its ``Ready`` condition (the ARS reports refused runners and refused
  runner pods from it; no other condition).
* ERS ← EphemeralRunner: object metadata, the whole spec, ``status.phase`` and ``status.runnerId``, and
  whether the runner holds another runner's job (``runners.has_foreign_job``). ``ready``, ``failures``,
  ``reason``, ``message`` and the job fields are dropped; ``jobId`` only ever disables a deletion, so
  missing it changes nothing a decision would do (a job of another runner id, which re-enables one, is
  in the projection); the set reads ``reason`` and ``message`` of Failed runners only, written by the
  same update that makes them Failed.
* ER ← Pod: uid, deletionTimestamp, phase, reason, message, ``pods.pod_ready``, and of the container
  statuses what the EphemeralRunner machine reads, through the functions it reads them with: whether the
  ``runner`` container reports a status and its exit code once terminated (``pods.exit_code``), and
  whether an init container failed (``pods.init_container_failed``). [R] Narrower than §4.10's "container
  statuses (semantic)": a restart storm's churn (``restartCount``, ``lastState``, running ↔ waiting
  ``CrashLoopBackOff``, back-off messages, container ids, ``ready``/``started`` of a container, other
  containers) changes none of it and is dropped; a runner container terminating, or running again after
  it had terminated, changes its exit code and is delivered.

"Object metadata" is generation, deletionTimestamp, finalizers (in order), labels, annotations and
ownerReferences; resourceVersion, managedFields and the like are ignored. An object that is not a
mapping, or whose ``kind`` names another kind, is always delivered (a missing ``kind`` is taken as the
expected one: list items often omit it). Strict fields compare as canonical JSON, so ``1`` differs from
``true`` and key order does not matter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from statemachines import conditions, pods, runners, semantics
from statemachines.jsonvalues import JsonObject, as_mapping


@dataclass(frozen=True)
class Projection:
    """The fields of one object a reconciler reads: compared strictly, or semantically (§4.12)."""

    strict: Mapping[str, object] = field(default_factory=dict)
    semantic: Mapping[str, object] = field(default_factory=dict)

    def differs(self, other: Projection) -> bool:
        if _canonical(self.strict) != _canonical(other.strict):
            return True
        # Compared as one mapping, so a field that is empty on one side and absent on the other is equal.
        return not semantics.semantic_equal(dict(self.semantic), dict(other.semantic))


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def object_metadata(obj: JsonObject) -> dict[str, object]:
    meta = as_mapping(obj.get("metadata"))
    return {
        "generation": meta.get("generation"),
        "deletionTimestamp": meta.get("deletionTimestamp"),
        "finalizers": list(meta.get("finalizers") or []),
        "labels": dict(meta.get("labels") or {}),
        "annotations": dict(meta.get("annotations") or {}),
        "ownerReferences": list(meta.get("ownerReferences") or []),
    }


def runner_set_projection(ers: JsonObject) -> Projection:
    """What the AutoscalingRunnerSet machine reads of its EphemeralRunnerSet."""
    status = as_mapping(ers.get("status"))
    read = (
        "phase",
        "appliedActionableRevision",
        "currentReplicas",
        "pendingEphemeralRunners",
        "runningEphemeralRunners",
        "failedEphemeralRunners",
    )
    ready = conditions.find(status, conditions.READY) or {}
    return Projection(
        strict={
            "metadata": object_metadata(ers),
            "status": {k: status.get(k) for k in read},
            "ready": [ready.get("status"), ready.get("reason"), ready.get("message")],
        },
        semantic={"spec": ers.get("spec")},
    )


def runner_projection(runner: JsonObject) -> Projection:
    """What the EphemeralRunnerSet machine reads of its EphemeralRunners."""
    status = as_mapping(runner.get("status"))
    return Projection(
        strict={
            "metadata": object_metadata(runner),
            "spec": runner.get("spec"),
            "status": {
                "phase": status.get("phase"),
                "runnerId": status.get("runnerId"),
                "foreignJob": runners.has_foreign_job(runner),
            },
        }
    )


def pod_projection(pod: JsonObject) -> Projection:
    """What the EphemeralRunner machine reads of its runner pod."""
    meta = as_mapping(pod.get("metadata"))
    status = as_mapping(pod.get("status"))
    runner = pods.runner_container_status(pod)
    return Projection(
        strict={
            "uid": meta.get("uid"),
            "deletionTimestamp": meta.get("deletionTimestamp"),
            "phase": status.get("phase"),
            "reason": status.get("reason"),
            "message": status.get("message"),
            "ready": pods.pod_ready(pod),
            "runner": None if runner is None else {"exitCode": pods.exit_code(runner)},
            "initFailed": pods.init_container_failed(pod),
        },
    )


def _deliver(kind: str, project: Callable[[JsonObject], Projection], old: object, new: object) -> bool:
    if not (isinstance(old, Mapping) and isinstance(new, Mapping)):
        return True
    if any(obj.get("kind") not in (None, "", kind) for obj in (old, new)):
        return True
    return project(old).differs(project(new))


def ars_from_runner_set(old: object, new: object) -> bool:
    """Deliver an EphemeralRunnerSet update to its AutoscalingRunnerSet?"""
    return _deliver("EphemeralRunnerSet", runner_set_projection, old, new)


def ers_from_runner(old: object, new: object) -> bool:
    """Deliver an EphemeralRunner update to its EphemeralRunnerSet?"""
    return _deliver("EphemeralRunner", runner_projection, old, new)


def runner_from_pod(old: object, new: object) -> bool:
    """Deliver a Pod update to its EphemeralRunner?"""
    return _deliver("Pod", pod_projection, old, new)
