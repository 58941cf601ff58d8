"""The AutoscalingListener machine: one pass of upstream's reconcile as a pure decision (spec §2.4, §3.4).

``decide(snapshot)`` walks §2.4 in order and the first step that ends the pass ends it: deletion (pod,
config Secret, proxy Secret, RoleBinding, Role, ServiceAccount, one at a time, 1 s apart, then the
finalizer); the finalizer; the ARS gone → delete the listener; the ServiceAccount (create → wait for its
event; drift → patch and requeue); the Role, the RoleBinding, the proxy Secret and the config Secret
(create or update → requeue); the pod (missing → create; integrity hash changed → delete; metadata
drift → patch); the pod's status (evicted or the ``listener`` container terminated → delete it; running →
Running).

The listener has no phase field, so its implicit state (§3.4) and the pod's restart backoff are kept as
annotations on the listener's ServiceAccount (``ANNOTATION_STATE``, ``listenerbackoff.ANNOTATION_*``):
the AL's own annotations are compared by the ARS, and its status has no fields. Transitions over
``ListenerState`` (the table ``ROWS``, drawn by ``arcsm graph AutoscalingListener`` in docs/lifecycles.md)
are journaled with each decision like any phase change.

Beyond upstream, a listener pod that keeps failing is recreated with an exponential backoff
(``listenerbackoff``): at once after a first failure, then 5 s doubling to 5 min, counted again from 1
after a stable run or a configuration change.

The listener's one condition, ``Ready`` (``status.conditions``, the only status it has), is True while the
state is Running. A pass states it when it records a transition, when it ends on a listener pod that is
there and not going away, or when it finds a problem: then the reason says which (``ListenerBackOff`` with
the next attempt in the message while the pod waits under the backoff, ``ListenerPodRejected`` or
``ListenerPodCreateFailed`` when the pod cannot be created, ``ListenerConfigFailed`` when the config Secret
cannot be built, ``ListenerProxySecretFailed`` when the proxy Secret cannot be (its credentials Secret is
missing from the scale set's namespace, say), ``ListenerObjectRejected`` when the API server refuses the
ServiceAccount, Role or RoleBinding as Invalid: that write is asked again after the backoff of ``refusals``,
not every second). Passes that only wait for an object to appear or go state nothing, so the state they read
from a ServiceAccount not yet observed again is never written back. A listener pod that ends is a Warning
Event (``ListenerPodFailed``, or ``ListenerBackOff`` when it waits); a problem is a Warning Event the first
time the condition reports it.

``snapshot.related``: ``"ars"`` the AutoscalingRunnerSet; ``"service_account"``, ``"role"``,
``"role_binding"`` (in the ARS namespace), ``"config_secret"``, ``"proxy_secret"``, ``"pod"`` as observed
(None when absent); optionally ``"credentials_secret"``, the ARS's githubConfigSecret (its
resourceVersion rebuilds the config Secret when the credentials change).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from statemachines import (
    declaring,
    effects,
    kinds,
    listenerbackoff,
    listenerobjects,
    memos,
    naming,
    outcomes,
    pods,
    readycondition,
    refusals,
    semantics,
    tables,
)
from statemachines.decisions import Decision
from statemachines.drafts import Draft
from statemachines.jsonvalues import JsonObject, as_mapping
from statemachines.phaseevents import with_phase_events
from statemachines.phases import ListenerState
from statemachines.snapshots import Snapshot

KIND = "AutoscalingListener"
FINALIZER = "autoscalinglistener.actions.github.com/finalizer"

ARS = "ars"
SERVICE_ACCOUNT = "service_account"
ROLE = "role"
ROLE_BINDING = "role_binding"
CONFIG_SECRET = "config_secret"
PROXY_SECRET = "proxy_secret"
POD = "pod"
CREDENTIALS_SECRET = "credentials_secret"

CLEANUP_SECONDS = 1.0
REQUEUE_SOON = 1.0  # upstream's ``Requeue: true``
RETRY_SECONDS = 5.0
SETTLE_SECONDS = 5.0  # a pod created but not yet observed: wait this long before creating it again

ANNOTATION_STATE = naming.ARCSM_PREFIX + "listener-state"
# The ``Ready`` reasons of a listener whose objects the API server refuses (``refusals``).
OBJECT_REJECTED = "ListenerObjectRejected"
POD_REJECTED = "ListenerPodRejected"
REJECTED_REASONS = (OBJECT_REJECTED, POD_REJECTED)
POD_CREATE_FAILED = "ListenerPodCreateFailed"
CONFIG_FAILED = "ListenerConfigFailed"
PROXY_SECRET_FAILED = "ListenerProxySecretFailed"
# The ``Ready`` reasons that say an object of the listener cannot be built: its scale set is not Ready
# while its listener says one of them.
NOT_BUILT_REASONS = (*REJECTED_REASONS, POD_CREATE_FAILED, CONFIG_FAILED, PROXY_SECRET_FAILED)

READY_MESSAGES = {
    ListenerState.NONE: "The listener has not been built yet",
    ListenerState.PENDING: "Building the listener's RBAC, secrets and pod",
    ListenerState.RUNNING: "The listener runs",
    ListenerState.BACKOFF: "The listener pod keeps failing: waiting before recreating it",
}


class Trigger(enum.StrEnum):
    BUILDING = "building"
    POD_RUNNING = "pod_running"
    POD_FAILED = "pod_failed"
    BACKOFF_ELAPSED = "backoff_elapsed"
    POD_REPLACED = "pod_replaced"


# -- reading the snapshot ---------------------------------------------------------------------------------


def _annotations(obj: JsonObject | None) -> JsonObject:
    return as_mapping(as_mapping((obj or {}).get("metadata")).get("annotations"))


def current_state(s: Snapshot) -> ListenerState:
    try:
        return ListenerState(str(_annotations(s.get(SERVICE_ACCOUNT)).get(ANNOTATION_STATE) or ""))
    except ValueError:
        return ListenerState.NONE


def listener_status(pod: JsonObject | None) -> JsonObject | None:
    return pods.container_status(pod, listenerobjects.LISTENER_CONTAINER)


def failure_record(s: Snapshot) -> listenerbackoff.FailureRecord:
    return listenerbackoff.FailureRecord.from_observed(s.get(SERVICE_ACCOUNT))


def failure_streak(s: Snapshot) -> int:
    """The failure count once the observed (ended) pod is counted."""
    return failure_record(s).with_failure(s.get(POD), s.now).count


def pod_ended(pod: JsonObject | None) -> bool:
    """Evicted, or the listener container terminated: the pod will never run the listener again."""
    return pods.reason(pod) == "Evicted" or pods.terminated(listener_status(pod)) is not None


# -- guards and the table --------------------------------------------------------------------------------


def listener_running(s: Snapshot) -> bool:
    return pods.is_running(listener_status(s.get(POD)))


def backoff_needed(s: Snapshot) -> bool:
    return listenerbackoff.delay(failure_streak(s)) > 0


_S = ListenerState
ROWS = (
    tables.Row(Trigger.BUILDING, (_S.NONE,), _S.PENDING, "building the listener's RBAC, secrets and pod"),
    tables.Row(
        Trigger.POD_RUNNING,
        (_S.NONE, _S.PENDING, _S.BACKOFF),
        _S.RUNNING,
        "the listener runs",
        (listener_running,),
    ),
    tables.Row(
        Trigger.POD_FAILED,
        (_S.NONE, _S.PENDING, _S.RUNNING),
        _S.BACKOFF,
        "the listener pod failed again soon after the last failure: waiting before recreating it",
        (backoff_needed,),
    ),
    tables.Row(
        Trigger.POD_FAILED,
        (_S.NONE, _S.PENDING, _S.RUNNING),
        _S.PENDING,
        "the listener pod failed: recreating it",
    ),
    tables.Row(
        Trigger.BACKOFF_ELAPSED, (_S.BACKOFF,), _S.PENDING, "backoff over: recreating the listener pod"
    ),
    tables.Row(
        Trigger.POD_REPLACED,
        (_S.RUNNING,),
        _S.PENDING,
        "the listener pod is being replaced: its configuration changed, or it went away",
    ),
)

MACHINE = tables.PhaseMachine(KIND, ListenerState, ROWS)


# -- one pass ---------------------------------------------------------------------------------------------


@dataclass
class _Pass:
    s: Snapshot
    draft: Draft
    # Whether the pass learned the listener's state (see the module docstring), and what went wrong.
    stated: bool = False
    problem: tuple[str, str] | None = None
    # The failure record this pass wrote, when a pod ended in it.
    record: listenerbackoff.FailureRecord | None = None

    @property
    def al(self) -> JsonObject:
        return self.s.obj or {}

    def end(self, note: str) -> bool:
        self.draft.note = note
        return True

    def requeue(self, seconds: float) -> None:
        self.draft.add(effects.RequeueAfter(self.s.subject, seconds))

    def service_account_ref(self) -> effects.ObjectRef:
        return effects.ObjectRef("ServiceAccount", self.s.subject.namespace, self.s.subject.name)

    def enter(self, trigger: Trigger, **bookkeeping: str) -> None:
        """Fire ``trigger``; record the state it leads to (and ``bookkeeping``) on the ServiceAccount."""
        taken = MACHINE.fire(trigger, current_state(self.s).value, self.s)
        self.draft.record(taken)
        wanted = dict(bookkeeping)
        if taken is not None:
            wanted[ANNOTATION_STATE] = taken.to
        if wanted and self.s.get(SERVICE_ACCOUNT) is not None:
            patch = {"metadata": {"annotations": wanted}}
            self.draft.add(effects.MergePatch(self.service_account_ref(), patch))


@with_phase_events
def decide(snapshot: Snapshot) -> Decision:
    """One reconcile of an AutoscalingListener (see the module docstring)."""
    draft = Draft(snapshot.subject)
    if snapshot.obj is None:
        draft.note = "the listener is gone"
        return draft.decision()
    p = _Pass(snapshot, draft)
    for step in _STEPS:
        if step(p):
            break
    _conditions(p)
    return draft.decision()


def backoff_message(record: listenerbackoff.FailureRecord) -> str:
    wait = listenerbackoff.delay(record.count)
    message = (
        f"The listener pod failed {record.count} times in a row; the next attempt is {wait:g}s after the last"
    )
    if record.at is not None:
        message += f", at {pods.format_time(record.at + timedelta(seconds=wait))}"
    return message


def _conditions(p: _Pass) -> None:
    """``Ready`` into the listener's status, once, at the end of a pass that learned something."""
    taken = p.draft.transitions[-1] if p.draft.transitions else None
    if not (p.stated or taken is not None or p.problem is not None):
        return
    state = ListenerState(taken.to) if taken is not None else current_state(p.s)
    problem = p.problem
    if problem is None and state is ListenerState.BACKOFF:
        problem = ("ListenerBackOff", backoff_message(p.record or failure_record(p.s)))
    ready = readycondition.ready(
        p.s,
        state.value,
        working=ListenerState.RUNNING.value,
        transition=taken,
        message=READY_MESSAGES[state],
        problem=problem,
    )
    if p.problem is not None and (event := readycondition.warning(p.s, ready)) is not None:
        p.draft.add(event)
    patch = readycondition.status_patch(p.s, [ready])
    if patch:
        p.draft.add(effects.MergePatch(p.s.subject, {"status": patch}, subresource="status"))


