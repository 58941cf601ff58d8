"""The EphemeralRunner machine: one pass of upstream's reconcile as a pure decision (spec §2.3, §3.3).

``decide(snapshot)`` walks the steps of §2.3 in order; the first step that ends the pass ends it:

1. deletion: RemoveRunner first (the registration finalizer; JobStillRunning waits 30 s; a config Secret
   that is gone ends it with a Warning ``RunnerLeftRegistered`` Event, as nothing could remove the
   registration any more), then the pod, the JIT Secret and any container-hook pods and Secrets, then
   both finalizers in one patch;
2. a done runner (Succeeded, Failed, Outdated) only loses its pod and Secret;
3. both finalizers are added in one patch when either is missing, and the pass goes on (seed C5);
4. the JIT Secret: ``CreateJitConfigSecret``; on RunnerExists, GetRunnerByName → same scale set:
   RemoveRunner and retry; none: retry; another scale set: delete the runner. An ``Interrupted`` (or
   timed-out) one may have registered a runner whose Secret was never written: the same lookup comes
   first, so a JIT config is never generated again blindly. ``AlreadyExists``: the executor met a Secret
   of this name another owner holds that the watch has not shown yet; handled as ``other_secret`` is
   (``SecretNameTaken``, asked again after a while);
5. ``status.runnerId``/``runnerName`` from the Secret's annotations (see below);
6. more than 5 pod failures: delete the runner (the set makes a fresh one);
7. backoff 0/5/10/20/40/80 s after the last failure, measured with ``snapshot.now``;
8. no pod: create it (§1.6); the create's result decides Failed (Invalid, Forbidden), a 30 s quota retry
   (the runner is deleted once older than 10 min) or a retry;
9. the pod: runner exit 7 → Outdated (+RemoveRunner); exit 0 → delete the runner; another failure →
   delete the runner (it had a job) or the pod (a failure is recorded); otherwise mirror phase and ready.

The phase lifecycle is the table ``ROWS`` over ``ErPhase`` (drawn by ``arcsm graph EphemeralRunner``, in
docs/lifecycles.md); deleting the runner is not a phase. Every
write of ``status.phase`` goes through a row: ``_Pass.enter`` fires the trigger and writes the phase the row
that fired leads to, so the journaled transition and the written phase always agree, and no row firing
means no phase written. A pod phase is mirrored as the row's destination: ``Pending``, ``Running`` or
``Unknown`` (any other string a pod might carry is mirrored as ``Pending``).

How facts reach a decision. ``snapshot.related`` holds the observed ``"pod"`` and ``"secret"`` of the runner:
of its name *and* owned by its uid (None when absent). An object of its name that another owner holds is in
``"other_pod"``/``"other_secret"``: a predecessor's of the same name, still terminating or not yet collected,
or one nobody owns. The runner never takes it for its own (its JIT config, its runner id, its phase); it waits
for it to go, with ``Ready``/``Registered`` False saying why. The Secret is journaled without data, so the
runner id and name are read from the annotations the executor writes on it
(``naming.ANNOTATION_JIT_RUNNER_ID``/``_NAME``), falling back to the ``CreateJitConfigSecret`` result. A
Secret that names no valid id is deleted and made again, as upstream does with a corrupt one. Outcomes of
creates and Actions calls arrive as effect results (``outcomes``): the result of ``CreateObject(pod)`` is read
only while the pod is missing, and every retry is a window measured from the result's time, so a replay
decides the same.

Conditions, computed once at the end of a pass and merged into its status patch: ``Ready`` (True while
Running; a pod that cannot be created puts its reason there) and ``Registered`` (True once the runner has
a runner id from its JIT config; False with ``Registering`` before, or ``JitConfigFailed`` when the
service refused the config). A done runner states only ``Ready``; a pass that deletes the runner, or
runs its deletion, states none. Failures a user must act on (a failed runner pod, the failure budget
spent, a JIT config failure, a runner name taken by another scale set, a pod over quota) are Warning
Events, emitted once: with the condition that first reports them, or by the pass that records or acts
on them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from statemachines import (
    conditions,
    declaring,
    effects,
    kinds,
    naming,
    outcomes,
    patches,
    pods,
    predicates,
    readycondition,
    runnerpods,
    runners,
    tables,
)
from statemachines.conditions import Condition
from statemachines.decisions import Decision
from statemachines.drafts import Draft
from statemachines.effectresults import EffectResult
from statemachines.jsonvalues import JsonObject, as_mapping
from statemachines.objects import er_spec, er_status
from statemachines.outcomes import Failure
from statemachines.phaseevents import with_phase_events
from statemachines.phases import ErPhase
from statemachines.snapshots import Snapshot

KIND = "EphemeralRunner"
POD = "pod"
SECRET = "secret"
OTHER_POD = "other_pod"
OTHER_SECRET = "other_secret"

FINALIZERS = (naming.FINALIZER_EPHEMERAL_RUNNER, naming.FINALIZER_RUNNER_REGISTRATION)
MAX_FAILURES = 5
BACKOFF_SECONDS = (0, 5, 10, 20, 40, 80)
JOB_STILL_RUNNING_SECONDS = 30.0
QUOTA_RETRY_SECONDS = 30.0
QUOTA_GIVE_UP_SECONDS = 600.0
ALREADY_EXISTS_SECONDS = 5.0
RETRY_SECONDS = 5.0  # any other failed call: upstream returns the error and the work queue backs off
REQUEUE_SOON = 1.0  # upstream's ``Requeue: true``
# A Secret or pod the executor created but the watch has not shown yet: wait this long before making it again.
SETTLE_SECONDS = 5.0
EXIT_OUTDATED = 7
WAIT_FOR_IT = "waiting for it to go before making this runner's own"
QUOTA_MARKER = "exceeded quota:"
REASON_INVALID_POD = "InvalidPod"
# A deleted runner whose registration could not be removed (the config Secret is gone).
RUNNER_LEFT_REGISTERED = "RunnerLeftRegistered"

DONE = frozenset({ErPhase.SUCCEEDED, ErPhase.FAILED, ErPhase.OUTDATED})

REGISTERED = "Registered"  # a condition type
READY_MESSAGES = {
    ErPhase.NONE: "The runner has no pod yet",
    ErPhase.PENDING: "The runner pod is pending",
    ErPhase.RUNNING: "The runner pod is running",
    ErPhase.SUCCEEDED: "The runner finished",
    ErPhase.FAILED: "The runner failed",
    ErPhase.OUTDATED: "The runner exited with code 7: its version is deprecated",
    ErPhase.UNKNOWN: "The runner pod's state is unknown: its node stopped reporting it",
}


class Trigger(enum.StrEnum):
    POD_PHASE = "pod_phase"
    POD_REJECTED = "pod_rejected"
    RUNNER_OUTDATED = "runner_outdated"


# -- reading the snapshot ---------------------------------------------------------------------------------


def current_phase(s: Snapshot) -> ErPhase:
    return ErPhase.of(er_status(s.status).get("phase"))


def pod_ref(s: Snapshot) -> effects.ObjectRef:
    return effects.ObjectRef("Pod", s.subject.namespace, s.subject.name)


def secret_ref(s: Snapshot) -> effects.ObjectRef:
    return effects.ObjectRef("Secret", s.subject.namespace, s.subject.name)


def failures(s: Snapshot) -> Mapping[str, object]:
    return as_mapping(er_status(s.status).get("failures"))


def pod_phase(s: Snapshot) -> str:
    """The phase the runner mirrors from its pod; a pod without one is Pending."""
    return pods.phase(s.get(POD)) or "Pending"


def runner_exit_code(s: Snapshot) -> int | None:
    return pods.exit_code(pods.runner_container_status(s.get(POD)))


def pod_create_outcome(s: Snapshot) -> EffectResult | None:
    return outcomes.of(s, effects.CreateObject(pod_ref(s), {}))


def is_quota(outcome: EffectResult) -> bool:
    return outcome.failed_with(Failure.FORBIDDEN) and QUOTA_MARKER in outcome.message


# -- guards and the table --------------------------------------------------------------------------------


def mirrored_phase(s: Snapshot) -> ErPhase:
    """The phase the pod's phase mirrors to: Running or Unknown as the pod says; anything else is Pending."""
    phase = ErPhase.of(pod_phase(s))
    return phase if phase in (ErPhase.RUNNING, ErPhase.UNKNOWN) else ErPhase.PENDING


