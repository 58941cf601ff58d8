"""The EphemeralRunnerSet machine: its phase table and ``decide`` (spec §2.2, §3.2; seed C3, C4, C7).

``decide(snapshot)`` walks the steps of §2.2 in order and stops at the first that ends the pass:

1. deletion (cleanup, then the proxy Secret, then the finalizer goes);
2. the finalizer is added;
3. a runner-spec revision is applied (``spec.actionableRevision > status.appliedActionableRevision``);
4. the Outdated branch (cleanup only: no scaling, no status write);
5. the proxy Secret; 6. classification; 8. stale outdated runners are deleted;
9. scaling; 10. the status.

Step 7 (controller metrics) is not a decision: the runtime derives its gauges from the status. The phase
table is ``ROWS`` (drawn by ``arcsm graph EphemeralRunnerSet``, in docs/lifecycles.md).

What the snapshot must carry: ``obj`` the set; ``children`` its EphemeralRunners as last observed;
``related["proxy_secret"]`` the Secret ``naming.runner_set_proxy_secret_name`` as observed (None when
absent) whenever the runner spec has a proxy; ``results`` the results of the set's ``ReleaseRunner``
effects, by effect key.

How work that upstream does with reads in the middle of a reconcile is expressed here:

* RemoveRunner then DELETE is one ``effects.ReleaseRunner``; its result is a fact later decisions read
  (JobStillRunning = busy for ``BUSY_RECHECK_SECONDS``, success = deleting until observed, any other
  failure = ask again). Upstream asks a busy runner again on every pass; here a JobStillRunning answer
  holds for the window and the decision requeues itself (a ``timer`` record) for when it ends, so a
  runner whose job has finished is asked again even when nothing else happens to the set.
  A runner that never registered (``runnerId == 0``) is deleted without a RemoveRunner (§8 item 7 [R]).
* Cleanup "returned no error" is read from observed state, not from a pass's own intent: a revision is
  applied by the first decision whose cleanup has nothing left to do (every terminated, pending and idle
  runner is deleting or gone; runners with a job, or that the service said are running one, are skipped
  as upstream skips them). Until then a decision only emits the cleanup, so a failure or a crash at any
  point leaves ``appliedActionableRevision`` behind and the next decision redoes what is missing (I3.4).
* The proxy Secret's data hold credentials a decision never sees, so ``effects.WriteProxySecret`` leaves
  comparing the data to the executor. A decision emits it when the Secret is missing, when its labels
  drifted (then it requeues after 1 s and returns, as upstream does after an update), and with every
  applied revision: upstream's cleanup deletes the Secret of a set with no runners and the same pass
  recreates it; rewriting it from fresh credentials ends in the same state without the gap.
* Runner names are deterministic (``runners.runner_names``).

Conditions (``status.conditions``), computed once at the end of a pass that reaches step 3 or later and
written in the same status patch as the phase: ``Ready`` (True while Running; see ``readycondition``) and
``RevisionApplied`` (True once ``appliedActionableRevision`` has caught up with ``actionableRevision``,
False with reason ``RevisionPending`` while the old revision's runners are being cleaned up). A runner
Failed because the API server refused its pod (reason ``InvalidPod``) makes ``Ready`` False with reason
``RunnerPodsRefused`` and the API server's verdict, without the pod's name (every runner of the spec
gets the same one): the pod template cannot work, and the AutoscalingRunnerSet reports it from here. A
runner create the API server refused as Invalid makes ``Ready`` False (``RunnerRejected``, one Warning
Event) and is asked again after the backoff of ``refusals`` rather than at every pass; the scale set
reads it from there too. A pass that ends in deletion, the finalizer or a proxy Secret update states none.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from statemachines import (
    declaring,
    effects,
    kinds,
    naming,
    outcomes,
    predicates,
    readycondition,
    refusals,
    runners,
    tables,
)
from statemachines.conditions import Condition
from statemachines.decisions import Decision, Transition
from statemachines.effectresults import EffectResult
from statemachines.effects import Effect, ObjectRef
from statemachines.jsonvalues import JsonObject, as_int, as_mapping, section
from statemachines.objects import ers_spec, ers_status
from statemachines.phaseevents import with_phase_events
from statemachines.phases import ErPhase, ErsPhase
from statemachines.runners import RunnersByState
from statemachines.snapshots import Snapshot

FINALIZER = naming.FINALIZER_EPHEMERAL_RUNNER_SET
PROXY_SECRET = "proxy_secret"  # the key of Snapshot.related
PROXY_REQUEUE_SECONDS = 1.0
# How long a JobStillRunning answer keeps a runner out of releases before it is asked again (the wait
# §2.3 uses for the same answer at deletion).
BUSY_RECHECK_SECONDS = 30.0

REVISION_APPLIED = "RevisionApplied"  # a condition type
PODS_REFUSED = "RunnerPodsRefused"  # the Ready reason while runner pods are refused
REASON_INVALID_POD = "InvalidPod"  # the reason of an EphemeralRunner whose pod the API server refused
# The API server's "<Kind> "<name>" is invalid: " (or forbidden) before its verdict, as the runner quotes it.
_REFUSED_PREFIX = re.compile(r"^(?:.*?: )?\S+ \"[^\"]*\" is (?:invalid|forbidden): ")
# ``Ready``'s reason while the API server refuses the runners this set creates (``refusals``).
RUNNER_REJECTED = "RunnerRejected"

READY_MESSAGES = {
    ErsPhase.NONE: "The runner set has no status yet",
    ErsPhase.RUNNING: "The runner set keeps its runners at the desired count",
    ErsPhase.OUTDATED: (
        "A runner built from the current runner spec exited as outdated: no runners are made until the "
        "AutoscalingRunnerSet publishes a new runner spec"
    ),
}


class Trigger(enum.StrEnum):
    UPDATE_STATUS = "update_status"  # §2.2 step 10 (and step 8): counters and phase from the runners
    APPLY_REVISION = "apply_revision"  # §2.2 step 3: patchAppliedActionableRevisionStatus


# -- reading the snapshot --------------------------------------------------------------------------------


def spec_revision(s: Snapshot) -> int:
    return as_int(ers_spec(s.spec).get("actionableRevision"))


def applied_revision(s: Snapshot) -> int:
    return as_int(ers_status(s.status).get("appliedActionableRevision"))


def target_revision(s: Snapshot) -> int:
    """The applied revision after step 3: never lower than the live one (the monotonic guard)."""
    return max(applied_revision(s), spec_revision(s))


def current_phase(s: Snapshot) -> ErsPhase:
    """``status.phase``; a string that is no ERS phase reads as the empty phase."""
    try:
        return ErsPhase(str(ers_status(s.status).get("phase") or ""))
    except ValueError:
        return ErsPhase.NONE


def runner_spec(s: Snapshot) -> JsonObject:
    return as_mapping(ers_spec(s.spec).get("ephemeralRunnerSpec"))


def runner_ref(s: Snapshot, runner: JsonObject) -> ObjectRef:
    return ObjectRef(runners.RUNNER_KIND, s.subject.namespace, runners.name_of(runner))


def release_outcome(s: Snapshot, runner: JsonObject) -> EffectResult | None:
    """The result of the last ``ReleaseRunner`` of this runner's registration; None when there is none."""
    rid = runners.runner_id(runner)
    body = s.results.get(effects.release_key(runner_ref(s, runner), rid)) if rid else None
    return None if body is None else EffectResult.from_body(body)