def _metadata_patch(observed: JsonObject | None, wanted: JsonObject, *, skip: str = "") -> dict[str, Any]:
    """The labels and annotations of ``wanted`` that ``observed`` lacks or holds otherwise (merged, so keys
    only ``observed`` has are kept)."""
    have, want = as_mapping((observed or {}).get("metadata")), as_mapping(wanted.get("metadata"))
    out: dict[str, Any] = {}
    for field in ("labels", "annotations"):
        current = as_mapping(have.get(field))
        changed = {k: v for k, v in as_mapping(want.get(field)).items() if k != skip and current.get(k) != v}
        if changed:
            out[field] = changed
    return {"metadata": out} if out else {}


# 1, 2, 3: deletion, finalizer, the runner set gone


def _cleanup_order(p: _Pass) -> list[tuple[str, effects.ObjectRef]]:
    al, ns, name = p.al, p.s.subject.namespace, p.s.subject.name
    ars_ns = listenerobjects.ars_namespace(al)
    order = [
        (POD, listenerobjects.pod_ref(al)),
        (CONFIG_SECRET, listenerobjects.config_secret_ref(al)),
    ]
    if isinstance(listenerobjects.spec(al).get("proxy"), Mapping):
        order.append((PROXY_SECRET, listenerobjects.proxy_secret_ref(al)))
    order += [
        (ROLE_BINDING, effects.ObjectRef("RoleBinding", ars_ns, name)),
        (ROLE, effects.ObjectRef("Role", ars_ns, name)),
        (SERVICE_ACCOUNT, effects.ObjectRef("ServiceAccount", ns, name)),
    ]
    return order