def pod_is_pending(s: Snapshot) -> bool:
    return mirrored_phase(s) is ErPhase.PENDING


def pod_is_running(s: Snapshot) -> bool:
    return mirrored_phase(s) is ErPhase.RUNNING


def pod_is_unknown(s: Snapshot) -> bool:
    return mirrored_phase(s) is ErPhase.UNKNOWN


def pod_create_rejected(s: Snapshot) -> bool:
    """The last pod create was refused as Invalid, or Forbidden for a reason other than quota."""
    out = pod_create_outcome(s)
    if out is None:
        return False
    return out.failed_with(Failure.INVALID) or (out.failed_with(Failure.FORBIDDEN) and not is_quota(out))


def runner_exited_outdated(s: Snapshot) -> bool:
    return runner_exit_code(s) == EXIT_OUTDATED


_LIVE = (ErPhase.NONE.value, ErPhase.PENDING.value, ErPhase.RUNNING.value, ErPhase.UNKNOWN.value)

ROWS = (
    tables.Row(Trigger.POD_PHASE, _LIVE, ErPhase.PENDING, "the runner pod is pending", (pod_is_pending,)),
    tables.Row(Trigger.POD_PHASE, _LIVE, ErPhase.RUNNING, "the runner pod is running", (pod_is_running,)),
    tables.Row(
        Trigger.POD_PHASE,
        _LIVE,
        ErPhase.UNKNOWN,
        "the runner pod's state is unknown: its node stopped reporting it",
        (pod_is_unknown,),
    ),
    tables.Row(
        Trigger.POD_REJECTED,
        _LIVE,
        ErPhase.FAILED,
        "the API server rejected the runner pod (InvalidPod)",
        (pod_create_rejected,),
    ),
    tables.Row(
        Trigger.RUNNER_OUTDATED,
        _LIVE,
        ErPhase.OUTDATED,
        "the runner exited with code 7: its version is deprecated",
        (runner_exited_outdated,),
    ),
)

