"""The JSON shapes the API answers with, declared so ``/openapi.json`` describes every response.

These shapes are a contract (the timeline page reads them): add fields, never rename or remove one.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Problem(BaseModel):
    """An error: one line saying what is wrong and what to do."""

    detail: str


class PhaseItem(BaseModel):
    """One phase transition a machine recorded, with the revisions its guard read, or a phase change this
    replica observed while another one decided."""

    seq: int = Field(description="The seq of the decision record that took the transition.")
    at: str = Field(description="When the decision was journaled (RFC 3339, UTC).")
    kind: str
    namespace: str
    name: str
    uid: str
    from_: str | None = Field(serialization_alias="from", description="The phase before; null for the first.")
    to: str | None = Field(
        description="The phase after; null for the end of the object's history: its deletion (trigger "
        "deleted)."
    )
    trigger: str
    reason: str
    revisions: dict[str, int] = Field(
        description="generation and observedGeneration (AutoscalingRunnerSet), actionableRevision and "
        "appliedActionableRevision (EphemeralRunnerSet); empty for the other kinds."
    )
    source: str = Field(
        default="decided",
        description="decided: this replica's machine took the transition (seq is its decision record); "
        "observed: a phase change this replica saw in an observed object while another replica decided "
        "(seq is the observed record; trigger and reason come from the Ready condition, the trigger in the "
        "same snake_case as decided ones).",
    )


class Replica(BaseModel):
    """The replica that answers, the part it plays, and what its history lacks: each replica serves its
    own journal, and a Service in front of several may send a request to any of them."""

    identity: str = Field(description="This replica's identity (its Lease candidate name).")
    role: str = Field(description="leader: it decides; standby: another replica decides.")
    leader: str | None = Field(
        default=None, description="The holder of the Lease as this replica last saw it (null: none known)."
    )
    lacks: str | None = Field(
        default=None,
        description="What this replica's history lacks, and where to find it (null on the leader).",
    )


class PhasePage(BaseModel):
    items: list[PhaseItem]
    next: int | None = Field(description="Pass as ?after= for the next page; null when this one is the last.")
    answered_by: Replica | None = Field(
        default=None,
        serialization_alias="answeredBy",
        description="The replica that answers (absent when no controller runs beside the API).",
    )


class JournalRecord(BaseModel):
    """A journal record as exported (``arcsm journal export``); Secret material is never included."""

    seq: int
    at: str
    type: str
    kind: str
    namespace: str
    name: str
    uid: str
    resource_version: str = Field(serialization_alias="resourceVersion")
    body: dict[str, Any]


class JournalPage(BaseModel):
    items: list[JournalRecord]
    next: int | None = Field(description="Pass as ?after= for the next page; null when this one is the last.")


class Revisions(BaseModel):
    generation: int | None = None
    observed_generation: int | None = Field(default=None, serialization_alias="observedGeneration")
    actionable_revision: int | None = Field(default=None, serialization_alias="actionableRevision")
    applied_actionable_revision: int | None = Field(
        default=None, serialization_alias="appliedActionableRevision"
    )


class RunnerSetState(BaseModel):
    name: str
    phase: str | None
    replicas: int | None


class Condition(BaseModel):
    """A status condition as the object carries it."""

    type: str
    status: str = Field(description="True, False or Unknown.")
    reason: str = ""
    message: str = ""
    last_transition_time: str | None = Field(
        default=None, serialization_alias="lastTransitionTime", description="RFC 3339, as written."
    )


class WarningEvent(BaseModel):
    """The last Warning Event arcsm emitted about an object (``kubectl describe`` shows it too)."""

    seq: int = Field(description="The seq of the effect record that emitted it.")
    at: str = Field(description="When that record was journaled (RFC 3339, UTC).")
    kind: str = Field(description="The object it is about: the scale set, its runner set or its listener.")
    namespace: str
    name: str
    reason: str
    message: str


class ListenerState(BaseModel):
    name: str
    namespace: str
    state: str | None = Field(description="The listener machine's last state (Pending, Running, BackOff).")
    pod_phase: str | None = Field(
        serialization_alias="podPhase", description="The listener pod's phase, if it exists."
    )
    ready: Condition | None = Field(default=None, description="The listener's Ready condition.")


class ScaleSetView(BaseModel):
    """An AutoscalingRunnerSet as the journal's projection shows it now."""

    kind: str
    namespace: str
    name: str
    uid: str
    phase: str | None
    conditions: list[dict[str, Any]]
    revisions: Revisions
    runner_set: RunnerSetState | None = Field(serialization_alias="runnerSet")
    runners: dict[str, int] = Field(description="The scale set's EphemeralRunners by phase.")
    listener: ListenerState | None
    transitions: list[PhaseItem] = Field(description="The last phase transitions, oldest first.")
    seq: int = Field(description="The journal seq this view was read at.")
    min_runners: int | None = Field(default=None, serialization_alias="minRunners")
    max_runners: int | None = Field(default=None, serialization_alias="maxRunners")
    last_warning: WarningEvent | None = Field(
        default=None,
        serialization_alias="lastWarning",
        description="The newest Warning Event about the scale set, its runner set or its listener (null: "
        "none, or the phase history is still being loaded: see historyLoaded).",
    )
    history_loaded: bool = Field(
        default=True,
        serialization_alias="historyLoaded",
        description="Whether the phase history index had read the whole journal (until then the "
        "transitions are read from the scale set's records, and lastWarning is not known).",
    )


