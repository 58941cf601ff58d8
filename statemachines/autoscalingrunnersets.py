"""The AutoscalingRunnerSet machine: its phase table (spec §3.1, rows A1–A8) and ``decide`` (§2.1).

``decide(snapshot)`` walks the ordered reconcile of §2.1 as a list of steps; the first step that ends
the pass wins. Each step reads the snapshot, never the API, and adds effects; a phase is only ever
written through a row of ``TABLE`` fired on ``MACHINE``, and every row that acts is recorded in the
decision as a ``Transition`` carrying the generation the pass read and the observedGeneration the row
left (plus the runner set's revisions for A5 and A6).

The table itself (states, triggers, guards) is drawn from ``TABLE`` by ``statemachines.diagrams``:
``arcsm graph AutoscalingRunnerSet``, rendered in docs/lifecycles.md. What each row acts by:

* A1/A2 ``generation_advanced``: a status write, observedGeneration unchanged (C1);
* A3 ``listener_rebuilt``: a status write, then the listener deleted (C2); A3 ``runners_draining``: the
  same, the runner set pinned, a requeue after 1 s;
* A4 ``settled``: a status write, observedGeneration = generation, and the counters;
* A5 ``runners_rejected_spec``: a status write once the listener is gone; the runner set pinned;
* A6 ``recovery_republished``: the runner spec republished at max(rev, app) + 1 (C7);
* A7 ``parked``: the listener kept absent, the runner set re-pinned to 0/0;
* A8 ``deleted``: our finalizer removed at the end of the deletion (the phase stays as it was; the phase
  history serves this row as the object's end, and the diagram draws it as an edge to ``(deleted)``).

Decisions where the spec leaves room, each marked [R] in the spec or argued here:

* The teardown (A5) also fires from Pending (and the empty phase), not only from Running: a pass that
  went Pending for a label-only edit (A3) has ``generation == observedGeneration``, so it is not
  recovering, and without the teardown it went on to create a listener against a runner set that is
  Outdated at its applied revision (I6.3), only to tear it down once Running.
* ``recovering`` is read from persisted state (§4.7): the runner set is Outdated at its applied
  revision and ``generation > observedGeneration``. The drain deferral is skipped while recovering
  (§8 item 1), and A6 republishes even an unchanged runner spec.
* A status write carries ``phase`` and ``observedGeneration`` (and the four counters when the runner
  set's total differs), and is skipped when none of them would change (``updateStatus``). When one pass
  writes Pending and then Running (a spec edit with nothing to rebuild), the two status patches are
  merged into one (``drafts.Draft``); both transitions are recorded.
* Metadata drift compares the *merged* labels and annotations with the observed ones, and the runner
  metadata semantically, so an extra key never loops the pass (§8 item 3); the legacy
  ``integrity-hash`` annotation is dropped from the runner set when metadata is merged.
* The listener is compared semantically and built with the configured pull secrets (§8 item 4), and
  its labels and annotations as the runner set's are: merged, so a key someone else added to the listener
  never restarts it. A listener that is already terminating is waited for (Pending) rather than
  reported Running. The observed listener may sit under another name (found by its spec reference, §8
  item 6): a name that differs from the computed one is drift, so the old listener is deleted and the new
  one created.
* Status first, then the listener delete (§4.2 [R]); "record Outdated", then pin (§4.13 item 8).
* The drain deferral (step 9e.1) also pins the runner set at replicas 0 / patchID 0, as upstream did
  before its PR #4516 (§8 item 2): with the listener gone nothing else scales the set down, so with
  ``minRunners > 0`` idle runners would keep running + pending above zero and the new runner spec would
  never be published. Pinned, the runner set releases its idle runners and only runners busy with a
  job are waited for; the listener recreated after the publish scales the set back up.
* No effect relies on an earlier effect of the same decision having succeeded. Where upstream goes on
  after a write in the same reconcile and stops at the first error, a later pass reads the write back
  instead: the dependents lose their cleanup protection in one pass, and the ARS's own finalizer goes
  in a later one, once none is observed protected (5 s requeue); the scale set id annotation is dropped
  in the pass after DeleteRunnerScaleSet answered.
* The parked pin and the teardown pin are skipped when the runner set is already at 0/0.
* Bad input never reaches the Actions service or the cluster: a step 5.1 checks the spec (config URL
  and the names it holds, no vault, config Secret named, ``maxRunners >= minRunners``) before the scale
  set step, and an Actions answer that blames the config Secret, the credentials, the runner group or a
  config URL nothing answers at stops the pass where it was asked. Either leaves
  the phase as step 4 wrote it (Pending for a new scale set or a new generation).
* One scale set per Actions scale set (``claims``): a spec naming the config URL, runner group and scale
  set name another scale set holds is refused (step 5.2, ``ConfigurationValid`` False with
  ``ScaleSetNameTaken`` naming the holder), and the deletion never deletes an Actions scale set another
  scale set that is not being deleted still holds (it drops its id annotation instead, with a Normal
  ``ScaleSetKept`` Event). Upstream lets two such scale sets share one Actions scale set.
* A scale set deleted in GitHub is registered again (step 6.1, ``scalesets.verify``): when the listener
  reports that its pod failed, GetRunnerScaleSetById is asked once per failure; a 404 drops the id with a
  Warning ``ScaleSetGone`` Event, and step 6 registers the scale set again (the new id reaches the runner
  spec and the listener as any spec change does). Upstream's listener crash-loops on it for ever.
* Conditions (``arsconditions``): ``Ready`` and ``ConfigurationValid`` are computed once, at the end of
  every pass but the deleting ones, and written in the pass's status patch (or one of their own) only
  when they change. Bad input is a False ``ConfigurationValid``, one Warning Event per distinct
  problem, and a retry after ``clamp(now - lastTransitionTime, 5 s, 5 min)``. Runner pods the API server
  refuses (the runner set's ``Ready`` says so) make a Running scale set's ``Ready`` False with reason
  ``RunnerPodsRefused`` and one Warning Event; the spec fix that follows is a new generation.
* A derived object the API server refuses as Invalid (``refusals``): the runner set or the listener
  this machine creates or updates, a runner as the runner set's ``Ready`` reports it
  (``RunnerRejected``), or one of the listener's objects as the listener's ``Ready`` reports it refused
  or impossible to build (``autoscalinglisteners.NOT_BUILT_REASONS``: its ServiceAccount, Role,
  RoleBinding, config or proxy Secret, pod), makes ``Ready`` False with that reason whatever the phase,
  with one Warning Event; the machine's own write is asked again after the backoff of
  ``refusals`` (at once after a spec edit), the others by the machine that writes them.

The snapshot this machine reads: ``obj`` is the ARS; ``related["ers"]`` the EphemeralRunnerSet of the
same name; ``related["listener"]`` its AutoscalingListener; ``related[<cleanup annotation>]`` the
dependent object each ``actions.github.com/cleanup-*`` annotation names (see ``DEPENDENTS``);
``results`` the Actions answers, one call per pass (see ``scalesets``). Everything else comes from
``settings``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from statemachines import (
    arsconditions,
    autoscalinglisteners,
    claims,
    conditions,
    declaring,
    desired,
    ephemeralrunnersets,
    kinds,
    listenerobjects,
    naming,
    predicates,
    readycondition,
    refusals,
    scalesets,
    tables,
)
from statemachines.arsconditions import Problem
from statemachines.decisions import Decision, Transition
from statemachines.drafts import Draft
from statemachines.effects import (
    CreateObject,
    DeleteObject,
    Effect,
    EmitEvent,
    MergePatch,
    ObjectRef,
    RequeueAfter,
)
from statemachines.jsonvalues import JsonObject, as_mapping, parse_int, section
from statemachines.objects import ars_status
from statemachines.phaseevents import with_phase_events
from statemachines.phases import ArsPhase
from statemachines.snapshots import Snapshot

ERS = "ers"
LISTENER = "listener"
CLEANUP_PROTECTION = "actions.github.com/cleanup-protection"
# How long to wait for the listener or the runner set to go, and to let runners drain (§2.1).
WAIT_FOR_DELETION = 5.0
WAIT_FOR_DRAIN = 1.0

# The dependents whose cleanup-protection finalizer goes when the ARS is deleted, in upstream's order:
# the annotation that names each one (in the ARS namespace) and its kind. ``related`` is keyed by the
# annotation.
DEPENDENTS: tuple[tuple[str, str], ...] = (
    ("actions.github.com/cleanup-kubernetes-mode-role-binding-name", "RoleBinding"),
    ("actions.github.com/cleanup-kubernetes-mode-role-name", "Role"),
    ("actions.github.com/cleanup-kubernetes-mode-service-account-name", "ServiceAccount"),
    ("actions.github.com/cleanup-no-permission-service-account-name", "ServiceAccount"),
    ("actions.github.com/cleanup-github-secret-name", "Secret"),
    ("actions.github.com/cleanup-manager-role-binding", "RoleBinding"),
    ("actions.github.com/cleanup-manager-role-name", "Role"),
)


class Trigger(enum.StrEnum):
    GENERATION_ADVANCED = "generation_advanced"
    LISTENER_REBUILT = "listener_rebuilt"
    RUNNERS_DRAINING = "runners_draining"
    SETTLED = "settled"
    RUNNERS_REJECTED_SPEC = "runners_rejected_spec"
    RECOVERY_REPUBLISHED = "recovery_republished"
    PARKED = "parked"
    DELETED = "deleted"


# -- reading the snapshot --------------------------------------------------------------------------------


def _terminating(obj: JsonObject | None) -> bool:
    return bool(section(obj, "metadata").get("deletionTimestamp"))


def _ref(kind: str, obj: JsonObject) -> ObjectRef:
    meta = section(obj, "metadata")
    return ObjectRef(kind, str(meta.get("namespace", "")), str(meta.get("name", "")))


def generation(s: Snapshot) -> int:
    return parse_int(s.meta.get("generation"))


def observed_generation(s: Snapshot) -> int:
    return parse_int(ars_status(s.status).get("observedGeneration"))


def revisions_of(ers: JsonObject | None) -> tuple[int, int]:
    """The runner set's ``spec.actionableRevision`` and ``status.appliedActionableRevision``."""
    spec, status = section(ers, "spec"), section(ers, "status")
    return parse_int(spec.get("actionableRevision")), parse_int(status.get("appliedActionableRevision"))