MACHINE = tables.PhaseMachine(KIND, ErPhase, ROWS)


# -- one pass ---------------------------------------------------------------------------------------------


@dataclass
class _Pass:
    s: Snapshot
    draft: Draft
    runner_id: int  # status.runnerId, or the id this pass writes there
    # The condition types this pass learned about; none when it ends in (or asks for) the deletion.
    stated: tuple[str, ...] = ()
    deleting: bool = False
    # (reason, message) of what keeps the runner from becoming ready, or from registering.
    pod_problem: tuple[str, str] | None = None
    jit_problem: tuple[str, str] | None = None

    @property
    def er(self) -> JsonObject:
        return self.s.obj or {}

    @property
    def uid(self) -> str:
        return str(self.s.meta.get("uid") or "")

    def scope(self) -> effects.ActionsScope:
        spec = er_spec(self.s.spec)
        return effects.ActionsScope(
            config_url=str(spec.get("githubConfigUrl") or ""),
            namespace=self.s.subject.namespace,
            secret_name=str(spec.get("githubConfigSecret") or ""),
            proxy=as_mapping(spec.get("proxy")),
            tls=as_mapping(spec.get("githubServerTLS")),
            vault=as_mapping(spec.get("vaultConfig")),
        )

    def call(self, op: effects.ActionsOp, **args: Any) -> effects.ActionsCall:
        return effects.ActionsCall(self.s.subject, self.scope(), op, args, epoch=self.uid)

    def remove_runner(self, runner_id: int) -> effects.ActionsCall:
        return self.call(effects.ActionsOp.REMOVE_RUNNER, runnerId=runner_id)

    def requeue(self, seconds: float) -> None:
        self.draft.add(effects.RequeueAfter(self.s.subject, seconds))

    def end(self, note: str) -> bool:
        self.draft.note = note
        return True

    def enter(self, trigger: Trigger, **status: object) -> bool:
        """Fire ``trigger``; when a row fires, write the phase it leads to (with ``status``) and say True.

        The one place ``status.phase`` is written: a phase without a row, or a row without its phase, cannot
        be journaled.
        """
        taken = MACHINE.fire(trigger, current_phase(self.s).value, self.s)
        if taken is None:
            return False
        self.draft.record(taken)
        self.patch_status({"phase": taken.to, **status})
        return True

    def patch_status(self, status: JsonObject) -> None:
        if status:
            self.draft.add(effects.MergePatch(self.s.subject, {"status": status}, subresource="status"))

    def written_status(self) -> JsonObject:
        """The status as this pass leaves it: the observed one with the drafted status patch merged."""
        key = effects.MergePatch(self.s.subject, {}, subresource="status").key
        drafted = next((e for e in self.draft.effects if e.key == key), None)
        patch = drafted.patch.get("status") if isinstance(drafted, effects.MergePatch) else None
        return {**self.s.status, **as_mapping(patch)}

    def delete_self(self) -> None:
        self.deleting = True
        self.draft.add(effects.DeleteObject(self.s.subject, uid=self.uid))

    def warn(self, reason: str, message: str) -> None:
        self.draft.add(effects.EmitEvent(self.s.subject, self.uid, "Warning", reason, message))

    def delete_if_present(self, ref: effects.ObjectRef, obj: JsonObject | None) -> None:
        if obj is not None and not pods.is_terminating(obj):
            self.draft.add(effects.DeleteObject(ref, uid=pods.uid(obj)))