def _deletion(p: _Pass) -> bool:
    if not pods.is_terminating(p.al):
        return False
    finalizers = list(p.s.meta.get("finalizers") or [])
    if FINALIZER not in finalizers:
        return p.end("deleting: no finalizer of ours left")
    for key, ref in _cleanup_order(p):
        obj = p.s.get(key)
        if obj is None:
            continue
        if not pods.is_terminating(obj):
            p.draft.add(effects.DeleteObject(ref, uid=pods.uid(obj)))
        p.requeue(CLEANUP_SECONDS)
        return p.end(f"deleting: waiting for the {ref.kind} to go")
    p.draft.add(_finalizer_patch(p, [f for f in finalizers if f != FINALIZER]))
    return p.end("deleting: everything cleaned up, finalizer removed")


def _finalizer_patch(p: _Pass, finalizers: list[str]) -> effects.MergePatch:
    version = str(p.s.meta.get("resourceVersion") or "")
    return effects.MergePatch(p.s.subject, {"metadata": {"finalizers": finalizers}}, resource_version=version)


def _finalizer(p: _Pass) -> bool:
    finalizers = list(p.s.meta.get("finalizers") or [])
    if FINALIZER in finalizers:
        return False
    p.draft.add(_finalizer_patch(p, [*finalizers, FINALIZER]))
    return p.end("finalizer added")