# -- guards: small named predicates over the snapshot ------------------------------------------------------


def generation_ahead(s: Snapshot) -> bool:
    """A spec generation is waiting to be applied (C1)."""
    return generation(s) > observed_generation(s)


def generation_applied(s: Snapshot) -> bool:
    return not generation_ahead(s)


def runner_set_outdated_at_applied_revision(s: Snapshot) -> bool:
    """``ephemeralRunnerSetOutdatedForAppliedRevision``: Outdated about the spec in force (C4); nil-safe."""
    ers = s.get(ERS)
    if ers is None or section(ers, "status").get("phase") != "Outdated":
        return False
    revision, applied = revisions_of(ers)
    return applied >= revision


def recovering(s: Snapshot) -> bool:
    """A spec update arrived for a set its runners rejected: republish under a new revision (§4.7)."""
    return runner_set_outdated_at_applied_revision(s) and generation_ahead(s)


def not_recovering(s: Snapshot) -> bool:
    return not recovering(s)


def runners_active(s: Snapshot) -> bool:
    status = section(s.get(ERS), "status")
    return (
        parse_int(status.get("runningEphemeralRunners")) + parse_int(status.get("pendingEphemeralRunners"))
        > 0
    )


def has_runner_set(s: Snapshot) -> bool:
    return s.get(ERS) is not None