def _status_runner_id(s: Snapshot) -> int:
    value = er_status(s.status).get("runnerId")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@with_phase_events
def decide(snapshot: Snapshot) -> Decision:
    """One reconcile of an EphemeralRunner (see the module docstring)."""
    draft = Draft(snapshot.subject)
    if snapshot.obj is None:
        draft.note = "the runner is gone"
        return draft.decision()
    step = _Pass(snapshot, draft, _status_runner_id(snapshot))
    for run in _STEPS:
        if run(step):
            break
    _conditions(step)
    return draft.decision()


def _conditions(p: _Pass) -> None:
    """The pass's conditions, into its status patch; a Warning for a problem they newly report."""
    if not p.stated or p.deleting:
        return
    status = p.written_status()
    phase = ErPhase.of(status.get("phase"))
    message = READY_MESSAGES[phase]
    if phase is ErPhase.FAILED and status.get("message"):
        message = readycondition.one_line(f"{message}: {status.get('message')}")
    taken = p.draft.transitions[-1] if p.draft.transitions else None
    ready = readycondition.ready(
        p.s,
        phase.value,
        working=ErPhase.RUNNING.value,
        transition=taken,
        message=message,
        problem=p.pod_problem,
    )
    wanted = [ready]
    reported = [ready] if p.pod_problem is not None else []
    if REGISTERED in p.stated:
        registered = _registered(p, str(status.get("runnerName") or ""))
        wanted.append(registered)
        reported += [registered] if p.jit_problem is not None else []
    for condition in reported:
        event = readycondition.warning(p.s, condition)
        if event is not None:
            p.draft.add(event)
    p.patch_status(readycondition.status_patch(p.s, wanted))


def _registered(p: _Pass, name: str) -> Condition:
    if p.runner_id > 0:
        return Condition(REGISTERED, True, "RunnerRegistered", f"Registered as runner {p.runner_id} ({name})")
    if p.jit_problem is not None:
        return Condition(REGISTERED, False, *p.jit_problem)
    return Condition(REGISTERED, False, "Registering", "Generating the runner's JIT config")


# 1. deletion


def _deletion(p: _Pass) -> bool:
    if not pods.is_terminating(p.er):
        return False
    finalizers = list(p.s.meta.get("finalizers") or [])
    if naming.FINALIZER_EPHEMERAL_RUNNER not in finalizers:
        return p.end("deleting: no finalizer of ours left")
    if naming.FINALIZER_RUNNER_REGISTRATION in finalizers and not _runner_removed(p):
        return True
    _cleanup_resources(p)
    if runnerpods.has_container_hooks(p.er):
        selector = f"{runnerpods.LABEL_RUNNER_POD}={p.s.subject.name}"
        for kind in ("Pod", "Secret"):
            p.draft.add(effects.DeleteMatching(kind, p.s.subject.namespace, selector))
    kept = [f for f in finalizers if f not in FINALIZERS]
    p.draft.add(_finalizer_patch(p, kept))
    return p.end("deleting: runner removed from the service, resources cleaned up, finalizers removed")


def _runner_removed(p: _Pass) -> bool:
    """True once RemoveRunner succeeded; otherwise asks for it (or waits) and says False.

    The id is status.runnerId, or, when the runner was deleted after its JIT config was generated but
    before its id reached the status, the id the JIT Secret (or the generation's journaled outcome)
    names: upstream removes ``status.runnerId`` only, so such a runner's registration stays behind as an
    offline runner of the scale set. [R]
    """
    runner_id = p.runner_id
    if runner_id == 0:
        found = secret_runner(p.s, outcomes.of(p.s, _jit_effect(p)))
        runner_id = found[0] if found is not None else 0
    if runner_id == 0:
        return True  # never registered: nothing to remove (§8 item 7 [R])
    call = p.remove_runner(runner_id)
    out = outcomes.of(p.s, call)
    if out is not None and (out.ok or out.failed_with(Failure.RUNNER_NOT_FOUND)):
        return True
    if out is not None and out.failed_with(Failure.CONFIG_SECRET_MISSING):
        # No credentials to remove it with, and none may come: the runner goes, saying what it left (an
        # offline registration, which GitHub removes once it has been offline long enough).
        p.warn(
            RUNNER_LEFT_REGISTERED,
            f"The runner {runner_id} stays registered in GitHub: the config Secret named by "
            "spec.githubConfigSecret is gone, so it cannot be removed from here",
        )
        return True
    _retry(p, call, out, "removing the runner from the service")
    return False


