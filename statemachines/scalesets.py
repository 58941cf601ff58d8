"""The Actions scale set behind an AutoscalingRunnerSet: find or create it, keep its runner group and name
in sync, delete it (spec §2.1 steps 6, 7, 8 and 1.4).

**One Actions call per pass.** Upstream makes several calls in one reconcile (GetRunnerGroupByName →
GetRunnerScaleSet → CreateRunnerScaleSet → patch the ARS). A decision cannot wait for an answer, so
each function here walks its chain over ``Snapshot.results`` and returns the first call that has no
answer yet; once every call has answered, it returns the ARS patch built from the answers. Each call
is therefore journaled as its own effect with its own result, and a replay reads the same answers.

Contracts this relies on (the executor and the snapshot builder keep them):

* Answers are read with ``outcomes.of`` (the shape is documented there). The facts read here:
  ``runnerGroup`` (``{"id", "name"}``) from GetRunnerGroupByName, and ``scaleSet`` (the service's
  scale set JSON: ``id``, ``name``, ``runnerGroupId``, ``runnerGroupName``, ...; ``null`` when
  GetRunnerScaleSet found none) from GetRunnerScaleSet, CreateRunnerScaleSet and UpdateRunnerScaleSet.
  A failed call counts as unanswered: the next decision asks again (with a Warning event saying why)
  and the executor paces the retries (per-key backoff, as controller-runtime's rate limiter paces a
  reconcile that returned an error). A failure that says the input is bad (a missing or incomplete
  config Secret, rejected credentials, an unusable config URL: ``arsconditions.call_problem``) is
  returned as the step's ``problem`` instead of a Warning; the ARS machine reports it once, as its
  ``ConfigurationValid`` condition and an Event. A call asked again while its first ask is still in
  flight has the same key; the executor performs it once.
* Every call carries ``epoch = "<uid>/<generation>"`` of the ARS, which is part of its key. An answer
  given for an older generation (or an earlier ARS of the same name) is never read as today's: a
  runner group edited A → B → A asks the service again instead of trusting the first answer. Once a
  scale set was found gone (``verify``), the epoch also names the id that went (``ANNOTATION_GONE``), so
  the GetRunnerScaleSet that found the old set is asked again rather than read again.
* Beyond upstream, ``verify`` asks GetRunnerScaleSetById when the listener reports that its pod failed
  (``since``: when its ``Ready`` went False): the scale set may have been deleted in GitHub, and nothing
  else would notice (upstream's listener crash-loops on RunnerScaleSetNotFound for ever). Gone (404), the
  id annotation is dropped in favour of ``ANNOTATION_GONE`` with a Warning Event, and step 6 registers
  the scale set again; a failure that says the input is bad (the vault or the Secret no longer gives
  usable credentials) is reported as the step's problem; any other answer lets the pass go on.
* CreateRunnerScaleSet treats "already exists" as success and answers with the existing set (as
  ``CreateObject`` does for AlreadyExists), so a create re-executed after a crash converges.
* A DeleteRunnerScaleSet that fails with ``NotFound`` counts as done: the set is gone either way. One
  that fails with ``ConfigSecretMissing`` (the Secret was deleted before the scale set) ends the attempt:
  the id is dropped with a Warning ``ScaleSetLeftRegistered`` Event naming the set left in GitHub, so the
  deletion finishes rather than waiting for a Secret nobody may create again.
* The executor sets the Actions client's SystemInfo ``scale_set_id`` after a create or find (§2.1 step
  6.6); it is client state, not a decision.

Call arguments (``ActionsCall.args``): GetRunnerGroupByName ``{name}``; GetRunnerScaleSet ``{runnerGroupId,
name}``; GetRunnerScaleSetById ``{scaleSetId}``; CreateRunnerScaleSet ``{name, runnerGroupId, labels: [label
names], disableUpdate}`` (every label of type System); UpdateRunnerScaleSet ``{scaleSetId, runnerGroupId}`` or
``{scaleSetId, name}``; DeleteRunnerScaleSet ``{scaleSetId}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statemachines import arsconditions, desired, naming, outcomes
from statemachines.arsconditions import Problem
from statemachines.effects import ActionsCall, ActionsOp, ActionsScope, Effect, EmitEvent, MergePatch
from statemachines.jsonvalues import JsonObject, as_mapping, parse_int
from statemachines.objects import ars_spec
from statemachines.snapshots import Snapshot

DEFAULT_RUNNER_GROUP_ID = 1
# The id of the scale set last found gone from the Actions service (``verify``).
ANNOTATION_GONE = naming.ARCSM_PREFIX + "scale-set-gone"
SCALE_SET_GONE = "ScaleSetGone"
# A deleted scale set whose Actions scale set could not be deleted (its config Secret is gone).
SCALE_SET_LEFT_REGISTERED = "ScaleSetLeftRegistered"


@dataclass(frozen=True)
class Step:
    """What a step of the reconcile asks for, and why the pass ends there."""

    effects: tuple[Effect, ...]
    note: str
    # Bad input the step found (the call that revealed it is asked again).
    problem: Problem | None = None


@dataclass(frozen=True)
class _Answer:
    value: Any
    ask: Step | None  # the call still to make: no answer yet, or the last one failed


def scope(s: Snapshot) -> ActionsScope:
    """The Actions client of the ARS: its config URL and credentials, proxy, TLS and vault (§2.0)."""
    spec = ars_spec(s.spec)
    return ActionsScope(
        config_url=str(spec.get("githubConfigUrl") or ""),
        namespace=s.subject.namespace,
        secret_name=str(spec.get("githubConfigSecret") or ""),
        proxy=as_mapping(spec.get("proxy")),
        tls=as_mapping(spec.get("githubServerTLS")),
        vault=as_mapping(spec.get("vaultConfig")),
    )


def _call(s: Snapshot, op: ActionsOp, *, since: str = "", **args: Any) -> ActionsCall:
    epoch = f"{s.meta.get('uid', '')}/{parse_int(s.meta.get('generation'))}"
    gone = as_mapping(s.meta.get("annotations")).get(ANNOTATION_GONE)
    epoch += f"/after-{gone}" if gone else ""
    epoch += f"/since-{since}" if since else ""
    return ActionsCall(subject=s.subject, scope=scope(s), op=op, args=args, epoch=epoch)


def _answer(s: Snapshot, call: ActionsCall, fact: str = "") -> _Answer:
    """The ``fact`` ``call`` answered with, or the call to make when it has not answered (or failed)."""
    outcome = outcomes.of(s, call)
    if outcome is None:
        return _Answer(None, Step((call,), f"asked the Actions service: {call.op}"))
    if not outcome.ok:
        detail = f"{outcome.error}: {outcome.message}" if outcome.message else outcome.error
        problem = arsconditions.call_problem(s, outcome.error, outcome.message)
        if problem is not None:
            return _Answer(None, Step((call,), f"{call.op} failed: {problem.reason}; asking again", problem))
        warning = _warning(s, "ActionsCallFailed", f"{call.op} failed ({detail}); retrying")
        return _Answer(None, Step((call, warning), f"{call.op} failed ({detail}); asking again"))
    return _Answer(outcome.facts.get(fact) if fact else None, None)


def _group_id(s: Snapshot) -> _Answer:
    """Group 1 unless ``spec.runnerGroup`` names one; then GetRunnerGroupByName's id."""
    group = str(ars_spec(s.spec).get("runnerGroup") or "")
    if not group:
        return _Answer(DEFAULT_RUNNER_GROUP_ID, None)
    found = _answer(s, _call(s, ActionsOp.GET_RUNNER_GROUP_BY_NAME, name=group), "runnerGroup")
    if found.ask is not None:
        return found
    group_id = parse_int(as_mapping(found.value).get("id"))
    if group_id <= 0:
        return _Answer(None, Step((), f"GetRunnerGroupByName({group!r}) answered without an id"))
    return _Answer(group_id, None)


