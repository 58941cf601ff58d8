"""A small fleet as a controller journals it, for the fleet overview's tests (over HTTP and in a browser).

``fleet()`` is the records of six scale sets in two namespaces, each in a state an operator tells apart
at a glance (``SCALE_SETS``): settled with runners alive and deleted, Outdated with a Warning Event,
badly configured, with a failed runner, not decided yet, and a settled one elsewhere. Each has its runner
set and its listener (in ``CONTROLLER_NAMESPACE``, with its pod); times are UTC, a second apart from
``START``. The builders (``scale_set``, ``runner``, ``warning``, ``decided``) make more of the same.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from store.records import Record, RecordType

GROUP = "actions.github.com/v1alpha1"
CONTROLLER_NAMESPACE = "arc-systems"
ARS, ERS, ER, AL = "AutoscalingRunnerSet", "EphemeralRunnerSet", "EphemeralRunner", "AutoscalingListener"
START = datetime(2026, 12, 1, 23, 25, 38, tzinfo=UTC)

# (namespace, name): what the fleet shows of it.
SCALE_SETS = {
    ("ci", "calm"): "Running, Ready, two runners running, three deleted",
    ("ci", "stuck"): "Outdated: its runners rejected the spec, with a Warning Event",
    ("ci", "badcreds"): "Running but ConfigurationValid False, with a Warning Event",
    ("ci", "failing"): "Running, Ready, one runner Failed",
    ("ci", "starting"): "no phase yet, no Ready condition",
    ("web", "solo"): "Running, Ready, one runner pending",
}


def uid(kind: str, namespace: str, name: str) -> str:
    return f"uid-{kind.lower()}-{namespace}-{name}"


def when(second: int) -> str:
    return (START + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _object(
    kind: str,
    namespace: str,
    name: str,
    *,
    owner: tuple[str, str] | None,
    spec: dict[str, Any],
    status: dict[str, Any],
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid(kind, namespace, name),
        "resourceVersion": "1",
        "creationTimestamp": when(0),
    }
    if owner is not None:
        ref = {
            "apiVersion": GROUP,
            "kind": owner[0],
            "name": owner[1],
            "uid": uid(owner[0], namespace, owner[1]),
        }
        meta["ownerReferences"] = [{**ref, "controller": True}]
    api_version = "v1" if kind == "Pod" else GROUP
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec, "status": status}


def observed(obj: dict[str, Any], event: str = "MODIFIED") -> Record:
    meta = obj["metadata"]
    return Record(
        type=RecordType.OBSERVED,
        kind=obj["kind"],
        namespace=meta["namespace"],
        name=meta["name"],
        uid=meta["uid"],
        resource_version=meta["resourceVersion"],
        body={"event": event, "object": obj},
    )


def condition(kind: str, status: str, reason: str, message: str, second: int = 0) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": when(second),
    }


def scale_set(
    namespace: str, name: str, phase: str, conditions: list[dict[str, Any]], *, replicas: int = 1
) -> list[Record]:
    """The scale set, its runner set and its listener with the listener's pod."""
    spec = {"minRunners": 1, "maxRunners": 5, "githubConfigUrl": "https://github.com/org"}
    status = {"phase": phase, "conditions": conditions} if phase else {}
    ers = f"{name}-runners"
    listener = f"{name}-listener"
    al_spec = {"autoscalingRunnerSetNamespace": namespace, "autoscalingRunnerSetName": name}
    al_status = {"conditions": [condition("Ready", "True", "PodRunning", "The listener runs")]}
    return [
        observed(_object(ARS, namespace, name, owner=None, spec=spec, status=status), "ADDED"),
        observed(
            _object(
                ERS,
                namespace,
                ers,
                owner=(ARS, name),
                spec={"replicas": replicas},
                status={"phase": "Running"},
            ),
            "ADDED",
        ),
        observed(
            _object(AL, CONTROLLER_NAMESPACE, listener, owner=None, spec=al_spec, status=al_status), "ADDED"
        ),
        observed(
            _object("Pod", CONTROLLER_NAMESPACE, listener, owner=None, spec={}, status={"phase": "Running"})
        ),
    ]