def busy_for(s: Snapshot, runner: JsonObject) -> float:
    """Seconds left before a runner the service said is executing a job (RemoveRunner answered
    JobStillRunning) is asked again; 0 when it never said so or the window has passed."""
    outcome = release_outcome(s, runner)
    if outcome is None or not outcome.failed_with(outcomes.Failure.JOB_STILL_RUNNING):
        return 0.0
    return outcome.remaining(BUSY_RECHECK_SECONDS, s.now)


def busy(s: Snapshot, runner: JsonObject) -> bool:
    """The service said, less than ``BUSY_RECHECK_SECONDS`` ago, that the runner is executing a job."""
    return busy_for(s, runner) > 0


def released(s: Snapshot, runner: JsonObject) -> bool:
    """RemoveRunner and the DELETE both succeeded; the deletion may not be observed yet."""
    outcome = release_outcome(s, runner)
    return outcome is not None and outcome.ok


def runners_of(s: Snapshot, applied: int | None = None) -> RunnersByState:
    """The children classified against ``applied`` (default: the live applied revision)."""
    gone = {runners.name_of(r) for r in s.children if released(s, r)}
    revision = applied_revision(s) if applied is None else applied
    return runners.classify(s.children, revision, released=gone)


# -- named guards ----------------------------------------------------------------------------------------