def _labels(name: str, extra: object) -> list[str]:
    """The scale set's labels: its name first, then each extra label not seen yet."""
    labels = [name]
    for label in extra if isinstance(extra, list) else []:
        if isinstance(label, str) and label not in labels:
            labels.append(label)
    return labels


def _annotate(s: Snapshot, scale_set: JsonObject, keys: tuple[str, ...]) -> dict[str, str]:
    values = {
        naming.ANNOTATION_RUNNER_SCALE_SET_ID: str(parse_int(scale_set.get("id"))),
        naming.ANNOTATION_RUNNER_SCALE_SET_NAME: str(scale_set.get("name") or ""),
        naming.ANNOTATION_RUNNER_GROUP_NAME: str(scale_set.get("runnerGroupName") or ""),
    }
    return {key: values[key] for key in keys}


def ensure(s: Snapshot) -> Step:
    """Step 6: find the scale set by group and name, create it when missing, record it on the ARS."""
    name = str(ars_spec(s.spec).get("runnerScaleSetName") or s.meta.get("name") or "")
    try:
        url_labels = naming.url_labels(str(ars_spec(s.spec).get("githubConfigUrl") or ""))
    except naming.InvalidConfigUrl as exc:
        return Step((_warning(s, "InvalidConfigUrl", str(exc)),), f"no scale set: {exc}")
    group = _group_id(s)
    if group.ask is not None:
        return group.ask
    get = _call(s, ActionsOp.GET_RUNNER_SCALE_SET, runnerGroupId=group.value, name=name)
    found = _answer(s, get, "scaleSet")
    if found.ask is not None:
        return found.ask
    scale_set = found.value
    if not isinstance(scale_set, Mapping):
        labels = _labels(name, ars_spec(s.spec).get("runnerScaleSetLabels"))
        create = _call(
            s,
            ActionsOp.CREATE_RUNNER_SCALE_SET,
            name=name,
            runnerGroupId=group.value,
            labels=labels,
            disableUpdate=True,
        )
        created = _answer(s, create, "scaleSet")
        if created.ask is not None:
            return created.ask
        scale_set = as_mapping(created.value)
    if parse_int(scale_set.get("id")) <= 0:
        return Step((), "the Actions service answered with a scale set without an id")
    keys = (
        naming.ANNOTATION_RUNNER_SCALE_SET_NAME,
        naming.ANNOTATION_RUNNER_SCALE_SET_ID,
        naming.ANNOTATION_RUNNER_GROUP_NAME,
    )
    patch: dict[str, Any] = {"metadata": {"annotations": _annotate(s, scale_set, keys), "labels": url_labels}}
    if not ars_spec(s.spec).get("runnerScaleSetName"):
        patch["spec"] = {"runnerScaleSetName": name}
    return Step((MergePatch(s.subject, patch),), f"scale set {scale_set.get('id')} recorded")