def has_listener(s: Snapshot) -> bool:
    return s.get(LISTENER) is not None


def deletion_requested(s: Snapshot) -> bool:
    return _terminating(s.obj)


# -- the table ---------------------------------------------------------------------------------------------

P = ArsPhase
T = Trigger
Row = tables.Row

# ``""`` (a status that lost its phase while observedGeneration caught up) is a source of A3 and A4 so the
# machine is total: every pass that reaches those steps can write a phase.
TABLE: tuple[tuple[str, tables.Row], ...] = (
    ("A1", Row(T.GENERATION_ADVANCED, (P.NONE, P.PENDING, P.RUNNING), P.PENDING,
               "a new spec generation is waiting to be applied", (generation_ahead,))),
    ("A2", Row(T.GENERATION_ADVANCED, (P.OUTDATED,), P.PENDING,
               "a spec update arrived for the parked scale set: it may run again", (generation_ahead,))),
    ("A3", Row(T.LISTENER_REBUILT, (P.NONE, P.PENDING, P.RUNNING), P.PENDING,
               "the listener is deleted to be rebuilt", (has_listener,))),
    ("A3", Row(T.RUNNERS_DRAINING, (P.NONE, P.PENDING, P.RUNNING), P.PENDING,
               "the listener is deleted until the runners drain and the new runner spec is published",
               (runners_active, not_recovering))),
    ("A4", Row(T.SETTLED, (P.NONE, P.PENDING, P.RUNNING), P.RUNNING,
               "scale set, runner set and listener are in sync", (has_runner_set, has_listener))),
    ("A5", Row(T.RUNNERS_REJECTED_SPEC, (P.NONE, P.PENDING, P.RUNNING), P.OUTDATED,
               "the runners rejected the runner spec in force: listener removed, runner set parked at zero",
               (runner_set_outdated_at_applied_revision, not_recovering))),
    ("A6", Row(T.RECOVERY_REPUBLISHED, (P.PENDING,), P.PENDING,
               "the runner spec is republished under a new revision after the spec update", (recovering,))),
    ("A7", Row(T.PARKED, (P.OUTDATED,), P.OUTDATED,
               "parked until a spec update: listener kept absent, runner set pinned at zero",
               (generation_applied,))),
    *(
        ("A8", Row(T.DELETED, (phase,), phase,
                   "deleted: listener, runner set, scale set and finalizers removed", (deletion_requested,)))
        for phase in P
    ),
)  # fmt: skip

