"""The executors of the Kubernetes effects: create, merge patch, delete, delete by label, emit an Event.

Results (``results`` shapes; a ``KubeError`` raised here becomes ``{"ok": false, "error": REASON}``):

=================  ==================================================================================
effect             result
=================  ==================================================================================
CreateObject       ``{"ok": true}``; AlreadyExists → ``{"ok": true, "alreadyExisted": true}``, except
                   for the kinds in ``ALREADY_EXISTS_REPORTED`` (Pods), whose AlreadyExists stays the
                   error class: the EphemeralRunner machine reads it (spec §2.3 step 8: requeue 5 s),
                   and a pod of that name the decision did not see is most likely its predecessor still
                   terminating, not the pod this create meant
MergePatch         ``{"ok": true}``; sent as ``application/merge-patch+json``, to ``/status`` for a
                   status write, with ``metadata.resourceVersion`` in the body when the effect sets
                   ``resource_version`` (a moved-on object answers Conflict)
DeleteObject       ``{"ok": true}``; NotFound, or a Conflict on the ``uid`` precondition (the object of
                   that name is another one: the one meant is gone) → ``{"ok": true, "alreadyGone":
                   true}``; ``propagation`` as ``propagationPolicy``
DeleteMatching     ``{"ok": true, "deleted": N}`` (one DELETE on the collection with ``labelSelector``)
EmitEvent          ``{"ok": true, "count": N}``: a core/v1 Event named ``<object>.<digest of the effect
                   key and uid>``; a repeat patches ``count``, ``lastTimestamp`` and ``message``
=================  ==================================================================================
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from controller.executor import kubewriting, results
from controller.executor.contexts import Context
from controller.executor.errors import KubeError
from statemachines.effectresults import EffectResult
from statemachines.effects import CreateObject, DeleteMatching, DeleteObject, EmitEvent, MergePatch, ObjectRef

ALREADY_EXISTS: Final = "AlreadyExists"
NOT_FOUND: Final = "NotFound"
CONFLICT: Final = "Conflict"
# Kinds whose AlreadyExists a machine reads as a failure (see the module docstring).
ALREADY_EXISTS_REPORTED: Final = frozenset({"Pod"})
EVENT_MESSAGE_LIMIT: Final = 1024
EVENT_ATTEMPTS: Final = 3
NAME_LIMIT: Final = 253


async def create_object(effect: CreateObject, ctx: Context) -> EffectResult:
    target = effect.target
    meta = {"name": target.name, **dict(effect.body.get("metadata") or {})}
    try:
        await ctx.kube.create(target.kind, target.namespace, {**effect.body, "metadata": meta})
    except KubeError as exc:
        if exc.reason == ALREADY_EXISTS and target.kind not in ALREADY_EXISTS_REPORTED:
            return results.ok(alreadyExisted=True)
        raise
    return results.ok()


async def merge_patch(effect: MergePatch, ctx: Context) -> EffectResult:
    await ctx.kube.merge_patch(
        effect.target, conditional(effect.patch, effect.resource_version), subresource=effect.subresource
    )
    return results.ok()


def conditional(patch: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
    """``patch`` with ``metadata.resourceVersion`` set when ``resource_version`` is."""
    if not resource_version:
        return dict(patch)
    return {**patch, "metadata": {**dict(patch.get("metadata") or {}), "resourceVersion": resource_version}}


async def delete_object(effect: DeleteObject, ctx: Context) -> EffectResult:
    return await delete(ctx, effect.target, uid=effect.uid, propagation=effect.propagation)


async def delete(ctx: Context, target: ObjectRef, *, uid: str = "", propagation: str = "") -> EffectResult:
    try:
        await ctx.kube.delete(target, uid=uid, propagation=propagation)
    except KubeError as exc:
        if exc.reason == NOT_FOUND or (uid and exc.reason == CONFLICT):
            return results.ok(alreadyGone=True)
        raise
    return results.ok()


async def delete_matching(effect: DeleteMatching, ctx: Context) -> EffectResult:
    deleted = await ctx.kube.delete_matching(effect.kind, effect.namespace, effect.label_selector)
    return results.ok(deleted=deleted)


# -- Events ------------------------------------------------------------------------------------------------


def event_name(effect: EmitEvent) -> str:
    """``<object>.<16 hex>``: the same effect (key and uid) always names the same Event."""
    digest = hashlib.sha256(f"{effect.key}|{effect.uid}".encode()).hexdigest()[:16]
    return f"{effect.target.name[: NAME_LIMIT - 17]}.{digest}"


def timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def event_body(effect: EmitEvent, ctx: Context) -> dict[str, Any]:
    target = effect.target
    now = timestamp(ctx.now())
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name(effect), "namespace": target.namespace},
        "involvedObject": {
            "apiVersion": kubewriting.kind_info(target.kind).api_version,
            "kind": target.kind,
            "namespace": target.namespace,
            "name": target.name,
            "uid": effect.uid,
        },
        "reason": effect.reason,
        "message": effect.message[:EVENT_MESSAGE_LIMIT],
        "type": effect.type,
        "source": {"component": ctx.settings.event_component},
        "reportingComponent": ctx.settings.event_component,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }


async def emit_event(effect: EmitEvent, ctx: Context) -> EffectResult:
    """Create the Event, or count one more on the Event this effect made before."""
    body = event_body(effect, ctx)
    ref = ObjectRef("Event", effect.target.namespace, body["metadata"]["name"])
    for _ in range(EVENT_ATTEMPTS):
        try:
            await ctx.kube.create("Event", ref.namespace, body)
            return results.ok(count=1)
        except KubeError as exc:
            if exc.reason != ALREADY_EXISTS:
                raise
        try:
            live = await ctx.kube.get("Event", ref.namespace, ref.name)
            count = _count(live) + 1
            patch = {
                "metadata": {
                    "resourceVersion": str((live.get("metadata") or {}).get("resourceVersion") or "")
                },
                "count": count,
                "lastTimestamp": body["lastTimestamp"],
                "message": body["message"],
                "type": effect.type,
            }
            await ctx.kube.merge_patch(ref, patch)
            return results.ok(count=count)
        except KubeError as exc:
            if exc.reason not in (NOT_FOUND, CONFLICT):
                raise
    raise KubeError(CONFLICT, f"the Event {ref.namespace}/{ref.name} kept changing; not counted")


def _count(event: Mapping[str, Any]) -> int:
    count = event.get("count")
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1