def _needs_sync(s: Snapshot, annotation: str, wanted: str) -> bool:
    annotations = as_mapping(s.meta.get("annotations"))
    if annotation not in annotations:
        return True
    return bool(wanted) and wanted.lower() != str(annotations[annotation]).lower()


def sync_group(s: Snapshot) -> Step | None:
    """Step 7: move the scale set to ``spec.runnerGroup``; None when it is already there.

    Clearing ``spec.runnerGroup`` does not move the set back to the default group (upstream, §8 item 11).
    """
    if not _needs_sync(
        s, naming.ANNOTATION_RUNNER_GROUP_NAME, str(ars_spec(s.spec).get("runnerGroup") or "")
    ):
        return None
    group = _group_id(s)
    if group.ask is not None:
        return group.ask
    scale_set_id = desired.scale_set_id(s.obj or {})
    update = _call(s, ActionsOp.UPDATE_RUNNER_SCALE_SET, scaleSetId=scale_set_id, runnerGroupId=group.value)
    updated = _answer(s, update, "scaleSet")
    if updated.ask is not None:
        return updated.ask
    keys = (naming.ANNOTATION_RUNNER_GROUP_NAME, naming.ANNOTATION_RUNNER_SCALE_SET_NAME)
    patch = {"metadata": {"annotations": _annotate(s, as_mapping(updated.value), keys)}}
    return Step((MergePatch(s.subject, patch),), f"scale set moved to runner group {group.value}")


def sync_name(s: Snapshot) -> Step | None:
    """Step 8: rename the scale set to ``spec.runnerScaleSetName``; None when the name is in sync."""
    name = str(ars_spec(s.spec).get("runnerScaleSetName") or "")
    if not _needs_sync(s, naming.ANNOTATION_RUNNER_SCALE_SET_NAME, name):
        return None
    if not name:
        return Step((), "spec.runnerScaleSetName is empty: the scale set keeps its name")
    scale_set_id = desired.scale_set_id(s.obj or {})
    rename = _call(s, ActionsOp.UPDATE_RUNNER_SCALE_SET, scaleSetId=scale_set_id, name=name)
    updated = _answer(s, rename, "scaleSet")
    if updated.ask is not None:
        return updated.ask
    keys = (naming.ANNOTATION_RUNNER_SCALE_SET_NAME,)
    patch = {"metadata": {"annotations": _annotate(s, as_mapping(updated.value), keys)}}
    return Step((MergePatch(s.subject, patch),), f"scale set renamed to {name!r}")