MACHINE = tables.PhaseMachine("AutoscalingRunnerSet", ArsPhase, [row for _, row in TABLE])


# -- one pass ------------------------------------------------------------------------------------------------


def _phase(value: object) -> ArsPhase:
    try:
        return ArsPhase(str(value or ""))
    except ValueError:
        return ArsPhase.NONE


@dataclass
class _Pass:
    """One pass: its draft decision, and the phase and counters as its status writes left them."""

    s: Snapshot
    phase: ArsPhase
    observed: int
    current_runners: int
    draft: Draft
    # Bad input the pass found, and whether it got past every configuration check (``arsconditions``).
    problem: Problem | None = None
    valid: bool = False
    # A derived object the API server refuses (``refusals``): the ``Ready`` reason and message.
    refused: tuple[str, str] | None = None
    # The pass removed our finalizer: the object goes, nothing more is written to it.
    finished: bool = False

    @classmethod
    def start(cls, s: Snapshot) -> _Pass:
        status = ars_status(s.status)
        phase, runners = _phase(status.get("phase")), parse_int(status.get("currentRunners"))
        return cls(s, phase, observed_generation(s), runners, Draft(s.subject))

    def emit(self, *effects: Effect) -> None:
        """Add effects; a second status patch of the pass folds into the first (``drafts``)."""
        self.draft.add(*effects)

    def fire(self, trigger: Trigger) -> Transition | None:
        return MACHINE.fire(trigger, self.phase.value, self.s)

    def record(self, taken: Transition, **extra: int) -> None:
        revisions = {"generation": generation(self.s), "observedGeneration": self.observed, **extra}
        self.draft.record(dataclasses.replace(taken, revisions=revisions))

    def requeue(self, seconds: float) -> None:
        self.emit(RequeueAfter(self.s.subject, seconds))

    def take(self, step: scalesets.Step) -> str:
        self.emit(*step.effects)
        if step.problem is not None:
            self.problem = step.problem
        return step.note

    def refusal(self, effect: CreateObject | MergePatch, reason: str) -> str | None:
        """When the API server refused ``effect`` last time: the problem is noted, and the note that ends
        the pass (requeued) while the retry waits out its backoff; None to send it (again)."""
        refusal = refusals.of(self.s, effect)
        if refusal is None:
            return None
        self.refused = (reason, refusal.message)
        wait = refusals.retry_in(self.s, refusal, reason)
        if wait <= 0:
            return None
        self.requeue(wait)
        return f"the {refusal.target.kind} was refused: asking again in {wait:g}s"

    def warn(self, reason: str, message: str) -> str:
        self.emit(EmitEvent(self.s.subject, str(self.s.meta.get("uid", "")), "Warning", reason, message))
        return f"{reason}: {message}"


def update_status(
    p: _Pass, taken: Transition, observed: int, ers: JsonObject | None = None, **revisions: int
) -> bool:
    """``updateStatus``: write the phase of ``taken`` and ``observed`` unless nothing would change.

    The counters are copied from ``ers`` when its total differs from the ARS's ``currentRunners``.
    ``revisions`` go into the recorded transition beside the generations.
    """
    ers_status = section(ers, "status")
    count_diff = ers is not None and parse_int(ers_status.get("currentReplicas")) != p.current_runners
    phase = ArsPhase(taken.to)
    if phase == p.phase and observed == p.observed and not count_diff:
        return False
    status: dict[str, Any] = {"phase": phase.value, "observedGeneration": observed}
    if count_diff:
        status["currentRunners"] = parse_int(ers_status.get("currentReplicas"))
        for key in ("pendingEphemeralRunners", "runningEphemeralRunners", "failedEphemeralRunners"):
            status[key] = parse_int(ers_status.get(key))
        p.current_runners = status["currentRunners"]
    p.emit(MergePatch(p.s.subject, {"status": status}, subresource="status"))
    p.phase, p.observed = phase, observed
    p.record(taken, **revisions)
    return True


def _cleanup(p: _Pass, kind: str, obj: JsonObject | None) -> bool:
    """``cleanupListener`` / ``cleanupEphemeralRunnerSet``: True once the object is gone."""
    if obj is None:
        return True
    if not _terminating(obj):
        p.emit(DeleteObject(_ref(kind, obj), uid=str(section(obj, "metadata").get("uid", ""))))
    return False


def _pin(p: _Pass, ers: JsonObject) -> bool:
    """Pin the runner set at replicas 0 / patchID 0 (C7); False when it already is."""
    spec = section(ers, "spec")
    if parse_int(spec.get("replicas")) == 0 and parse_int(spec.get("patchID")) == 0:
        return False
    p.emit(MergePatch(_ref(desired.KIND_ERS, ers), {"spec": {"replicas": 0, "patchID": 0}}))
    return True