def _retry(p: _Pass, effect: effects.Effect, out: EffectResult | None, doing: str) -> bool:
    """Ask for ``effect``, unless its last failure is too recent: then wait out the window. Ends the pass."""
    if out is None or out.ok:
        p.draft.add(effect)
        return p.end(doing)
    window = RETRY_SECONDS
    if out.failed_with(Failure.JOB_STILL_RUNNING):
        window = JOB_STILL_RUNNING_SECONDS
    elif is_quota(out):
        window = QUOTA_RETRY_SECONDS
    elif out.failed_with(Failure.ALREADY_EXISTS):
        window = ALREADY_EXISTS_SECONDS
    left = out.remaining(window, p.s.now)
    if left > 0:
        p.requeue(left)
        return p.end(f"{doing}: waiting {left:g}s after {out.error}")
    p.draft.add(effect)
    return p.end(f"{doing}: again after {out.error}")


def _cleanup_resources(p: _Pass) -> None:
    p.delete_if_present(pod_ref(p.s), p.s.get(POD))
    p.delete_if_present(secret_ref(p.s), p.s.get(SECRET))


def _finalizer_patch(p: _Pass, finalizers: list[str]) -> effects.MergePatch:
    version = str(p.s.meta.get("resourceVersion") or "")
    return effects.MergePatch(p.s.subject, {"metadata": {"finalizers": finalizers}}, resource_version=version)


# 2. done runners


def _done(p: _Pass) -> bool:
    if current_phase(p.s) not in DONE:
        return False
    p.stated = (conditions.READY,)
    _cleanup_resources(p)
    return p.end(f"done ({current_phase(p.s)}): pod and secret cleaned up, waiting for the set to delete it")


# 3. finalizers: both, in one patch (seed C5)


def _finalizers(p: _Pass) -> bool:
    present = list(p.s.meta.get("finalizers") or [])
    missing = [f for f in FINALIZERS if f not in present]
    if missing:
        p.draft.add(_finalizer_patch(p, [*present, *missing]))
    return False


# 4. the JIT secret


def _jit_effect(p: _Pass) -> effects.CreateJitConfigSecret:
    meta = as_mapping(er_spec(p.s.spec).get("ephemeralRunnerConfigSecretMetadata"))
    return effects.CreateJitConfigSecret(
        target=secret_ref(p.s),
        scope=p.scope(),
        runner_name=p.s.subject.name,
        scale_set_id=int(er_spec(p.s.spec).get("runnerScaleSetId") or 0),
        work_folder=runnerpods.work_folder(p.er),
        owner=runners.owner_reference(p.er, KIND),
        metadata={k: dict(as_mapping(meta.get(k))) for k in ("labels", "annotations") if meta.get(k)},
    )


def _jit_secret(p: _Pass) -> bool:
    p.stated = (conditions.READY, REGISTERED)
    if p.s.get(SECRET) is not None:
        return False
    jit = _jit_effect(p)
    out = outcomes.of(p.s, jit)
    other = p.s.get(OTHER_SECRET)
    if other is not None:
        # No watch shows Secrets (the controller may not list them): whether the other owner's went is
        # learned by asking again, after a while. The executor reads the Secret before generating
        # anything, so asking while it is still there registers no runner.
        p.jit_problem = ("SecretNameTaken", _taken_message("Secret", p.s.subject.name, other))
        return _retry(p, jit, out, "a Secret of this name belongs to another owner: waiting for it to go")
    if out is not None and out.ok:
        left = outcomes.unobserved_for(p.s, jit, jit.target, SETTLE_SECONDS)
        if left > 0:
            p.requeue(left)
            return p.end("JIT secret created: waiting to observe it")
        p.draft.add(jit)
        return p.end("the JIT secret is gone: generating a new JIT config")
    if out is not None and (out.failed_with(Failure.RUNNER_EXISTS) or _outcome_unknown(out)):
        return _runner_exists(p, jit, out)
    if out is not None and out.failed_with(Failure.ALREADY_EXISTS):
        # The executor met a Secret of this name another owner holds before the watch showed it.
        p.jit_problem = ("SecretNameTaken", readycondition.one_line(f"{out.message}: {WAIT_FOR_IT}"))
        return _retry(p, jit, out, "a Secret of this name belongs to another owner: waiting for it to go")
    if out is not None and not out.ok:
        detail = f": {out.message}" if out.message else ""
        p.jit_problem = (
            "JitConfigFailed",
            readycondition.one_line(f"Generating the JIT config failed ({out.error}){detail}"),
        )
    return _retry(p, jit, out, "generating the runner's JIT config")