def _runner_set_gone(p: _Pass) -> bool:
    if p.s.get(ARS) is not None:
        return False
    p.draft.add(effects.DeleteObject(p.s.subject, uid=str(p.s.meta.get("uid") or "")))
    return p.end("its AutoscalingRunnerSet is gone: deleting the listener")


# 4-6: service account, role, role binding


def _ref_of(body: JsonObject) -> effects.ObjectRef:
    meta = as_mapping(body.get("metadata"))
    return effects.ObjectRef(str(body.get("kind")), str(meta.get("namespace")), str(meta.get("name")))


def _refused(p: _Pass, effect: effects.CreateObject | effects.MergePatch) -> bool:
    """When the API server refused ``effect`` last time (``refusals``): the problem is stated, and True
    (the pass ends, requeued) while the retry waits out its backoff."""
    refusal = refusals.of(p.s, effect)
    if refusal is None:
        return False
    p.problem = (OBJECT_REJECTED, refusal.message)
    wait = refusals.retry_in(p.s, refusal, OBJECT_REJECTED)
    if wait <= 0:
        return False
    p.requeue(wait)
    return p.end(f"{refusal.target.kind} refused: asking again in {wait:g}s")


def _service_account(p: _Pass) -> bool:
    wanted = listenerobjects.service_account(p.al)
    observed = p.s.get(SERVICE_ACCOUNT)
    if observed is None:
        if _refused(p, effects.CreateObject(_ref_of(wanted), wanted)):
            return True
        taken = MACHINE.fire(Trigger.BUILDING, current_state(p.s).value, p.s)
        p.draft.record(taken)
        meta = as_mapping(wanted["metadata"])
        state = {ANNOTATION_STATE: taken.to} if taken is not None else {}
        body = {**wanted, "metadata": {**meta, "annotations": {**meta["annotations"], **state}}}
        p.draft.add(effects.CreateObject(_ref_of(wanted), body))
        return p.end("service account created")
    patch = _metadata_patch(observed, wanted)
    if not patch:
        return False
    update = effects.MergePatch(_ref_of(wanted), patch)
    if _refused(p, update):
        return True
    p.draft.add(update)
    p.requeue(REQUEUE_SOON)
    return p.end("service account metadata updated")