def _finalizers(obj: JsonObject | None) -> list[str]:
    found = section(obj, "metadata").get("finalizers")
    return [str(f) for f in found] if isinstance(found, list) else []


def _without_finalizer(kind: str, obj: JsonObject, finalizer: str) -> MergePatch:
    meta = section(obj, "metadata")
    remaining = [f for f in _finalizers(obj) if f != finalizer]
    return MergePatch(
        _ref(kind, obj),
        {"metadata": {"finalizers": remaining}},
        resource_version=str(meta.get("resourceVersion", "")),
    )


# -- the steps of §2.1, in order; each returns the note that ends the pass, or None to go on --------------

Step = Callable[[_Pass], str | None]


def _deletion(p: _Pass) -> str | None:
    """Step 1 (A8): listener → runner set → Actions scale set → dependents' finalizers → our finalizer."""
    if not deletion_requested(p.s):
        return None
    if naming.FINALIZER_AUTOSCALING_RUNNER_SET not in _finalizers(p.s.obj):
        return "deleting: no finalizer of ours left"
    for kind, key in ((desired.KIND_LISTENER, LISTENER), (desired.KIND_ERS, ERS)):
        if not _cleanup(p, kind, p.s.get(key)):
            p.requeue(WAIT_FOR_DELETION)
            return f"deleting: waiting for the {kind} to go"
    if (keeper := claims.kept_for(p.s)) is not None:
        return _keep_scale_set(p, keeper)
    step = scalesets.delete(p.s)
    if step is not None:
        if step.problem is not None:  # no conditions while deleting: warn at every attempt
            p.warn(step.problem.reason, step.problem.message)
        return p.take(step)
    if protected := _protected_dependents(p.s):
        # Our finalizer goes only once every dependent is observed unprotected: a failed patch is retried
        # rather than left behind by an ARS that is already gone.
        p.emit(*(_without_finalizer(kind, dependent, CLEANUP_PROTECTION) for kind, dependent in protected))
        p.requeue(WAIT_FOR_DELETION)
        return f"deleting: removing cleanup protection from {len(protected)} dependent(s)"
    p.emit(_without_finalizer(desired.KIND_ARS, p.s.obj or {}, naming.FINALIZER_AUTOSCALING_RUNNER_SET))
    p.finished = True
    taken = p.fire(T.DELETED)
    if taken is not None:
        p.record(taken)
    return "deleted: finalizer removed"


def _keep_scale_set(p: _Pass, keeper: JsonObject) -> str:
    """Another scale set still uses our Actions scale set (``claims``): drop our id, never delete it."""
    scale_set_id = desired.scale_set_id(p.s.obj or {})
    patch = {"metadata": {"annotations": {naming.ANNOTATION_RUNNER_SCALE_SET_ID: None}}}
    p.emit(MergePatch(p.s.subject, patch))
    message = (
        f"The Actions scale set {scale_set_id} is not deleted: the AutoscalingRunnerSet "
        f"{claims.where(keeper)} still uses it"
    )
    p.emit(EmitEvent(p.s.subject, str(p.s.meta.get("uid", "")), "Normal", "ScaleSetKept", message))
    return f"deleting: scale set {scale_set_id} kept for {claims.where(keeper)}"


def _protected_dependents(s: Snapshot) -> list[tuple[str, JsonObject]]:
    """The dependents named by the cleanup annotations that still carry cleanup-protection, in order."""
    found: list[tuple[str, JsonObject]] = []
    for annotation, kind in DEPENDENTS:
        name = as_mapping(s.meta.get("annotations")).get(annotation)
        dependent = s.get(annotation) if name else None
        if dependent is None or section(dependent, "metadata").get("name") != name:
            continue
        if CLEANUP_PROTECTION in _finalizers(dependent):
            found.append((kind, dependent))
    return found


def _finalizer(p: _Pass) -> str | None:
    """Step 3: add our finalizer, then wait for the update to come back."""
    finalizers = _finalizers(p.s.obj)
    if naming.FINALIZER_AUTOSCALING_RUNNER_SET in finalizers:
        return None
    patch = {"metadata": {"finalizers": [*finalizers, naming.FINALIZER_AUTOSCALING_RUNNER_SET]}}
    rv = str(p.s.meta.get("resourceVersion", ""))
    p.emit(MergePatch(p.s.subject, patch, resource_version=rv))
    return "finalizer added"


def _generation(p: _Pass) -> str | None:
    """Step 4 (A1, A2): Pending while a generation waits, observedGeneration unchanged; the pass goes on."""
    taken = p.fire(T.GENERATION_ADVANCED)
    if taken is not None:
        update_status(p, taken, p.observed)
    return None