def _outcome_unknown(out: EffectResult) -> bool:
    """The JIT config may have been issued, but no Secret was written: a controller stopped during the
    effect, or it ran out of time."""
    return out.failed_with(Failure.INTERRUPTED) or out.failed_with(Failure.TIMEOUT)


def _runner_exists(p: _Pass, jit: effects.Effect, jit_out: EffectResult) -> bool:
    """A runner with this name is registered (or may be: the JIT config's outcome is unknown): look it
    up, then remove it and retry, or give up."""
    lookup = p.call(effects.ActionsOp.GET_RUNNER_BY_NAME, name=p.s.subject.name)
    found = outcomes.of(p.s, lookup)
    if found is None or not found.newer_than(jit_out):
        p.draft.add(lookup)
        return p.end("a runner of this name exists: looking it up")
    if not found.ok:
        return _retry(p, lookup, found, "looking up the runner of this name")
    existing = as_mapping(found.facts.get("runner"))
    if not existing:
        return _retry_after(p, jit, found, "no runner of this name after all: generating the JIT config")
    if existing.get("runnerScaleSetId") != int(er_spec(p.s.spec).get("runnerScaleSetId") or 0):
        p.delete_self()
        p.warn(
            "RunnerNameTaken",
            f"A runner named {p.s.subject.name} is registered in another scale set: deleting this runner",
        )
        return p.end("a runner of this name belongs to another scale set: deleting this runner")
    remove = p.remove_runner(int(existing.get("id") or 0))
    removed = outcomes.of(p.s, remove)
    if removed is None or not removed.newer_than(found):
        p.draft.add(remove)
        return p.end("removing the earlier registration of this runner name")
    if removed.ok or removed.failed_with(Failure.RUNNER_NOT_FOUND):
        p.draft.add(jit)
        return p.end("earlier registration removed: generating the JIT config again")
    return _retry(p, remove, removed, "removing the earlier registration of this runner name")


def _retry_after(p: _Pass, effect: effects.Effect, since: EffectResult, doing: str) -> bool:
    left = since.remaining(REQUEUE_SOON, p.s.now)
    if left > 0:
        p.requeue(left)
        return p.end(f"{doing} (in {left:g}s)")
    p.draft.add(effect)
    return p.end(doing)


# 5. runner id and name


def secret_runner(s: Snapshot, jit_result: EffectResult | None) -> tuple[int, str] | None:
    """The runner id and name the JIT Secret holds; None when it names no valid id."""
    annotations = as_mapping(as_mapping((s.get(SECRET) or {}).get("metadata")).get("annotations"))
    if naming.ANNOTATION_JIT_RUNNER_ID in annotations:
        source: JsonObject = {
            "runnerId": annotations.get(naming.ANNOTATION_JIT_RUNNER_ID),
            "runnerName": annotations.get(naming.ANNOTATION_JIT_RUNNER_NAME),
        }
    elif jit_result is not None and jit_result.ok:
        source = jit_result.facts
    else:
        return None
    raw = source.get("runnerId")
    try:
        runner_id = int(str(raw).strip()) if not isinstance(raw, bool) else 0
    except ValueError:
        return None
    return (runner_id, str(source.get("runnerName") or "")) if runner_id > 0 else None


def _runner_id(p: _Pass) -> bool:
    if p.runner_id != 0:
        return False
    found = secret_runner(p.s, outcomes.of(p.s, _jit_effect(p)))
    if found is None:
        p.delete_if_present(secret_ref(p.s), p.s.get(SECRET))
        p.requeue(REQUEUE_SOON)
        return p.end("the JIT secret names no runner id: deleting it to make a new one")
    p.runner_id, name = found
    p.patch_status({"runnerId": p.runner_id, "runnerName": name})
    return False


# 6, 7. the failure budget and the backoff


def _failure_budget(p: _Pass) -> bool:
    if len(failures(p.s)) <= MAX_FAILURES:
        return False
    p.delete_self()
    p.warn(
        "TooManyPodFailures",
        f"The runner pod failed {len(failures(p.s))} times: deleting the runner; its set makes a new one",
    )
    return p.end(f"the pod failed {len(failures(p.s))} times: deleting the runner")


