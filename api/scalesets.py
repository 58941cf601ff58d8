"""A scale set as arcsm sees it now: its AutoscalingRunnerSet from the projection, with what hangs off it.

* phase, conditions and ``generation``/``observedGeneration`` from the AutoscalingRunnerSet;
* its EphemeralRunnerSet (owned by it): phase, replicas, ``actionableRevision`` and
  ``appliedActionableRevision``;
* its EphemeralRunners (owned by the runner set) counted by phase, a runner without a phase counting as
  Pending as the runner set's scaling does;
* its AutoscalingListener (in the controller namespace, naming the scale set in its spec): the
  listener machine's last recorded state, its Ready condition and the listener pod's phase;
* its last phase transitions (from the app's phase index, ``phaseindex``), without re-affirmations;
* ``minRunners`` and ``maxRunners`` from its spec, and the newest Warning Event arcsm emitted about it,
  its runner set or its listener (``PhaseIndex.warning``; none until the index has read the whole
  journal, ``historyLoaded``).

A scale set whose history ended (``phasehistory``: arcsm released its finalizer, or it was observed
DELETED) is not shown: the view is None, as for a name never seen.

``seq`` is the seq of the last observed record about an object the view shows (the scale set, its runner
set and runners, its listener and the listener's pod) or of the last transition it lists, so the view's
ETag changes when what it shows does, not on every append. Without a phase index that follows the
journal (an app not started), it is the journal's last seq.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api import phases
from api.models import Condition, ListenerState, Revisions, RunnerSetState, ScaleSetView, WarningEvent
from api.phaseindex import PhaseIndex
from api.ports import JournalView, Objects
from statemachines.jsonvalues import as_mappings, int_or_none, section, str_or_none
from statemachines.phases import ErPhase

RECENT = 20  # transitions shown with the scale set
READY, CONFIGURATION_VALID = "Ready", "ConfigurationValid"
RUNNER_PHASES = tuple(p.value for p in ErPhase if p is not ErPhase.NONE)


def runner_sets(objects: Objects, ars: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    uid = str(section(ars, "metadata").get("uid") or "")
    return [
        found
        for kind, namespace, name in objects.children(uid)
        if kind == phases.Kind.EPHEMERAL_RUNNER_SET
        and (found := objects.get(kind, namespace, name)) is not None
    ]


def runners_by_phase(objects: Objects, ars: Mapping[str, Any]) -> dict[str, int]:
    """The scale set's EphemeralRunners (through its runner sets) counted by phase, every phase listed."""
    counts = dict.fromkeys(RUNNER_PHASES, 0)
    for ers in runner_sets(objects, ars):
        uid = str(section(ers, "metadata").get("uid") or "")
        for kind, namespace, name in objects.children(uid):
            runner = objects.get(kind, namespace, name) if kind == phases.Kind.EPHEMERAL_RUNNER else None
            if runner is not None:
                phase = ErPhase.of(section(runner, "status").get("phase")) or ErPhase.PENDING
                counts[phase.value] += 1
    return counts


def condition(obj: Mapping[str, Any], kind: str) -> Condition | None:
    """The status condition of type ``kind``, or None."""
    for found in as_mappings(section(obj, "status").get("conditions")):
        if found.get("type") == kind:
            return Condition(
                type=kind,
                status=str(found.get("status") or "Unknown"),
                reason=str(found.get("reason") or ""),
                message=str(found.get("message") or ""),
                last_transition_time=str_or_none(found.get("lastTransitionTime")),
            )
    return None


def latest_warning(index: PhaseIndex | None, keys: list[tuple[str, str, str]]) -> WarningEvent | None:
    """The newest Warning Event about any of the objects ``keys`` the index holds; None before it is live."""
    if index is None or not index.live:
        return None
    found = [w for w in map(index.warning, keys) if w is not None]
    if not found:
        return None
    newest = max(found, key=lambda w: w.seq)
    return WarningEvent(**newest._asdict())


def warned_keys(
    namespace: str, name: str, ers: Mapping[str, Any] | None, al: Mapping[str, Any] | None
) -> list[tuple[str, str, str]]:
    """The objects whose Warning Events a scale set shows: itself, its runner set, its listener."""
    keys = [(phases.Kind.AUTOSCALING_RUNNER_SET.value, namespace, name)]
    for kind, obj in ((phases.Kind.EPHEMERAL_RUNNER_SET, ers), (phases.Kind.AUTOSCALING_LISTENER, al)):
        if obj is not None:
            meta = section(obj, "metadata")
            keys.append((kind.value, str(meta.get("namespace") or ""), str(meta.get("name") or "")))
    return keys