def _parked(p: _Pass) -> str | None:
    """Step 5 (A7): keep the listener absent and the runner set pinned until a spec update."""
    if p.phase is not ArsPhase.OUTDATED:
        return None
    taken = p.fire(T.PARKED)
    acted, note = _park(p)
    if acted and taken is not None:
        p.record(taken)
    return note


def _park(p: _Pass) -> tuple[bool, str]:
    listener = p.s.get(LISTENER)
    if not _cleanup(p, desired.KIND_LISTENER, listener):
        acted = not _terminating(listener)
        p.requeue(WAIT_FOR_DELETION)
        return acted, "parked: waiting for the listener to go"
    ers = p.s.get(ERS)
    if ers is None:
        return False, "parked: no runner set; one is created only after a spec update"
    if _terminating(ers):
        return False, "parked: the runner set is being deleted"
    return _pin(p, ers), "parked"


def _configuration(p: _Pass) -> str | None:
    """Step 5.1: the spec's own bad input (``arsconditions.spec_problem``) stops the pass before anything
    is created in the Actions service or the cluster; the phase stays as step 4 left it."""
    problem = arsconditions.spec_problem(p.s)
    if problem is None:
        return None
    p.problem = problem
    return f"configuration invalid: {problem.reason}"


def _claim(p: _Pass) -> str | None:
    """Step 5.2 (beyond upstream): another scale set holds the Actions scale set this spec names
    (``claims``): refused before anything is asked of the Actions service. One that shared the scale set
    already gives it up: its listener goes, its runner set is pinned at zero, then its id annotation."""
    problem = claims.refusal(p.s)
    if problem is None:
        return None
    p.problem = problem
    held = desired.scale_set_id(p.s.obj or {})
    if held is None or held <= 0:
        return f"configuration invalid: {problem.reason}"
    listener = p.s.get(LISTENER)
    if not _cleanup(p, desired.KIND_LISTENER, listener):
        p.requeue(WAIT_FOR_DELETION)
        return "refused: waiting for the listener to go"
    ers = p.s.get(ERS)
    if ers is not None and not _terminating(ers):
        _pin(p, ers)
    patch = {"metadata": {"annotations": {naming.ANNOTATION_RUNNER_SCALE_SET_ID: None}}}
    p.emit(MergePatch(p.s.subject, patch))
    return f"refused: scale set {held} left to its owner"


def _scale_set(p: _Pass) -> str | None:
    """Step 6: no usable scale set id yet: find or create the scale set."""
    scale_set_id = desired.scale_set_id(p.s.obj or {})
    if scale_set_id is not None and scale_set_id > 0:
        return None
    return p.take(scalesets.ensure(p.s))


# The listener's ``Ready`` reasons that say its pod ended: the scale set it serves may be gone.
LISTENER_FAILED = ("PodFailed", "ListenerBackOff")


def _scale_set_alive(p: _Pass) -> str | None:
    """Step 6.1 (beyond upstream): while the listener reports that its pod failed, ask once per failure
    whether the scale set still exists (``scalesets.verify``); gone, its id is dropped, saying so, and the
    next pass registers it again."""
    ready = conditions.find(section(p.s.get(LISTENER), "status"), conditions.READY) or {}
    if ready.get("status") != conditions.FALSE or ready.get("reason") not in LISTENER_FAILED:
        return None
    step = scalesets.verify(p.s, str(ready.get("lastTransitionTime") or ""))
    return None if step is None else p.take(step)


def _runner_group(p: _Pass) -> str | None:
    """Step 7."""
    step = scalesets.sync_group(p.s)
    return None if step is None else p.take(step)


def _scale_set_name(p: _Pass) -> str | None:
    """Step 8."""
    step = scalesets.sync_name(p.s)
    return None if step is None else p.take(step)


def _runner_set(p: _Pass) -> str | None:
    """Step 9: the EphemeralRunnerSet exists, is not torn down, and carries the runner spec and metadata."""
    p.valid = True  # the spec checks passed and the Actions service accepted the scale set's credentials
    ers = p.s.get(ERS)
    if ers is None:
        try:
            body = desired.ephemeral_runner_set(p.s.obj or {}, p.s.settings)
        except desired.BuildError as exc:
            return p.warn("InvalidRunnerSet", str(exc))
        create = CreateObject(ObjectRef(desired.KIND_ERS, p.s.subject.namespace, p.s.subject.name), body)
        if (waiting := p.refusal(create, arsconditions.RUNNER_SET_REJECTED)) is not None:
            return waiting
        p.emit(create)
        return "runner set created"
    p.refused = _reported_refusal(ers, "runner set", (ephemeralrunnersets.RUNNER_REJECTED,))
    teardown = p.fire(T.RUNNERS_REJECTED_SPEC)
    if teardown is not None:
        return _teardown(p, teardown, ers)
    try:
        want = desired.ephemeral_runner_set(p.s.obj or {}, p.s.settings)
    except desired.BuildError as exc:
        return p.warn("InvalidRunnerSet", str(exc))
    recovery = p.fire(T.RECOVERY_REPUBLISHED)
    if desired.runner_spec_drifted(ers, want) or recovery is not None:
        return _publish(p, ers, want, recovery)
    return _metadata(p, ers, want)