def backoff_remaining(s: Snapshot) -> float:
    """Seconds left before the pod may be made again after its last failure (0 when it may)."""
    recorded = failures(s)
    times = [t for t in (pods.parse_time(v) for v in recorded.values()) if t is not None]
    if not times:
        return 0.0
    delay = BACKOFF_SECONDS[min(len(recorded), len(BACKOFF_SECONDS) - 1)]
    return max((max(times) + timedelta(seconds=delay) - s.now).total_seconds(), 0.0)


def _backoff(p: _Pass) -> bool:
    left = backoff_remaining(p.s)
    if left <= 0:
        return False
    p.requeue(left)
    return p.end(f"backing off {left:g}s after {len(failures(p.s))} pod failure(s)")


# 8. no pod: create it


def _owner_uids(obj: JsonObject) -> list[str]:
    refs = as_mapping(obj.get("metadata")).get("ownerReferences")
    return (
        [str(as_mapping(r)["uid"]) for r in refs if as_mapping(r).get("uid")]
        if isinstance(refs, list)
        else []
    )


def _taken_message(kind: str, name: str, other: JsonObject) -> str:
    uids = ", ".join(_owner_uids(other)) or "none"
    going = "it is being deleted" if pods.is_terminating(other) else "it is not being deleted"
    return f"{kind} {name} belongs to another owner (owner uid {uids}; {going}): {WAIT_FOR_IT}"


def _create_pod(p: _Pass) -> bool:
    if p.s.get(POD) is not None:
        return False
    other = p.s.get(OTHER_POD)
    if other is not None:
        p.pod_problem = ("PodNameTaken", _taken_message("Pod", p.s.subject.name, other))
        p.requeue(RETRY_SECONDS)
        return p.end("a pod of this name belongs to another owner: waiting for it to go")
    body = runnerpods.runner_pod(p.er, p.s.get(SECRET), build_version=p.s.settings.build_version)
    create = effects.CreateObject(pod_ref(p.s), body)
    out = outcomes.of(p.s, create)
    unobserved = outcomes.unobserved_for(p.s, create, create.target, SETTLE_SECONDS)
    if unobserved > 0:
        p.requeue(unobserved)
        return p.end("pod created: waiting to observe it")
    if (
        out is not None
        and pod_create_rejected(p.s)
        and _mark_failed(p, f"Failed to create the pod: {out.message}")
    ):
        return p.end(f"pod rejected ({out.error}): runner failed")
    fresh_quota = out is not None and is_quota(out) and out.remaining(QUOTA_RETRY_SECONDS, p.s.now) > 0
    if fresh_quota and _age_seconds(p.s) > QUOTA_GIVE_UP_SECONDS:
        p.delete_self()
        p.warn(
            "PodQuotaExceeded", "The runner pod was over quota for more than 10 minutes: deleting the runner"
        )
        return p.end("pod over quota for more than 10 minutes: deleting the runner")
    if out is not None and not out.ok and not out.failed_with(Failure.ALREADY_EXISTS):
        reason = "PodQuotaExceeded" if is_quota(out) else "PodCreateFailed"
        detail = f": {out.message}" if out.message else ""
        p.pod_problem = (
            reason,
            readycondition.one_line(f"Creating the runner pod failed ({out.error}){detail}"),
        )
    return _retry(p, create, out, "creating the runner pod")


def _age_seconds(s: Snapshot) -> float:
    created = pods.parse_time(s.meta.get("creationTimestamp"))
    return float("inf") if created is None else (s.now - created).total_seconds()


def _mark_failed(p: _Pass, message: str) -> bool:
    if not p.enter(Trigger.POD_REJECTED, reason=REASON_INVALID_POD, message=message):
        return False
    _remove_after_verdict(p)
    return True


def _mark_outdated(p: _Pass) -> bool:
    if not p.enter(Trigger.RUNNER_OUTDATED, reason="Outdated", message="Runner is deprecated"):
        return p.end(f"runner exited with code 7, but no row leaves {current_phase(p.s) or 'no phase'}")
    _remove_after_verdict(p)
    return p.end("runner exited with code 7: outdated")


def _remove_after_verdict(p: _Pass) -> None:
    if p.runner_id:
        p.draft.add(p.remove_runner(p.runner_id))


# 9. the pod is there


