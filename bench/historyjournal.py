"""A journal with a controller's mix of records, built straight into SQLite for the API benchmarks.

``build(path, count)`` writes ``count`` records (valid checksums, seqs from 1, times a few ms apart)
into a fresh journal file without running a controller. The mix follows what a recorded run holds:
scale sets in one namespace (``SETS`` of them, ``arc-0`` …), each with its runner set and listener,
and runners that come and go. One runner's life is about twenty records:

* the runner set's decision to create it (no transition), its effect and effect result;
* the runner observed (ADDED), its decision into Pending with the pod's effect and result;
* the pod observed Pending, Running, Succeeded and DELETED, the runner observed in each phase;
* the runner's decisions Pending → Running and Running → Succeeded (the last with a delete effect);
* the runner set and the scale set observed with their new counts.

Every ``SPEC_EVERY`` runners of a scale set, its spec is edited: a decision Running → Pending, the
listener rebuilt (a listener decision with a transition and its effects), then Pending → Running, with
the scale set observed in each phase. About 15% of the records are decisions with transitions; about
three transitions are recorded per twenty records.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from store import records, rows
from store.records import Record, RecordType

NAMESPACE = "arc-runners"
CONTROLLER_NAMESPACE = "arc-systems"
SETS = 10
SPEC_EVERY = 40  # runners of one scale set between two spec edits
GROUP = "actions.github.com/v1alpha1"
START = datetime(2026, 1, 1, tzinfo=UTC)


def _meta(
    name: str, namespace: str, uid: str, version: int, owner: tuple[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid,
        "resourceVersion": str(version),
        "generation": 1,
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": {
            "app.kubernetes.io/part-of": "gha-runner-scale-set",
            "actions.github.com/scale-set-name": name,
        },
    }
    if owner is not None:
        # The owner's uid as the owner's own metadata gives it (``uid-NAME``, a Pod's owner too).
        ref = {"apiVersion": GROUP, "kind": owner[0], "name": owner[1], "uid": f"uid-{owner[1]}"}
        meta["ownerReferences"] = [ref]
    return meta


def _ready(phase: str, reason: str) -> dict[str, Any]:
    return {
        "phase": phase,
        "conditions": [
            {"type": "Ready", "status": "True" if phase == "Running" else "False", "reason": reason}
        ],
    }


def _observed(event: str, kind: str, meta: dict[str, Any], status: dict[str, Any]) -> Record:
    obj: dict[str, Any] = {"apiVersion": "v1" if kind == "Pod" else GROUP, "kind": kind, "metadata": meta}
    obj["spec"] = {
        "template": {
            "spec": {
                "containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:2.329.0"}],
                "restartPolicy": "Never",
            }
        }
    }
    obj["status"] = status
    return records.observed(event, kind, obj)


def _decision(
    kind: str, namespace: str, name: str, moves: list[tuple[str | None, str, str]], effects: int
) -> Record:
    subject = {"kind": kind, "namespace": namespace, "name": name}
    return Record(
        type=RecordType.DECISION,
        kind=kind,
        namespace=namespace,
        name=name,
        uid=f"uid-{name}",
        body={
            "subject": subject,
            "transitions": [
                {
                    "from": source,
                    "to": target,
                    "trigger": trigger,
                    "reason": f"{trigger.replace('_', ' ')} observed",
                    "revisions": {"generation": 1, "observedGeneration": 1},
                    "subject": subject,
                }
                for source, target, trigger in moves
            ],
            "effects": [f"Effect:{i}:{kind}/{namespace}/{name}" for i in range(effects)],
            "note": "",
        },
    )


def _acted(kind: str, namespace: str, name: str, what: str) -> list[Record]:
    """An effect and its result."""
    target = {"kind": kind, "namespace": namespace, "name": name}
    effect = Record(
        type=RecordType.EFFECT,
        kind=kind,
        namespace=namespace,
        name=name,
        uid=f"uid-{name}",
        body={"type": what, "target": target, "patch": {"metadata": {"labels": {"bench": "yes"}}}},
    )
    result = Record(
        type=RecordType.EFFECT_RESULT,
        kind=kind,
        namespace=namespace,
        name=name,
        uid=f"uid-{name}",
        body={"ok": True, "key": f"{what}:{kind}/{namespace}/{name}"},
    )
    return [effect, result]


def runner_life(scale_set: str, runner: int, version: int) -> list[Record]:
    ers, er = f"{scale_set}-ers", f"{scale_set}-runner-{runner}"
    er_meta = _meta(er, NAMESPACE, f"uid-{er}", version, ("EphemeralRunnerSet", ers))
    pod_meta = _meta(er, NAMESPACE, f"pod-{er}", version, ("EphemeralRunner", er))
    out = [_decision("EphemeralRunnerSet", NAMESPACE, ers, [], 1)]
    out += _acted("EphemeralRunner", NAMESPACE, er, "Create")
    out.append(_observed("ADDED", "EphemeralRunner", er_meta, {}))
    out.append(_decision("EphemeralRunner", NAMESPACE, er, [(None, "Pending", "created")], 1))
    out += _acted("Pod", NAMESPACE, er, "Create")
    out.append(_observed("ADDED", "Pod", pod_meta, {"phase": "Pending"}))
    out.append(_observed("MODIFIED", "EphemeralRunner", er_meta, _ready("Pending", "Created")))
    out.append(_observed("MODIFIED", "Pod", pod_meta, {"phase": "Running"}))
    out.append(_decision("EphemeralRunner", NAMESPACE, er, [("Pending", "Running", "pod_running")], 1))
    out.append(_observed("MODIFIED", "EphemeralRunner", er_meta, _ready("Running", "PodRunning")))
    out.append(_observed("MODIFIED", "Pod", pod_meta, {"phase": "Succeeded"}))
    out.append(_decision("EphemeralRunner", NAMESPACE, er, [("Running", "Succeeded", "runner_finished")], 1))
    out += _acted("EphemeralRunner", NAMESPACE, er, "Delete")
    out.append(_observed("MODIFIED", "EphemeralRunner", er_meta, _ready("Succeeded", "RunnerFinished")))
    out.append(_observed("DELETED", "Pod", pod_meta, {"phase": "Succeeded"}))
    out.append(_observed("DELETED", "EphemeralRunner", er_meta, _ready("Succeeded", "RunnerFinished")))
    counts = {"currentReplicas": runner % 5, "runningEphemeralRunners": runner % 3}
    ers_meta = _meta(ers, NAMESPACE, f"uid-{ers}", version, ("AutoscalingRunnerSet", scale_set))
    out.append(_observed("MODIFIED", "EphemeralRunnerSet", ers_meta, counts))
    ars_meta = _meta(scale_set, NAMESPACE, f"uid-{scale_set}", version)
    out.append(
        _observed("MODIFIED", "AutoscalingRunnerSet", ars_meta, {**_ready("Running", "InSync"), **counts})
    )
    return out


def spec_edit(scale_set: str, version: int) -> list[Record]:
    ars_meta = _meta(scale_set, NAMESPACE, f"uid-{scale_set}", version)
    listener = f"{scale_set}-listener"
    out = [_observed("MODIFIED", "AutoscalingRunnerSet", ars_meta, _ready("Running", "InSync"))]
    out.append(
        _decision("AutoscalingRunnerSet", NAMESPACE, scale_set, [("Running", "Pending", "spec_changed")], 1)
    )
    out += _acted("AutoscalingListener", CONTROLLER_NAMESPACE, listener, "Delete")
    out.append(_observed("MODIFIED", "AutoscalingRunnerSet", ars_meta, _ready("Pending", "SpecChanged")))
    out.append(
        _decision(
            "AutoscalingListener",
            CONTROLLER_NAMESPACE,
            listener,
            [("Running", "Pending", "listener_rebuilt")],
            1,
        )
    )
    out += _acted("AutoscalingListener", CONTROLLER_NAMESPACE, listener, "Create")
    out.append(
        _decision("AutoscalingRunnerSet", NAMESPACE, scale_set, [("Pending", "Running", "in_sync")], 1)
    )
    out.append(_observed("MODIFIED", "AutoscalingRunnerSet", ars_meta, _ready("Running", "InSync")))
    return out


def history(count: int) -> Iterator[Record]:
    """``count`` records of ``SETS`` scale sets taking turns."""
    made = 0
    step = 0
    while True:
        scale_set = f"arc-{step % SETS}"
        runner = step // SETS
        batch = runner_life(scale_set, runner, step)
        if runner % SPEC_EVERY == SPEC_EVERY - 1:
            batch += spec_edit(scale_set, step)
        for record in batch:
            if made == count:
                return
            yield record
            made += 1
        step += 1


def at(seq: int) -> str:
    return (START + timedelta(milliseconds=3 * seq)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def build(path: Path, count: int) -> None:
    """Write ``count`` records into the journal file at ``path`` (created by ``Journal.open`` before)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    chunk: list[rows.Row] = []
    for seq, record in enumerate(history(count), start=1):
        chunk.append(rows.encode(record, seq, at(seq))[0])
        if len(chunk) == 10_000:
            rows.insert_now(db, chunk)
            chunk = []
    if chunk:
        rows.insert_now(db, chunk)
    db.execute("COMMIT")
    db.close()