class ListenerSummary(BaseModel):
    name: str
    namespace: str
    ready: Condition | None = Field(description="The listener's Ready condition (its reason: PodRunning…).")
    pod_phase: str | None = Field(serialization_alias="podPhase", description="The listener pod's phase.")


class ScaleSetSummary(BaseModel):
    """One scale set as the fleet overview lists it: what an operator checks first."""

    namespace: str
    name: str
    uid: str
    phase: str | None
    ready: Condition | None
    configuration_valid: Condition | None = Field(serialization_alias="configurationValid")
    min_runners: int | None = Field(serialization_alias="minRunners")
    max_runners: int | None = Field(serialization_alias="maxRunners")
    desired: int | None = Field(description="The runner set's replicas: the runners the scale set wants now.")
    runners: dict[str, int] = Field(description="Its EphemeralRunners by phase (no phase counts as Pending).")
    runner_set: str | None = Field(serialization_alias="runnerSet", description="Its runner set's name.")
    listener: ListenerSummary | None
    last_warning: WarningEvent | None = Field(
        serialization_alias="lastWarning",
        description="The newest Warning Event about the scale set, its runner set or its listener (null "
        "while the phase history is being loaded: see the page's history).",
    )
    changed_at: str | None = Field(
        serialization_alias="changedAt",
        description="The newest lastTransitionTime of its conditions: when its phase or readiness last "
        "changed, as its status says.",
    )


class HistoryState(BaseModel):
    """How far the phase history index has read the journal."""

    live: bool = Field(
        description="Whether it has read the whole journal once (then it follows new records)."
    )
    folded: int = Field(description="The seq of the last record it has read.")
    last_seq: int = Field(serialization_alias="lastSeq", description="The journal's last seq.")


class FleetPage(BaseModel):
    """The scale sets that match the filters, a page of them, and the fleet counted."""

    total: int = Field(description="How many scale sets match every filter.")
    offset: int = Field(description="The position of the first item among them.")
    items: list[ScaleSetSummary]
    phases: dict[str, int] = Field(
        description='The scale sets matching the namespace and name filters, by phase (none: "").'
    )
    ready: dict[str, int] = Field(
        description="The same scale sets by the status of their Ready condition (True, False, Unknown)."
    )
    runners: dict[str, int] = Field(description="Their EphemeralRunners by phase.")
    recent: list[PhaseItem] = Field(
        description="The newest phase changes of those scale sets, newest first (empty while the phase "
        "history is being loaded)."
    )
    history: HistoryState