def _teardown(p: _Pass, taken: Transition, ers: JsonObject) -> str:
    """Step 9c (A5): listener gone first, then record Outdated and pin the runner set; never delete it."""
    if not _cleanup(p, desired.KIND_LISTENER, p.s.get(LISTENER)):
        p.requeue(WAIT_FOR_DELETION)
        return "parking: waiting for the listener to go"
    revision, applied = revisions_of(ers)
    update_status(p, taken, p.observed, actionableRevision=revision, appliedActionableRevision=applied)
    _pin(p, ers)
    return "parked: the runners rejected the runner spec"


def _publish(p: _Pass, ers: JsonObject, want: JsonObject, recovery: Transition | None) -> str:
    """Step 9e (A3 drain, A6): publish the runner spec under ``max(rev, app) + 1``."""
    drain = p.fire(T.RUNNERS_DRAINING)
    if drain is not None:
        update_status(p, drain, p.observed)
        _cleanup(p, desired.KIND_LISTENER, p.s.get(LISTENER))
        _pin(p, ers)  # idle runners are released; only those busy with a job are waited for
        p.requeue(WAIT_FOR_DRAIN)
        return "draining: runners are still busy with the old runner spec"
    revision, applied = revisions_of(ers)
    published = max(revision, applied) + 1  # C3's nextActionableRevision, also on recovery (C7)
    spec_patch: dict[str, Any] = {
        "actionableRevision": published,
        **desired.runner_spec_patch(ers, want),
        **desired.runner_metadata_patch(ers, want),
    }
    patch: dict[str, Any] = {"spec": spec_patch}
    if metadata := desired.metadata_patch(ers, want, p.s.settings.exclude_label_prefixes):
        patch["metadata"] = metadata
    update = MergePatch(_ref(desired.KIND_ERS, ers), patch)
    if (waiting := p.refusal(update, arsconditions.RUNNER_SET_REJECTED)) is not None:
        return waiting
    p.emit(update)
    if recovery is None:
        return f"runner spec published at revision {published}"
    p.record(recovery, actionableRevision=published, appliedActionableRevision=applied)
    return f"runner spec republished at revision {published} to recover"


def _metadata(p: _Pass, ers: JsonObject, want: JsonObject) -> str | None:
    """Step 9f: labels, annotations and runner metadata reach the runner set without a revision bump."""
    patch: dict[str, Any] = {}
    if metadata := desired.metadata_patch(ers, want, p.s.settings.exclude_label_prefixes):
        patch["metadata"] = metadata
    if runner_metadata := desired.runner_metadata_patch(ers, want):
        patch["spec"] = runner_metadata
    if not patch:
        return None
    update = MergePatch(_ref(desired.KIND_ERS, ers), patch)
    if (waiting := p.refusal(update, arsconditions.RUNNER_SET_REJECTED)) is not None:
        return waiting
    p.emit(update)
    return "runner set metadata updated"


def _listener(p: _Pass) -> str | None:
    """Step 10 (A3): the listener exists and matches; otherwise Pending, and it is deleted to be rebuilt."""
    ers = p.s.get(ERS)
    try:
        want = desired.autoscaling_listener(
            p.s.obj or {}, str(section(ers, "metadata").get("name", "")), p.s.settings
        )
    except desired.BuildError as exc:
        return p.warn("InvalidListener", str(exc))
    listener = p.s.get(LISTENER)
    if listener is None:
        create = CreateObject(_ref(desired.KIND_LISTENER, want), want)
        if (waiting := p.refusal(create, arsconditions.LISTENER_REJECTED)) is not None:
            return waiting
        p.emit(create)
        return "listener created"
    terminating = _terminating(listener)
    if not terminating and not desired.listener_drifted(listener, want):
        p.refused = p.refused or _reported_refusal(
            listener, "listener", autoscalinglisteners.NOT_BUILT_REASONS
        )
        return None
    rebuild = p.fire(T.LISTENER_REBUILT)
    if rebuild is not None:
        update_status(p, rebuild, p.observed)
    if terminating:
        return "waiting for the old listener to go"
    _cleanup(p, desired.KIND_LISTENER, listener)
    return "listener deleted to be rebuilt"