def runner(namespace: str, scale_set: str, name: str, phase: str, *, deleted: bool = False) -> list[Record]:
    """A runner of the scale set's runner set in ``phase``; with ``deleted``, observed DELETED after."""
    ready = "True" if phase == "Running" else "False"
    status = {
        "phase": phase,
        "runnerId": sum(map(ord, name)),
        "conditions": [condition("Ready", ready, "PodPhase", f"The runner pod is {phase.lower()}")],
    }
    obj = _object(ER, namespace, name, owner=(ERS, f"{scale_set}-runners"), spec={}, status=status)
    out = [observed(obj, "ADDED")]
    if deleted:
        out.append(observed(obj, "DELETED"))
    return out


def decided(kind: str, namespace: str, name: str, source: str | None, target: str, trigger: str) -> Record:
    subject = {"kind": kind, "namespace": namespace, "name": name}
    move = {
        "from": source,
        "to": target,
        "trigger": trigger,
        "reason": f"{trigger} happened",
        "revisions": {},
    }
    return Record(
        type=RecordType.DECISION,
        kind=kind,
        namespace=namespace,
        name=name,
        uid=uid(kind, namespace, name),
        body={"subject": subject, "transitions": [{**move, "subject": subject}], "effects": [], "note": ""},
    )


def warning(kind: str, namespace: str, name: str, reason: str, message: str) -> Record:
    """An EmitEvent effect of type Warning about the object."""
    return Record(
        type=RecordType.EFFECT,
        kind=kind,
        namespace=namespace,
        name=name,
        uid=uid(kind, namespace, name),
        body={
            "type": "EmitEvent",
            "target": {"kind": kind, "namespace": namespace, "name": name},
            "uid": uid(kind, namespace, name),
            "event_type": "Warning",
            "reason": reason,
            "message": message,
            "trigger": "",
        },
    )


def _ready(second: int = 5) -> list[dict[str, Any]]:
    return [
        condition("Ready", "True", "Settled", "scale set, runner set and listener are in sync", second),
        condition("ConfigurationValid", "True", "Valid", "usable", 1),
    ]


def fleet() -> list[Record]:
    """The records of ``SCALE_SETS``."""
    out: list[Record] = []
    out += scale_set("ci", "calm", "Running", _ready(5), replicas=2)
    out += [decided(ARS, "ci", "calm", None, "Pending", "generation_advanced")]
    out += [decided(ARS, "ci", "calm", "Pending", "Running", "settled")]
    for i in range(3):
        out += runner("ci", "calm", f"calm-old-{i}", "Succeeded", deleted=True)
    out += runner("ci", "calm", "calm-a", "Running") + runner("ci", "calm", "calm-b", "Running")

    stuck = "the runners rejected the runner spec in force: listener removed, runner set parked at zero"
    out += scale_set(
        "ci",
        "stuck",
        "Outdated",
        [
            condition("Ready", "False", "RunnersRejectedSpec", stuck, 30),
            condition("ConfigurationValid", "True", "Valid", "usable", 1),
        ],
        replicas=0,
    )
    out += [decided(ARS, "ci", "stuck", None, "Running", "settled")]
    out += [decided(ARS, "ci", "stuck", "Running", "Outdated", "runners_rejected_spec")]
    out += [
        warning(ARS, "ci", "stuck", "RunnerPodsRefused", "runner pods exited as outdated: update the image")
    ]

    rejected = "GitHub rejected the credentials in the Secret ci/github-config"
    out += scale_set(
        "ci",
        "badcreds",
        "Running",
        [
            condition("Ready", "True", "Settled", "in sync", 2),
            condition("ConfigurationValid", "False", "CredentialsRejected", rejected, 20),
        ],
    )
    out += [warning(ARS, "ci", "badcreds", "CredentialsRejected", rejected)]

    out += scale_set("ci", "failing", "Running", _ready(3))
    out += runner("ci", "failing", "failing-x", "Failed")
    out += scale_set("ci", "starting", "", [])
    out += scale_set("web", "solo", "Running", _ready(4))
    out += runner("web", "solo", "solo-p", "Pending")
    return out