def being_deleted(s: Snapshot) -> bool:
    return bool(s.meta.get("deletionTimestamp"))


def has_finalizer(s: Snapshot) -> bool:
    return FINALIZER in (s.meta.get("finalizers") or ())


def revision_pending(s: Snapshot) -> bool:
    """C3: the ARS published a runner spec this set has not cleaned up for yet."""
    return spec_revision(s) > applied_revision(s)


def proxy_configured(s: Snapshot) -> bool:
    return isinstance(runner_spec(s).get("proxy"), Mapping)


def scaling_allowed(s: Snapshot) -> bool:
    """Step 9: a new listener patch, or patch id 0 ("force the state")."""
    patch_id = as_int(ers_spec(s.spec).get("patchID"))
    return patch_id == 0 or patch_id != runners_of(s).latest_patch_id


def has_current_outdated(s: Snapshot) -> bool:
    """A runner built at or after the applied revision reported Outdated (stale ones never count)."""
    return bool(runners_of(s).outdated)


def outdated_at_target_revision(s: Snapshot) -> bool:
    """The same question, asked against the revision being applied (C4: the phase moves both ways)."""
    return bool(runners_of(s, target_revision(s)).outdated)


# -- the phase table -------------------------------------------------------------------------------------

_ANY = (ErsPhase.NONE, ErsPhase.RUNNING, ErsPhase.OUTDATED)

ROWS = (
    tables.Row(
        Trigger.UPDATE_STATUS,
        (ErsPhase.NONE, ErsPhase.RUNNING),
        ErsPhase.OUTDATED,
        "a runner built from the current runner spec exited as outdated",
        (has_current_outdated,),
    ),
    tables.Row(Trigger.UPDATE_STATUS, (ErsPhase.NONE,), ErsPhase.RUNNING, "first status update"),
    tables.Row(
        Trigger.APPLY_REVISION,
        _ANY,
        ErsPhase.OUTDATED,
        "revision applied; a runner built at or after it is still outdated",
        (outdated_at_target_revision,),
    ),
    tables.Row(Trigger.APPLY_REVISION, _ANY, ErsPhase.RUNNING, "revision applied; no runner rejects it"),
)

MACHINE = tables.PhaseMachine("EphemeralRunnerSet", ErsPhase, ROWS)


def _fire(trigger: Trigger, s: Snapshot, applied: int) -> Transition | None:
    taken = MACHINE.fire(trigger, current_phase(s).value, s)
    if taken is None:
        return None
    return replace(
        taken,
        trigger=trigger.value,
        revisions={"actionableRevision": spec_revision(s), "appliedActionableRevision": applied},
    )


# -- decide ----------------------------------------------------------------------------------------------


@with_phase_events
def decide(s: Snapshot) -> Decision:
    if s.obj is None:
        return Decision(s.subject, note="gone")
    return _recheck_busy(s, _step(s))


def _step(s: Snapshot) -> Decision:
    for step in (_deletion, _finalizer, _revision, _parked):
        decision = step(s)
        if decision is not None:
            return decision
    return _running(s)