# The observed RBAC rules against the wanted ones (both kept by their objects, so mostly the same pair).
_semantic_equal = memos.ByIdentity(semantics.semantic_equal, listenerobjects.REMEMBERED)


def _rbac(
    key: str, build: Callable[[JsonObject], dict[str, Any]], *, compare: str = ""
) -> Callable[[_Pass], bool]:
    def step(p: _Pass) -> bool:
        wanted = build(p.al)
        observed = p.s.get(key)
        ref = _ref_of(wanted)
        if observed is None:
            create = effects.CreateObject(ref, wanted)
            if _refused(p, create):
                return True
            p.draft.add(create)
            p.requeue(REQUEUE_SOON)
            return p.end(f"{ref.kind} created")
        patch = _metadata_patch(observed, wanted)
        if compare and not _semantic_equal(observed.get(compare), wanted[compare]):
            patch[compare] = wanted[compare]
        if not patch:
            return False
        update = effects.MergePatch(ref, patch)
        if _refused(p, update):
            return True
        p.draft.add(update)
        p.requeue(REQUEUE_SOON)
        return p.end(f"{ref.kind} updated")

    step.__name__ = f"_{key}"
    return step


# 7, 8: the two secrets


def _proxy_secret(p: _Pass) -> bool:
    if not isinstance(listenerobjects.spec(p.al).get("proxy"), Mapping):
        return False
    effect = listenerobjects.proxy_secret(p.al)
    observed = p.s.get(PROXY_SECRET)
    if observed is not None and not _metadata_patch(observed, {"metadata": effect.metadata}):
        return False
    p.draft.add(effect)
    out = outcomes.of(p.s, effect)
    if out is not None and not out.ok:
        # The credentials or URL it is built from are unusable (the scale set's ConfigurationValid
        # names which): said in Ready, and asked again less often than a write that just went out.
        detail = f": {out.message}" if out.message else ""
        message = f"Writing the listener's proxy Secret failed ({out.error}){detail}"
        p.problem = (PROXY_SECRET_FAILED, readycondition.one_line(message))
        p.requeue(RETRY_SECONDS)
        return p.end("proxy secret failed: asking again")
    p.requeue(REQUEUE_SOON)
    return p.end("proxy secret written")


def config_effect(s: Snapshot) -> effects.CreateListenerConfigSecret:
    return listenerobjects.config_secret(s.obj or {}, s.settings, s.get(CREDENTIALS_SECRET))


def _config_secret(p: _Pass) -> bool:
    effect = config_effect(p.s)
    observed = p.s.get(CONFIG_SECRET)
    if observed is None:
        out = outcomes.of(p.s, effect)
        if out is not None and not out.ok:
            detail = f": {out.message}" if out.message else ""
            message = f"Building the listener's config Secret failed ({out.error}){detail}"
            p.problem = (CONFIG_FAILED, readycondition.one_line(message))
        p.draft.add(effect)
        p.requeue(REQUEUE_SOON)
        return p.end("config secret created")
    hash_key = listenerobjects.INTEGRITY_HASH
    if _annotations(observed).get(hash_key) != as_mapping(effect.metadata.get("annotations")).get(hash_key):
        if not pods.is_terminating(observed):
            p.draft.add(effects.DeleteObject(effect.target, uid=pods.uid(observed)))
        p.requeue(REQUEUE_SOON)
        return p.end("the listener's configuration changed: making the config secret again")
    patch = _metadata_patch(observed, {"metadata": effect.metadata}, skip=hash_key)
    if not patch:
        return False
    p.draft.add(effects.MergePatch(effect.target, patch))
    p.requeue(REQUEUE_SOON)
    return p.end("config secret metadata updated")


# 9, 10: the pod


def wanted_pod(s: Snapshot) -> dict[str, Any]:
    al = s.obj or {}
    dependencies = {
        "serviceAccount": _hash_of(listenerobjects.service_account(al)),
        "role": _hash_of(listenerobjects.role(al)),
        "roleBinding": _hash_of(listenerobjects.role_binding(al)),
        "config": _hash_of({"metadata": config_effect(s).metadata}),
        "proxy": str(_annotations(s.get(PROXY_SECRET)).get(listenerobjects.INTEGRITY_HASH) or ""),
    }
    return listenerobjects.listener_pod(al, s.settings, dependencies)