class RunnerRow(BaseModel):
    """One EphemeralRunner of a scale set, alive or deleted."""

    name: str
    namespace: str
    uid: str
    phase: str | None
    ready: Condition | None = Field(description="Its Ready condition: why it is in its phase.")
    runner_id: int | None = Field(serialization_alias="runnerId", description="Its runner id in GitHub.")
    created_at: str | None = Field(serialization_alias="createdAt")
    terminating: bool = Field(description="Its deletion has started (metadata.deletionTimestamp).")
    deleted_seq: int | None = Field(
        serialization_alias="deletedSeq", description="The seq of its DELETED record (null while alive)."
    )
    deleted_at: str | None = Field(serialization_alias="deletedAt", description="When it was deleted.")


class RunnerPage(BaseModel):
    """A page of a scale set's runners: alive (failed first, then pending, running, the rest; by name) or
    deleted (newest first)."""

    total: int = Field(description="How many runners are in the list asked for.")
    offset: int
    items: list[RunnerRow]
    live: int = Field(description="The runners of its runner set that exist now.")
    deleted: int = Field(description="The runners of its runner set the journal saw deleted.")
    last_seq: int = Field(
        default=0,
        serialization_alias="lastSeq",
        description="The journal's last seq when answered: follow the journal stream from it for what "
        "changes next.",
    )


class Health(BaseModel):
    status: str = Field(description="ok while alive; failing when only a restart recovers the process.")
    journal_error: str | None = Field(
        default=None,
        serialization_alias="journalError",
        description="Why the journal's writer stopped for good (absent while alive).",
    )


class ReadinessBody(BaseModel):
    ready: bool
    journal_writable: bool = Field(serialization_alias="journalWritable")
    synced: bool
    role: str
    last_seq: int = Field(serialization_alias="lastSeq")
    journal_error: str | None = Field(
        default=None,
        serialization_alias="journalError",
        description="Why the journal takes no appends (absent while it does): closed, or a full disk.",
    )


class ChildAt(BaseModel):
    """An object the inspected one owned at a position, as last observed by then."""

    kind: str
    namespace: str
    name: str
    uid: str
    phase: str | None = Field(description="Its status.phase then (null for an object without one).")
    seq: int = Field(description="The seq of the observed record it is shown from.")
    object: dict[str, Any] = Field(description="Its body as journaled (Secret data is never journaled).")


class DecisionAt(BaseModel):
    """The decision in force at a position: the last one recorded for the object at or before it."""

    seq: int = Field(description="The seq of the decision record.")
    at: str = Field(description="When it was journaled (RFC 3339, UTC).")
    read: int | None = Field(description="The seq of the journal prefix it decided from.")
    trigger: str | None = Field(
        description="The trigger of its last phase change (of its last transition when each re-affirms a "
        "phase); null when it took none."
    )
    reason: str = Field(description="Its note, or that transition's reason when it has no note.")
    transitions: list[PhaseItem]
    effects: list[str] = Field(description="The effects it recorded, as their journal keys.")


class ObjectAt(BaseModel):
    """An object as arcsm had observed it at a journal position, read from the journal alone."""

    seq: int = Field(description="The position asked for (or the one ?time= fell on).")
    kind: str
    namespace: str
    name: str
    uid: str
    phase: str | None = Field(description="Its status.phase then (null for an AutoscalingListener).")
    conditions: list[dict[str, Any]]
    observed_seq: int = Field(
        serialization_alias="observedSeq", description="The seq of its last observed record at the position."
    )
    observed_at: str = Field(serialization_alias="observedAt", description="When that record was journaled.")
    object: dict[str, Any] = Field(description="Its body as journaled (Secret data is never journaled).")
    children: list[ChildAt] = Field(
        description="The objects it owned then (ownerReferences), by kind and name."
    )
    decision: DecisionAt | None = Field(description="The decision in force then; null before its first one.")
    snapshot: int = Field(
        description="The seq of the snapshot the children were read from; 0 when read from the first record."
    )