def _recheck_busy(s: Snapshot, decision: Decision) -> Decision:
    """Come back when the first JobStillRunning window of a runner ends, so it is asked again."""
    waits = [left for r in s.children if (left := busy_for(s, r)) > 0]
    if not waits or any(isinstance(e, effects.RequeueAfter) for e in decision.effects):
        return decision
    requeue = effects.RequeueAfter(s.subject, min(waits))
    return replace(decision, effects=(*decision.effects, requeue))


def _deletion(s: Snapshot) -> Decision | None:
    if not being_deleted(s):
        return None
    if not has_finalizer(s):
        return Decision(s.subject, note="step 1: being deleted, finalizer already removed")
    if s.children:
        work = [_without_credentials(s, effect) for effect in _cleanup(s, runners_of(s))]
        return Decision(s.subject, effects=tuple(work), note=f"step 1: waiting for {len(s.children)} runners")
    secret = s.get(PROXY_SECRET)
    if proxy_configured(s) and secret is not None:
        ref = ObjectRef("Secret", s.subject.namespace, _proxy_secret_name(s))
        return Decision(
            s.subject,
            effects=(
                effects.DeleteObject(ref, uid=str((secret.get("metadata") or {}).get("uid") or "")),
                effects.RequeueAfter(s.subject, PROXY_REQUEUE_SECONDS),
            ),
            note="step 1: deleting the proxy secret",
        )
    finalizers = [f for f in s.meta.get("finalizers") or () if f != FINALIZER]
    return Decision(
        s.subject, effects=(_metadata_patch(s, finalizers),), note="step 1: runners gone, finalizer removed"
    )


def _finalizer(s: Snapshot) -> Decision | None:
    if has_finalizer(s):
        return None
    finalizers = [*(s.meta.get("finalizers") or ()), FINALIZER]
    return Decision(s.subject, effects=(_metadata_patch(s, finalizers),), note="step 2: finalizer added")


def _revision(s: Snapshot) -> Decision | None:
    if not revision_pending(s):
        return None
    work = _cleanup(s, runners_of(s))
    if work:
        wanted = _conditions(s, current_phase(s), None, applied_revision(s))
        status = _status_patch(s, {}, runners_of(s), lock=False, wanted=wanted)
        return Decision(
            s.subject,
            effects=(*work, *((status,) if status is not None else ())),
            note=f"step 3: cleaning up before applying revision {spec_revision(s)}",
        )
    target = target_revision(s)
    taken = _fire(Trigger.APPLY_REVISION, s, target)
    desired: dict[str, Any] = {"appliedActionableRevision": target}
    if taken is not None:
        desired["phase"] = str(taken.to)
    wanted = _conditions(s, ErsPhase(taken.to) if taken is not None else current_phase(s), taken, target)
    status = _status_patch(s, desired, runners_of(s, target), lock=True, wanted=wanted)
    proxy = [_write_proxy_secret(s)] if proxy_configured(s) else []
    return Decision(
        s.subject,
        transitions=(taken,) if taken is not None else (),
        effects=(*proxy, *((status,) if status is not None else ())),
        note=f"step 3: revision {target} applied",
    )


def _parked(s: Snapshot) -> Decision | None:
    if current_phase(s) is not ErsPhase.OUTDATED:
        return None
    by_state = runners_of(s)
    work = _cleanup(s, by_state)
    wanted = _conditions(s, ErsPhase.OUTDATED, None, applied_revision(s))
    status = _status_patch(s, {}, by_state, lock=False, wanted=wanted)
    return Decision(
        s.subject,
        effects=(*work, *((status,) if status is not None else ())),
        note="step 4: Outdated, releasing runners without a job",
    )


def _running(s: Snapshot) -> Decision:
    head: list[Effect] = []
    if proxy_configured(s):
        secret = s.get(PROXY_SECRET)
        if secret is None:
            head.append(_write_proxy_secret(s))
        elif not _proxy_labels_match(s, secret):
            return Decision(
                s.subject,
                effects=(_write_proxy_secret(s), effects.RequeueAfter(s.subject, PROXY_REQUEUE_SECONDS)),
                note="step 5: proxy secret updated",
            )
    by_state = runners_of(s)
    if by_state.stale_outdated:
        head += [_delete(s, r) for r in by_state.stale_outdated]
        return _with_status(s, by_state, head, [], "step 8: deleting stale outdated runners")
    if not scaling_allowed(s):
        return _with_status(s, by_state, head, [], "step 9: no new patch")
    scaled, note, problem = _scale(s, by_state)
    finished = [_delete(s, r) for r in by_state.finished]
    return _with_status(s, by_state, [*head, *scaled], finished, note, problem)