def _hash_of(body: JsonObject) -> str:
    return str(_annotations(body).get(listenerobjects.INTEGRITY_HASH) or "")


def _pod(p: _Pass) -> bool:
    wanted = wanted_pod(p.s)
    observed = p.s.get(POD)
    if observed is None:
        return _create_pod(p, wanted)
    if listenerbackoff.pod_hash(observed) != _hash_of(wanted):
        if pods.is_terminating(observed):
            return p.end("waiting for the old listener pod to go")
        p.draft.add(effects.DeleteObject(_ref_of(wanted), uid=pods.uid(observed)))
        p.enter(Trigger.POD_REPLACED)
        return p.end("the listener's configuration changed: deleting its pod")
    patch = _metadata_patch(observed, wanted)
    if patch:
        p.draft.add(effects.MergePatch(_ref_of(wanted), patch))
        return p.end("listener pod metadata updated")
    return False


def _create_pod(p: _Pass, wanted: dict[str, Any]) -> bool:
    waiting = failure_record(p.s).remaining(_hash_of(wanted), p.s.now)
    if waiting > 0:
        p.stated = True
        p.requeue(waiting)
        return p.end(f"backing off: recreating the listener pod in {waiting:g}s")
    create = effects.CreateObject(_ref_of(wanted), wanted)
    out = outcomes.of(p.s, create)
    unobserved = outcomes.unobserved_for(p.s, create, create.target, SETTLE_SECONDS)
    if unobserved > 0:
        p.requeue(unobserved)
        return p.end("listener pod created: waiting to observe it")
    if out is not None and not out.ok and not out.failed_with(outcomes.Failure.ALREADY_EXISTS):
        rejected = out.failed_with(outcomes.Failure.INVALID) or out.failed_with(outcomes.Failure.FORBIDDEN)
        reason = POD_REJECTED if rejected else POD_CREATE_FAILED
        detail = f": {out.message}" if out.message else ""
        p.problem = (
            reason,
            readycondition.one_line(f"Creating the listener pod failed ({out.error}){detail}"),
        )
    failed = 0.0 if out is None or out.ok else out.remaining(RETRY_SECONDS, p.s.now)
    if (refusal := refusals.of(p.s, create)) is not None:  # refused as built: a growing backoff
        failed = refusals.retry_in(p.s, refusal, POD_REJECTED)
    if failed > 0:
        p.requeue(failed)
        return p.end(
            f"creating the listener pod failed ({out.error if out else ''}): retrying in {failed:g}s"
        )
    p.draft.add(create)
    if current_state(p.s) is ListenerState.BACKOFF:
        p.enter(Trigger.BACKOFF_ELAPSED)
    elif current_state(p.s) is ListenerState.RUNNING:
        p.enter(Trigger.POD_REPLACED)
    return p.end("listener pod created")


def _pod_status(p: _Pass) -> bool:
    pod = p.s.get(POD)
    if pods.is_terminating(pod):
        return p.end("waiting for the listener pod to go")
    if pod_ended(pod):
        return _pod_failed(p)
    p.stated = True
    if listener_status(pod) is None:
        return p.end("waiting for the listener container to report")
    if listener_running(p.s):
        if current_state(p.s) is not ListenerState.RUNNING:
            p.enter(Trigger.POD_RUNNING)
        return p.end("the listener runs")
    return p.end("waiting for the listener container to start")


def _pod_failed(p: _Pass) -> bool:
    pod = p.s.get(POD)
    record = failure_record(p.s).with_failure(pod, p.s.now)
    p.record = record
    delay = listenerbackoff.delay(record.count)
    p.draft.add(effects.DeleteObject(listenerobjects.pod_ref(p.al), uid=pods.uid(pod)))
    p.enter(Trigger.POD_FAILED, **record.as_annotations())
    uid = str(p.s.meta.get("uid") or "")
    if delay <= 0:
        message = f"The listener pod {_ending(pod)}; it is recreated now"
        p.draft.add(effects.EmitEvent(p.s.subject, uid, "Warning", "ListenerPodFailed", message))
        return p.end("the listener pod ended: deleting it to recreate it")
    message = f"The listener pod failed {record.count} times in a row; it is recreated in {delay:g}s"
    p.draft.add(effects.EmitEvent(p.s.subject, uid, "Warning", "ListenerBackOff", message))
    p.requeue(delay)
    return p.end(f"the listener pod ended ({record.count} in a row): recreating it in {delay:g}s")