def _reported_refusal(obj: JsonObject, what: str, reasons: tuple[str, ...]) -> tuple[str, str] | None:
    """The refusal the runner set's or the listener's own ``Ready`` reports (one of the objects it
    writes, with one of ``reasons``), as the scale set's."""
    ready = conditions.find(section(obj, "status"), conditions.READY) or {}
    reason = str(ready.get("reason") or "")
    if ready.get("status") != conditions.FALSE or reason not in reasons:
        return None
    meta = section(obj, "metadata")
    where = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    return reason, f"{what} {where}: {ready.get('message') or reason}"


def _settled(p: _Pass) -> str:
    """Step 11 (A4): everything is in sync: Running, observedGeneration = generation, counters mirrored."""
    taken = p.fire(T.SETTLED)
    if taken is None:
        return f"no row of the table settles from {p.phase.value!r}"
    update_status(p, taken, generation(p.s), p.s.get(ERS))
    return "settled"


STEPS: tuple[Step, ...] = (
    _deletion,
    # No step 2: upstream deletes a scale set whose app.kubernetes.io/version label names another
    # controller version. arcsm adopts scale sets as they are, whatever chart installed them.
    _finalizer,
    _generation,
    _parked,
    _configuration,
    _claim,
    _scale_set,
    _scale_set_alive,
    _runner_group,
    _scale_set_name,
    _runner_set,
    _listener,
    _settled,
)


@with_phase_events
def decide(snapshot: Snapshot) -> Decision:
    """One pass of the AutoscalingRunnerSet reconcile over ``snapshot`` (§2.1): transitions and effects."""
    if snapshot.obj is None:
        return Decision(snapshot.subject, note="gone")
    p = _Pass.start(snapshot)
    for step in STEPS:
        note = step(p)
        if note is not None:
            p.draft.note = note
            break
    _report(p)
    return p.draft.decision()


def _report(p: _Pass) -> None:
    """The end of every pass: its conditions (``arsconditions``) in the status patch of the pass, and for
    bad input a Warning Event when the problem is new and a retry after the backoff."""
    if p.finished or deletion_requested(p.s):
        return
    ready = arsconditions.ready(p.s, p.phase, p.draft.transitions, p.s.get(ERS), p.refused)
    wanted = [c for c in (ready, arsconditions.configuration_valid(p.problem, p.valid)) if c is not None]
    refusal = ready is not None and (p.refused is not None or ready.reason == arsconditions.PODS_REFUSED)
    if refusal and ready is not None and (event := readycondition.warning(p.s, ready)):
        p.emit(event)
    patch = conditions.status_patch(p.s.status, wanted, generation=generation(p.s), now=p.s.now)
    if patch:
        p.emit(MergePatch(p.s.subject, {"status": patch}, subresource="status"))
    if p.problem is not None:
        if not arsconditions.already_reported(p.s, p.problem):
            p.warn(p.problem.reason, p.problem.message)
        p.requeue(arsconditions.retry_after(p.s))


def _credentials_key(key: declaring.ObjectKey, scale_set: JsonObject) -> Iterable[declaring.NameRef]:
    secret = section(scale_set, "spec").get("githubConfigSecret")
    if isinstance(secret, str):
        yield key[1], secret


SCALE_SETS_BY_CREDENTIALS = declaring.ReverseLookup(
    "scale sets by their githubConfigSecret", kinds.ARS, _credentials_key
)

# What the AutoscalingRunnerSet reads and what wakes it: its runner set (the one of its name, else the one
# it owns), the listener whose spec names it (the one at its computed name first), the dependents its
# cleanup annotations name, the first other scale set claiming its Actions scale set (``claims``); a
# listener naming it, its credentials Secret and a scale set of the same claim wake it too.
DECLARATION = declaring.Declaration(
    kind=kinds.ARS,
    decide=decide,
    owns=(declaring.Owns(kinds.ERS, predicates.ars_from_runner_set),),
    related=(
        declaring.Related(ERS, declaring.SameNameElseOwned(kinds.ERS)),
        declaring.Related(
            LISTENER, declaring.Referrers(listenerobjects.LISTENERS_BY_SCALE_SET, desired.listener_ref)
        ),
        *(declaring.Related(a, declaring.NamedByAnnotation(kind, a)) for a, kind in DEPENDENTS),
        declaring.Related(claims.PEER, declaring.Peer(claims.CLAIMS, claims.rank)),
    ),
    watches=(
        declaring.Mapped(kinds.AL, listenerobjects.scale_set_named),
        declaring.Referred("Secret", SCALE_SETS_BY_CREDENTIALS),
        declaring.Peers(claims.CLAIMS),
    ),
)