def _with_status(
    s: Snapshot,
    by_state: RunnersByState,
    before: list[Effect],
    after: list[Effect],
    note: str,
    problem: tuple[str, str] | None = None,
) -> Decision:
    """Step 10, ``updateStatus``: counters and phase, written only when something differs; ``problem``
    (reason, message) makes ``Ready`` False, with a Warning Event the first time it says so."""
    taken = _fire(Trigger.UPDATE_STATUS, s, applied_revision(s))
    phase = ErsPhase(taken.to) if taken is not None else current_phase(s)
    desired = {
        "currentReplicas": by_state.scale_total,
        "pendingEphemeralRunners": len(by_state.pending),
        "runningEphemeralRunners": len(by_state.running),
        "failedEphemeralRunners": len(by_state.failed),
        "phase": str(phase),
    }
    wanted = _conditions(s, phase, taken, applied_revision(s), problem)
    status = _status_patch(s, desired, by_state, lock=False, wanted=wanted)
    warning = readycondition.warning(s, wanted[0]) if problem is not None else None
    return Decision(
        s.subject,
        transitions=(taken,) if taken is not None else (),
        effects=(
            *before,
            *((status,) if status is not None else ()),
            *after,
            *((warning,) if warning is not None else ()),
        ),
        note=note,
    )


def _scale(s: Snapshot, by_state: RunnersByState) -> tuple[list[Effect], str, tuple[str, str] | None]:
    """Step 9: the runners to create or release, the note, and a refused runner create (``refusals``)."""
    replicas = as_int(ers_spec(s.spec).get("replicas"))
    total = by_state.scale_total
    if total < replicas:
        if by_state.outdated:
            # §8 item 12, not ported: a runner that rejects the current spec is not replaced.
            held = f"step 9: scale-up held, {len(by_state.outdated)} runners reject the current spec"
            return [], held, None
        assert s.obj is not None
        taken = {runners.name_of(r) for r in s.children}
        proxy_name = _proxy_secret_name(s) if proxy_configured(s) else ""
        created: list[Effect] = [
            effects.CreateObject(
                ObjectRef(runners.RUNNER_KIND, s.subject.namespace, name),
                runners.new_runner(
                    s.obj,
                    name,
                    proxy_secret_name=proxy_name,
                    exclude_label_prefixes=s.settings.exclude_label_prefixes,
                ),
            )
            for name in runners.runner_names(s.obj, replicas - total, taken)
        ]
        # Runner names are a function of the set's uid and generation: the same runners are asked again
        # until the set's spec changes, so a refused one is found under its create's key.
        refusal = refusals.first_of(s, *created)
        if refusal is None:
            return created, f"step 9: creating {len(created)} runners", None
        problem = (RUNNER_REJECTED, refusal.message)
        wait = refusals.retry_in(s, refusal, RUNNER_REJECTED)
        if wait > 0:
            return (
                [effects.RequeueAfter(s.subject, wait)],
                f"step 9: runner refused, again in {wait:g}s",
                problem,
            )
        return created, f"step 9: creating {len(created)} runners, one was refused", problem
    if as_int(ers_spec(s.spec).get("patchID")) == 0 and total > replicas:
        chosen = _idle_releases(s, by_state, total - replicas)
        return chosen, f"step 9: releasing {len(chosen)} of {total - replicas} surplus runners", None
    return [], "step 9: at scale", None