def verify(s: Snapshot, since: str) -> Step | None:
    """Beyond upstream: whether the recorded scale set still exists, asked once per listener failure
    (``since``); None when it does, or when the answer says nothing (a failed call: the pass goes on),
    unless the failure says the input is bad (``arsconditions.call_problem``): that is the step's problem."""
    scale_set_id = desired.scale_set_id(s.obj or {})
    if scale_set_id is None or scale_set_id <= 0:
        return None
    call = _call(s, ActionsOp.GET_RUNNER_SCALE_SET_BY_ID, since=since, scaleSetId=scale_set_id)
    outcome = outcomes.of(s, call)
    if outcome is None:
        return Step((call,), f"the listener failed: asked whether scale set {scale_set_id} still exists")
    if not outcome.ok:
        # The listener failed, and so did the call: input a user must fix (credentials the vault no
        # longer gives, a Secret gone) is reported as any call's is; anything else lets the pass go on.
        problem = arsconditions.call_problem(s, outcome.error, outcome.message)
        if problem is None:
            return None
        return Step((call,), f"{call.op} failed: {problem.reason}; asking again", problem)
    if isinstance(outcome.facts.get("scaleSet"), Mapping):
        return None
    name = str(as_mapping(s.meta.get("annotations")).get(naming.ANNOTATION_RUNNER_SCALE_SET_NAME) or "")
    message = (
        f"The Actions scale set {scale_set_id} ({name!r}) no longer exists in the Actions service: it was "
        "deleted outside arcsm; registering the scale set again"
    )
    annotations = {naming.ANNOTATION_RUNNER_SCALE_SET_ID: None, ANNOTATION_GONE: str(scale_set_id)}
    patch = MergePatch(s.subject, {"metadata": {"annotations": annotations}})
    return Step((patch, _warning(s, SCALE_SET_GONE, message)), f"scale set {scale_set_id} is gone")


def delete(s: Snapshot) -> Step | None:
    """Step 1.4: DeleteRunnerScaleSet, then drop the id annotation; None when there is nothing to delete.

    An id that is missing, unparsable or not positive means there is nothing to delete (upstream skips
    the first two; a set with id 0 cannot exist).
    """
    scale_set_id = desired.scale_set_id(s.obj or {})
    if scale_set_id is None or scale_set_id <= 0:
        return None
    call = _call(s, ActionsOp.DELETE_RUNNER_SCALE_SET, scaleSetId=scale_set_id)
    outcome = outcomes.of(s, call)
    patch = {"metadata": {"annotations": {naming.ANNOTATION_RUNNER_SCALE_SET_ID: None}}}
    if outcome is not None and outcome.failed_with(outcomes.Failure.CONFIG_SECRET_MISSING):
        # Nothing in the cluster can delete it any more, and waiting would hold the deletion for good:
        # the scale set goes, saying what it left behind and how to remove it.
        secret = f"{s.subject.namespace}/{ars_spec(s.spec).get('githubConfigSecret') or ''}"
        message = (
            f"The Actions scale set {scale_set_id} stays registered in GitHub: the config Secret {secret} "
            "is gone, so it cannot be deleted from here; delete it in GitHub's settings (Actions, runner "
            "groups), or recreate the Secret before deleting a scale set"
        )
        left = _warning(s, SCALE_SET_LEFT_REGISTERED, message)
        return Step((MergePatch(s.subject, patch), left), f"scale set {scale_set_id} left registered")
    if outcome is None or not (outcome.ok or outcome.failed_with(outcomes.Failure.NOT_FOUND)):
        return _answer(s, call).ask  # never None here: the call has not answered, or failed
    return Step((MergePatch(s.subject, patch),), f"scale set {scale_set_id} deleted")


def _warning(s: Snapshot, reason: str, message: str) -> EmitEvent:
    return EmitEvent(s.subject, str(s.meta.get("uid", "")), "Warning", reason, message)