def listener_of(objects: Objects, namespace: str, name: str) -> Mapping[str, Any] | None:
    for al in objects.items(phases.Kind.AUTOSCALING_LISTENER):
        spec = section(al, "spec")
        if (
            spec.get("autoscalingRunnerSetName") == name
            and spec.get("autoscalingRunnerSetNamespace") == namespace
        ):
            return al
    return None


async def view(
    journal: JournalView, namespace: str, name: str, *, index: PhaseIndex | None = None
) -> ScaleSetView | None:
    """The scale set ``namespace/name`` now, or None when the projection does not hold it."""
    ready = await phases.ready_index(index, journal, scoped=True)
    objects, seq = journal.projection, journal.last_seq
    ars = objects.get(phases.Kind.AUTOSCALING_RUNNER_SET, namespace, name)
    if ars is None:
        return None
    transitions = await phases.served_last(
        ready,
        journal,
        kind=phases.Kind.AUTOSCALING_RUNNER_SET,
        namespace=namespace,
        name=name,
        count=RECENT,
        reaffirmed=False,
    )
    if transitions and transitions[-1].to is None:
        return None  # its history ended (finalizer released): gone, though its DELETED is not observed yet
    meta, status, spec = section(ars, "metadata"), section(ars, "status"), section(ars, "spec")
    sets = runner_sets(objects, ars)
    ers = sets[0] if sets else None
    conditions = status.get("conditions")
    al = listener_of(objects, namespace, name)
    listener, listener_seq = await _listener(journal, ready, objects, al)
    if ready is not None:
        shown = [(phases.Kind.AUTOSCALING_RUNNER_SET.value, namespace, name), *_shown(objects, sets)]
        if listener is not None:
            shown += [(phases.Kind.AUTOSCALING_LISTENER.value, listener.namespace, listener.name)]
            shown += [("Pod", listener.namespace, listener.name)]
        seq = max([ready.observed_seq(shown), listener_seq, *(t.seq for t in transitions)])
    return ScaleSetView(
        kind=phases.Kind.AUTOSCALING_RUNNER_SET,
        namespace=namespace,
        name=name,
        uid=str(meta.get("uid") or ""),
        phase=str_or_none(status.get("phase")) or None,
        conditions=[dict(c) for c in conditions if isinstance(c, Mapping)]
        if isinstance(conditions, list)
        else [],
        revisions=Revisions(
            generation=int_or_none(meta.get("generation")),
            observed_generation=int_or_none(status.get("observedGeneration")),
            actionable_revision=None
            if ers is None
            else int_or_none(section(ers, "spec").get("actionableRevision")),
            applied_actionable_revision=None
            if ers is None
            else int_or_none(section(ers, "status").get("appliedActionableRevision")),
        ),
        runner_set=None if ers is None else _runner_set(ers),
        runners=runners_by_phase(objects, ars),
        listener=listener,
        transitions=transitions,
        seq=seq,
        min_runners=int_or_none(spec.get("minRunners")),
        max_runners=int_or_none(spec.get("maxRunners")),
        last_warning=latest_warning(index, warned_keys(namespace, name, ers, al)),
        history_loaded=index is not None and index.live,
    )


def _shown(objects: Objects, sets: list[Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """The keys of the runner sets and their runners, whose observed versions the view reads."""
    keys: list[tuple[str, str, str]] = []
    for ers in sets:
        meta = section(ers, "metadata")
        keys.append(
            (
                phases.Kind.EPHEMERAL_RUNNER_SET.value,
                str(meta.get("namespace") or ""),
                str(meta.get("name") or ""),
            )
        )
        keys.extend(
            child
            for child in objects.children(str(meta.get("uid") or ""))
            if child[0] == phases.Kind.EPHEMERAL_RUNNER
        )
    return keys


def _runner_set(ers: Mapping[str, Any]) -> RunnerSetState:
    return RunnerSetState(
        name=str(section(ers, "metadata").get("name") or ""),
        phase=str_or_none(section(ers, "status").get("phase")) or None,
        replicas=int_or_none(section(ers, "spec").get("replicas")),
    )


async def _listener(
    journal: JournalView, index: PhaseIndex | None, objects: Objects, al: Mapping[str, Any] | None
) -> tuple[ListenerState | None, int]:
    """The listener's state, and the seq of the transition that state comes from (0 for none)."""
    if al is None:
        return None, 0
    meta = section(al, "metadata")
    al_namespace, al_name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    recent = await phases.served_last(
        index,
        journal,
        kind=phases.Kind.AUTOSCALING_LISTENER,
        namespace=al_namespace,
        name=al_name,
        count=1,
    )
    pod = objects.get("Pod", al_namespace, al_name)
    state = ListenerState(
        name=al_name,
        namespace=al_namespace,
        state=recent[-1].to if recent else None,
        pod_phase=None if pod is None else str_or_none(section(pod, "status").get("phase")),
        ready=condition(al, READY),
    )
    return state, recent[-1].seq if recent else 0