def _idle_releases(s: Snapshot, by_state: RunnersByState, count: int) -> list[Effect]:
    """``deleteIdleEphemeralRunners``: pending oldest first, then running oldest first; unregistered and
    busy runners are skipped. A JobStillRunning answer makes a later decision pick the next one.

    [R] Pinned at zero (the scale set's drain before it publishes a runner spec, or its park), a pending
    runner that never registered is released too, as the cleanup releases it: one whose JIT config keeps
    failing never registers, so the drain waited on it forever, and with it the runner-spec change that
    would fix it. Without a runner id it cannot be running a job; it is deleted without a RemoveRunner
    (``_release``).
    """
    pinned = as_int(ers_spec(s.spec).get("replicas")) == 0
    candidates = [(r, True) for r in by_state.pending] + [(r, False) for r in by_state.running]
    chosen: list[Effect] = []
    for runner, pending in candidates:
        if len(chosen) == count:
            break
        if runners.runner_id(runner) == 0:
            if pinned and pending:
                chosen.append(_release(s, runner))
            continue
        if runners.has_job(runner) or busy(s, runner):
            continue
        chosen.append(_release(s, runner))
    return chosen


def _without_credentials(s: Snapshot, effect: Effect) -> Effect:
    """While the set is deleted, a release whose last try found the config Secret gone becomes a plain
    delete: nothing could unregister the runner any more, and the deletion must not wait for a Secret
    nobody may create again (the runner says what it leaves registered)."""
    if not isinstance(effect, effects.ReleaseRunner):
        return effect
    body = s.results.get(effect.key)
    if body is None or not EffectResult.from_body(body).failed_with(outcomes.Failure.CONFIG_SECRET_MISSING):
        return effect
    return effects.DeleteObject(effect.target, uid=effect.uid)


def _cleanup(s: Snapshot, by_state: RunnersByState) -> list[Effect]:
    """``cleanUpEphemeralRunners``: what is left to do. Empty means done: runners with a job are kept."""
    work = [_delete(s, r) for r in by_state.terminated()]
    work += [_release(s, r) for r in by_state.pending if not busy(s, r)]
    work += [_release(s, r) for r in by_state.running if not (runners.has_job(r) or busy(s, r))]
    return work


# -- effects ---------------------------------------------------------------------------------------------


def _delete(s: Snapshot, runner: JsonObject) -> Effect:
    return effects.DeleteObject(runner_ref(s, runner), uid=runners.uid_of(runner))


def _release(s: Snapshot, runner: JsonObject) -> Effect:
    rid = runners.runner_id(runner)
    if rid == 0:
        return _delete(s, runner)  # never registered: no ``DELETE .../agents/0`` (§8 item 7)
    return effects.ReleaseRunner(
        subject=s.subject,
        target=runner_ref(s, runner),
        uid=runners.uid_of(runner),
        scope=_scope(s),
        runner_id=rid,
    )


def _scope(s: Snapshot) -> effects.ActionsScope:
    spec = runner_spec(s)
    proxy, tls = spec.get("proxy"), spec.get("githubServerTLS")
    return effects.ActionsScope(
        config_url=str(spec.get("githubConfigUrl") or ""),
        namespace=s.subject.namespace,
        secret_name=str(spec.get("githubConfigSecret") or ""),
        proxy=proxy if isinstance(proxy, Mapping) else {},
        tls=tls if isinstance(tls, Mapping) else {},
    )


def _metadata_patch(s: Snapshot, finalizers: list[Any]) -> Effect:
    return effects.MergePatch(
        s.subject,
        {"metadata": {"finalizers": finalizers}},
        resource_version=str(s.meta.get("resourceVersion") or ""),
    )