def _pod_present(p: _Pass) -> bool:
    pod = p.s.get(POD)
    status = pods.runner_container_status(pod)
    code = pods.exit_code(status)
    if pods.phase(pod) == "Failed":
        if code == 0:
            return _runner_finished(p)
        if code == EXIT_OUTDATED:
            return _mark_outdated(p)
        return _delete_runner_or_pod(p, "the pod failed")
    if pods.init_container_failed(pod):
        return _delete_runner_or_pod(p, "an init container failed")
    if status is None:
        return p.end("waiting for the runner container to report")
    if code is None and pods.last_exit_code(status) == 0:
        # Restarted after it exited 0 (a pod without restartPolicy Never, as upstream's experimental chart
        # makes): its job is done and its registration used, so a restart can only fail; finished.
        return _runner_finished(p)
    if code is None:
        return _update_run_status(p)
    if code == EXIT_OUTDATED:
        return _mark_outdated(p)
    if code != 0:
        return _delete_runner_or_pod(p, f"the runner exited with code {code}")
    return _runner_finished(p)


def _runner_finished(p: _Pass) -> bool:
    p.delete_self()
    return p.end("the runner exited with code 0: deleting it")


def _delete_runner_or_pod(p: _Pass, why: str) -> bool:
    job = runners.job_id(p.er)
    if job:
        p.delete_self()
        _remove_after_verdict(p)  # best effort: its result is never waited for
        p.warn(
            "RunnerPodFailed", f"Runner pod {p.s.subject.name}: {why} during job {job}: deleting the runner"
        )
        return p.end(f"{why} during a job: deleting the runner")
    pod = p.s.get(POD)
    p.delete_if_present(pod_ref(p.s), pod)
    if pods.uid(pod) in failures(p.s):
        return p.end(f"{why}: failure already recorded, waiting for the pod to go")
    p.patch_status({"failures": {pods.uid(pod): pods.format_time(p.s.now)}})
    p.patch_status(_mirror(p.s, ready=False))
    count = len(failures(p.s)) + 1
    p.warn(
        "RunnerPodFailed",
        f"Runner pod {p.s.subject.name}: {why}; pod deleted and made again after a backoff "
        f"(failure {count}; the runner is replaced after {MAX_FAILURES + 1})",
    )
    return p.end(f"{why}: pod deleted, failure {count} recorded")


def _update_run_status(p: _Pass) -> bool:
    """Upstream's ``updateRunStatusFromPod``: mirror the pod phase, ``ready`` and the pod's reason/message.

    The phase is the destination of the ``POD_PHASE`` row that fires (``mirrored_phase``), and is written
    only when it differs from the observed string.
    """
    pod = p.s.get(POD)
    if pod_phase(p.s) in ("Succeeded", "Failed"):
        return p.end("pod finished: waiting for the runner container to report")
    ready = pods.pod_ready(pod)
    status = er_status(p.s.status)
    mirrored = mirrored_phase(p.s)
    if status.get("phase") == mirrored.value and bool(status.get("ready")) is ready:
        return p.end("in sync with the pod")
    if status.get("phase") != mirrored.value:
        p.enter(Trigger.POD_PHASE)
    p.patch_status(_mirror(p.s, ready=ready))
    return p.end(f"mirrored the pod: phase {mirrored}, ready {ready}")


def _mirror(s: Snapshot, **wanted: object) -> dict[str, Any]:
    """The status patch that sets ``wanted`` plus the pod's reason and message (an empty one is removed)."""
    pod = s.get(POD)
    after = {**wanted, "reason": pods.reason(pod), "message": pods.message(pod)}
    before = {k: s.status[k] for k in after if k in s.status}
    return patches.diff(before, {k: v for k, v in after.items() if v != ""})


_STEPS: tuple[Callable[[_Pass], bool], ...] = (
    _deletion,
    _done,
    _finalizers,
    _jit_secret,
    _runner_id,
    _failure_budget,
    _backoff,
    _create_pod,
    _pod_present,
)


# What the EphemeralRunner reads and what wakes it: its pod and its JIT Secret, of its own name and owned
# by it (one of that name another owner holds is read as ``other_pod`` / ``other_secret``).
DECLARATION = declaring.Declaration(
    kind=kinds.ER,
    decide=decide,
    owns=(declaring.Owns("Pod", predicates.runner_from_pod), declaring.Owns("Secret")),
    related=(
        declaring.Related(POD, declaring.SameNameOwned("Pod", OTHER_POD)),
        declaring.Related(SECRET, declaring.SameNameOwned("Secret", OTHER_SECRET)),
    ),
)