def _ending(pod: JsonObject | None) -> str:
    """How the listener pod ended, for a user: evicted, or the container's exit code and reason."""
    if pods.reason(pod) == "Evicted":
        return "was evicted"
    ended = pods.terminated(listener_status(pod)) or {}
    reason = f" ({ended['reason']})" if ended.get("reason") else ""
    return f"exited with code {ended.get('exitCode', '?')}{reason}"


_STEPS: tuple[Callable[[_Pass], bool], ...] = (
    _deletion,
    _finalizer,
    _runner_set_gone,
    _service_account,
    _rbac(ROLE, listenerobjects.role, compare="rules"),
    _rbac(ROLE_BINDING, listenerobjects.role_binding),
    _proxy_secret,
    _config_secret,
    _pod,
    _pod_status,
)


def _scale_set_at(ref: effects.ObjectRef, obj: JsonObject | None) -> declaring.NameRef:
    spec = listenerobjects.spec(obj or {})
    return listenerobjects.ars_namespace(obj or {}), str(spec.get("autoscalingRunnerSetName") or "")


def _in_scale_set_namespace(ref: effects.ObjectRef, obj: JsonObject | None) -> declaring.NameRef:
    return listenerobjects.ars_namespace(obj or {}), ref.name


def _config_secret_at(ref: effects.ObjectRef, obj: JsonObject | None) -> declaring.NameRef | None:
    found = listenerobjects.config_secret_ref(obj) if obj is not None else None
    return (found.namespace, found.name) if found is not None else None


def _proxy_secret_at(ref: effects.ObjectRef, obj: JsonObject | None) -> declaring.NameRef | None:
    found = listenerobjects.proxy_secret_ref(obj) if obj is not None else None
    return (found.namespace, found.name) if found is not None else None


def _credentials_at(ref: effects.ObjectRef, obj: JsonObject | None) -> declaring.NameRef | None:
    secret = str(listenerobjects.spec(obj or {}).get("githubConfigSecret") or "")
    return (listenerobjects.ars_namespace(obj or {}), secret) if secret else None


# What the AutoscalingListener reads and what wakes it: its scale set, its ServiceAccount and pod, its Role
# and RoleBinding (in the scale set's namespace, found by their labels), its config, proxy and credentials
# Secrets; a change of the scale set it names wakes it too.
DECLARATION = declaring.Declaration(
    kind=kinds.AL,
    decide=decide,
    owns=(declaring.Owns("Pod"), declaring.Owns("ServiceAccount"), declaring.Owns("Secret")),
    related=(
        declaring.Related(ARS, declaring.Named(kinds.ARS, _scale_set_at)),
        declaring.Related(SERVICE_ACCOUNT, declaring.SameName("ServiceAccount")),
        declaring.Related(ROLE, declaring.Named("Role", _in_scale_set_namespace)),
        declaring.Related(ROLE_BINDING, declaring.Named("RoleBinding", _in_scale_set_namespace)),
        declaring.Related(CONFIG_SECRET, declaring.Named("Secret", _config_secret_at)),
        declaring.Related(PROXY_SECRET, declaring.Named("Secret", _proxy_secret_at)),
        declaring.Related(POD, declaring.SameName("Pod")),
        declaring.Related(CREDENTIALS_SECRET, declaring.Named("Secret", _credentials_at)),
    ),
    watches=(
        declaring.Mapped("Role", listenerobjects.labelled_listener),
        declaring.Mapped("RoleBinding", listenerobjects.labelled_listener),
        declaring.Referred(kinds.ARS, listenerobjects.LISTENERS_BY_SCALE_SET),
        declaring.Referred("Secret", listenerobjects.LISTENERS_BY_CREDENTIALS),
    ),
)