def _conditions(
    s: Snapshot,
    phase: ErsPhase,
    taken: Transition | None,
    applied: int,
    problem: tuple[str, str] | None = None,
) -> list[Condition]:
    """The conditions of a pass that ends in ``phase`` with ``applied`` as the applied revision, ``Ready``
    first; ``problem`` is a refused runner create (``refusals``), which outranks refused pods."""
    spec = spec_revision(s)
    # Refused pods of a runner spec being replaced say nothing about the one in force.
    refused = pods_refused(s, applied) if applied >= spec else None
    ready = readycondition.ready(
        s,
        phase.value,
        working=ErsPhase.RUNNING.value,
        transition=taken,
        message=READY_MESSAGES[phase],
        problem=problem or refused,
    )
    if applied >= spec:
        message = f"Runner spec revision {applied} is applied (actionableRevision {spec})"
        return [ready, Condition(REVISION_APPLIED, True, "Applied", message)]
    message = (
        f"Cleaning up runners of the old runner spec before applying actionableRevision {spec} "
        f"(appliedActionableRevision {applied})"
    )
    return [ready, Condition(REVISION_APPLIED, False, "RevisionPending", message)]


def pods_refused(s: Snapshot, applied: int) -> tuple[str, str] | None:
    """(reason, message) when a runner of revision ``applied``, not being deleted, failed because the API
    server refused its pod."""
    refused = sorted(
        (
            r
            for r in s.children
            if runners.phase(r) is ErPhase.FAILED
            and section(r, "status").get("reason") == REASON_INVALID_POD
            and runners.revision(r) == applied
            and not runners.is_deleting(r)
        ),
        key=runners.name_of,
    )
    if not refused:
        return None
    verdict = _REFUSED_PREFIX.sub("", str(section(refused[0], "status").get("message") or ""), count=1)
    message = f"the API server refuses the runner pods: {verdict or 'no reason given'}; fix the pod template"
    return PODS_REFUSED, readycondition.one_line(message)


def _status_patch(
    s: Snapshot,
    desired: Mapping[str, Any],
    by_state: RunnersByState,
    *,
    lock: bool,
    wanted: Sequence[Condition],
) -> Effect | None:
    """A status merge patch of the fields that differ and of the conditions; None when nothing does.

    ``currentReplicas`` is required by the CRD once a status exists, so a first write always carries it.
    """
    observed = s.status
    changed = {k: v for k, v in desired.items() if k not in observed or observed[k] != v}
    changed |= readycondition.status_patch(s, wanted)
    if not changed:
        return None
    if "currentReplicas" not in observed:
        changed.setdefault("currentReplicas", by_state.scale_total)
    return effects.MergePatch(
        s.subject,
        {"status": changed},
        subresource="status",
        resource_version=str(s.meta.get("resourceVersion") or "") if lock else "",
    )


def _proxy_secret_name(s: Snapshot) -> str:
    return naming.runner_set_proxy_secret_name(s.subject.name, s.subject.namespace)


def _proxy_labels(s: Snapshot) -> dict[str, str]:
    labels = s.meta.get("labels") or {}
    return {
        key: str(labels.get(key) or "")
        for key in (naming.LABEL_SCALE_SET_NAME, naming.LABEL_SCALE_SET_NAMESPACE)
    }


def _proxy_labels_match(s: Snapshot, secret: JsonObject) -> bool:
    observed = (secret.get("metadata") or {}).get("labels") or {}
    return all(observed.get(k) == v for k, v in _proxy_labels(s).items())


def _write_proxy_secret(s: Snapshot) -> Effect:
    assert s.obj is not None
    return effects.WriteProxySecret(
        target=ObjectRef("Secret", s.subject.namespace, _proxy_secret_name(s)),
        proxy=runner_spec(s).get("proxy") or {},
        owner=runners.owner_reference(s.obj, runners.SET_KIND),
        metadata={"labels": _proxy_labels(s)},
    )


def _proxy_secret_at(ref: ObjectRef, obj: JsonObject | None) -> declaring.NameRef:
    return ref.namespace, naming.runner_set_proxy_secret_name(ref.name, ref.namespace)


# What the EphemeralRunnerSet reads and what wakes it: its runners (as ``children``) and its proxy Secret.
DECLARATION = declaring.Declaration(
    kind=kinds.ERS,
    decide=decide,
    owns=(declaring.Owns(kinds.ER, predicates.ers_from_runner), declaring.Owns("Secret")),
    related=(declaring.Related(PROXY_SECRET, declaring.Named("Secret", _proxy_secret_at)),),
    children=kinds.ER,
)
